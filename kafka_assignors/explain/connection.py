"""Connection settings for the tools: command-line options and Kafka tools' ``client.properties``.

``--command-config client.properties`` takes the file Kafka's own tools take
(``key=value`` lines, Java property names such as ``security.protocol`` or
``sasl.jaas.config``); librdkafka's names (``sasl.username``,
``ssl.ca.location``) are accepted too.  Everything becomes keyword arguments of
kafka-python's ``KafkaAdminClient``.  A security setting that cannot be carried
over is an error, never dropped: the connection is never weaker than asked.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: Java / librdkafka property -> kafka-python keyword.
DIRECT = {
    "bootstrap.servers": "bootstrap_servers",
    "client.id": "client_id",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
    "ssl.ca.location": "ssl_cafile",
    "ssl.cafile": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.crl.location": "ssl_crlfile",
    "request.timeout.ms": "request_timeout_ms",
    "retry.backoff.ms": "retry_backoff_ms",
    "reconnect.backoff.ms": "reconnect_backoff_ms",
    "reconnect.backoff.max.ms": "reconnect_backoff_max_ms",
    "connections.max.idle.ms": "connections_max_idle_ms",
    "metadata.max.age.ms": "metadata_max_age_ms",
    "client.dns.lookup": "client_dns_lookup",
}
INT_KEYS = frozenset(v for k, v in DIRECT.items() if k.endswith(".ms"))
#: Java settings with no effect on a kafka-python admin client: accepted silently.
IGNORED = frozenset({"default.api.timeout.ms", "ssl.protocol", "ssl.enabled.protocols"})
_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


class ConnectionConfigError(ValueError):
    """A connection setting that is malformed or cannot be honoured."""


def parse_properties(text: str) -> dict[str, str]:
    """``key=value`` (or ``key: value``) lines; ``#``/``!`` comments and blank lines skipped."""
    out: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        pending = ""
        if not line or line.startswith(("#", "!")):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]  # a continued line
            continue
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if match is None:
            raise ConnectionConfigError(f"not a key=value line: {raw.strip()!r}")
        out[match.group(1)] = match.group(2).strip()
    return out


def read_properties(path: str | Path) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConnectionConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_properties(text)


def _jaas(value: str) -> dict[str, str]:
    """Username and password of a PLAIN or SCRAM ``sasl.jaas.config`` line."""
    if "PlainLoginModule" not in value and "ScramLoginModule" not in value:
        raise ConnectionConfigError(
            "sasl.jaas.config: only PlainLoginModule and ScramLoginModule can be carried over "
            "to kafka-python; use sasl.username / sasl.password"
        )
    fields = {k: v.replace('\\"', '"') for k, v in _JAAS.findall(value)}
    if "username" not in fields or "password" not in fields:
        raise ConnectionConfigError("sasl.jaas.config: username and password are required")
    return {"sasl_plain_username": fields["username"], "sasl_plain_password": fields["password"]}


def _truststore(props: Mapping[str, str]) -> dict[str, str]:
    location = props.get("ssl.truststore.location")
    if not location:
        return {}
    if props.get("ssl.truststore.type", "JKS").upper() != "PEM":
        raise ConnectionConfigError(
            "ssl.truststore.location: kafka-python cannot read a JKS/PKCS12 truststore; "
            "export the CA as PEM and set ssl.truststore.type=PEM (or ssl.ca.location)"
        )
    return {"ssl_cafile": location}


def to_kwargs(props: Mapping[str, str]) -> dict[str, Any]:
    """kafka-python ``KafkaAdminClient`` keyword arguments for Java/librdkafka properties."""
    out: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in props.items():
        if key in DIRECT:
            name = DIRECT[key]
            out[name] = int(value) if name in INT_KEYS else value
        elif key == "sasl.jaas.config":
            out.update(_jaas(value))
        elif key == "ssl.endpoint.identification.algorithm":
            out["ssl_check_hostname"] = value.strip().lower() == "https"
        elif key in ("ssl.truststore.location", "ssl.truststore.type"):
            out.update(_truststore(props))
        elif key.startswith(("ssl.keystore.", "ssl.truststore.password")):
            if key == "ssl.truststore.password" and props.get("ssl.truststore.type") == "PEM":
                continue
            raise ConnectionConfigError(
                f"{key}: kafka-python needs PEM files: use ssl.certificate.location, "
                "ssl.key.location and ssl.key.password"
            )
        elif key in IGNORED:
            continue
        elif key.startswith(("ssl.", "sasl.", "security.")):
            raise ConnectionConfigError(f"{key}: this security setting is not supported")
        else:
            unknown.append(key)
    if "security_protocol" in out:
        out["security_protocol"] = str(out["security_protocol"]).upper()
    if "sasl_mechanism" in out:
        out["sasl_mechanism"] = str(out["sasl_mechanism"]).upper()
    if unknown:
        out["_ignored"] = sorted(unknown)
    return out


def add_security_options(parser: argparse.ArgumentParser) -> None:
    """``--command-config`` and the SASL/SSL options (shared by explain and the pipeline)."""
    g = parser.add_argument_group("security (SASL / SSL)")
    from .._cli_args import existing_file_name

    g.add_argument(
        "--command-config",
        type=existing_file_name,
        metavar="FILE",
        help="client.properties as Kafka's tools take it (Java or librdkafka names)",
    )
    g.add_argument(
        "--security-protocol", choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    )
    g.add_argument(
        "--sasl-mechanism",
        choices=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI"],
        help="default PLAIN when the protocol is SASL_*",
    )
    g.add_argument("--sasl-username")
    g.add_argument("--sasl-password")
    g.add_argument(
        "--ssl-cafile", type=existing_file_name, metavar="PEM", help="CA certificate(s) to trust"
    )
    g.add_argument(
        "--ssl-certfile",
        type=existing_file_name,
        metavar="PEM",
        help="client certificate (mutual TLS)",
    )
    g.add_argument(
        "--ssl-keyfile",
        type=existing_file_name,
        metavar="PEM",
        help="client private key (mutual TLS)",
    )
    g.add_argument("--ssl-password", help="password of the client private key")


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap``, the security options and ``--command-config``, ``--timeout``."""
    from .._cli_args import bootstrap_servers, positive

    g = parser.add_argument_group("connection")
    g.add_argument(
        "--bootstrap", type=bootstrap_servers, metavar="HOST:PORT[,...]", help="bootstrap servers"
    )
    g.add_argument(
        "--timeout",
        type=positive,
        default=15.0,
        help="seconds for connecting and each request, above 0 (15)",
    )
    add_security_options(parser)


_OPTION_KEYS = (
    ("security_protocol", "security_protocol"),
    ("sasl_mechanism", "sasl_mechanism"),
    ("sasl_username", "sasl_plain_username"),
    ("sasl_password", "sasl_plain_password"),
    ("ssl_cafile", "ssl_cafile"),
    ("ssl_certfile", "ssl_certfile"),
    ("ssl_keyfile", "ssl_keyfile"),
    ("ssl_password", "ssl_password"),
)
#: The kafka-python keywords that make up "how to connect securely" (valid for the admin
#: client, the producer and the consumer alike).
SECURITY_KEYS = frozenset(
    {
        "security_protocol",
        "sasl_mechanism",
        "sasl_plain_username",
        "sasl_plain_password",
        "sasl_kerberos_service_name",
        "ssl_cafile",
        "ssl_certfile",
        "ssl_keyfile",
        "ssl_password",
        "ssl_crlfile",
        "ssl_check_hostname",
    }
)


def settings_from_args(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """(kafka-python kwargs from ``--command-config`` and the security options, ignored
    property names): the file first, options override it; SASL defaults to PLAIN."""
    command_config = getattr(args, "command_config", None)
    props = read_properties(command_config) if command_config else {}
    kwargs = to_kwargs(props)
    ignored: list[str] = kwargs.pop("_ignored", [])
    for attr, name in _OPTION_KEYS:
        value = getattr(args, attr, None)
        if value is not None:
            kwargs[name] = value
    protocol = str(kwargs.get("security_protocol", "PLAINTEXT"))
    if protocol.startswith("SASL_") and "sasl_mechanism" not in kwargs:
        kwargs["sasl_mechanism"] = "PLAIN"
    return kwargs, ignored


def security_kwargs(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """(the security keywords of :func:`settings_from_args`, valid for any kafka-python
    client; the names of every other setting given, which a caller that only connects
    securely ignores)."""
    kwargs, ignored = settings_from_args(args)
    security = {k: v for k, v in kwargs.items() if k in SECURITY_KEYS}
    return security, ignored + sorted(k for k in kwargs if k not in SECURITY_KEYS)


def connection_kwargs(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """(admin client kwargs, ignored property names): the file first, options override it."""
    kwargs, ignored = settings_from_args(args)
    if args.bootstrap:
        kwargs["bootstrap_servers"] = args.bootstrap
    if not kwargs.get("bootstrap_servers"):
        raise ConnectionConfigError("no bootstrap servers: give --bootstrap or bootstrap.servers")
    kwargs["bootstrap_servers"] = _servers(str(kwargs["bootstrap_servers"]).split(","))
    timeout_ms = int(float(args.timeout) * 1000)
    kwargs.setdefault("request_timeout_ms", timeout_ms)
    kwargs.setdefault("bootstrap_timeout_ms", timeout_ms)
    kwargs.setdefault("client_id", "kafka-assignors-explain")
    return kwargs, ignored


_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def java_properties(kwargs: Mapping[str, Any]) -> dict[str, str]:
    """The Java client properties for kafka-python security keywords (the reverse of
    :func:`to_kwargs`), for Spark's Kafka source (prefix them with ``kafka.``).

    PEM files are given as Java's PEM stores: the CA file as a PEM truststore; a client
    certificate and key as a PEM keystore whose certificate chain and key are read from
    the files (Java cannot take separate certificate and key files).
    """
    out: dict[str, str] = {}
    protocol = kwargs.get("security_protocol")
    if protocol:
        out["security.protocol"] = str(protocol)
    mechanism = kwargs.get("sasl_mechanism")
    if mechanism:
        out["sasl.mechanism"] = str(mechanism)
        user, password = kwargs.get("sasl_plain_username"), kwargs.get("sasl_plain_password")
        if mechanism in _LOGIN_MODULES and user is not None and password is not None:
            out["sasl.jaas.config"] = (
                f"{_LOGIN_MODULES[mechanism]} required username={_quoted(str(user))} "
                f"password={_quoted(str(password))};"
            )
    if kwargs.get("sasl_kerberos_service_name"):
        out["sasl.kerberos.service.name"] = str(kwargs["sasl_kerberos_service_name"])
    if kwargs.get("ssl_cafile"):
        out["ssl.truststore.type"] = "PEM"
        out["ssl.truststore.location"] = str(kwargs["ssl_cafile"])
    cert, key = kwargs.get("ssl_certfile"), kwargs.get("ssl_keyfile")
    if cert or key:
        if not (cert and key):
            raise ConnectionConfigError(
                "Spark's Kafka source needs both the client certificate and its key "
                "(--ssl-certfile and --ssl-keyfile)"
            )
        out["ssl.keystore.type"] = "PEM"
        out["ssl.keystore.certificate.chain"] = _read_pem(str(cert))
        out["ssl.keystore.key"] = _read_pem(str(key))
        if kwargs.get("ssl_password"):
            out["ssl.key.password"] = str(kwargs["ssl_password"])
    if kwargs.get("ssl_crlfile"):
        raise ConnectionConfigError("ssl.crl.location: Java's client has no CRL file setting")
    if kwargs.get("ssl_check_hostname") is False:
        out["ssl.endpoint.identification.algorithm"] = ""
    return out


def _read_pem(path: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii")
    except OSError as exc:
        raise ConnectionConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def _servers(items: Iterable[str]) -> list[str]:
    return [s.strip() for s in items if s.strip()]
