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


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap``, the security options and ``--command-config``."""
    g = parser.add_argument_group("connection")
    g.add_argument("--bootstrap", metavar="HOST:PORT[,...]", help="bootstrap servers")
    g.add_argument("--command-config", metavar="FILE", help="client.properties (Kafka tools)")
    g.add_argument(
        "--security-protocol", choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    )
    g.add_argument(
        "--sasl-mechanism", choices=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI"]
    )
    g.add_argument("--sasl-username")
    g.add_argument("--sasl-password")
    g.add_argument("--ssl-cafile", metavar="PEM")
    g.add_argument("--ssl-certfile", metavar="PEM")
    g.add_argument("--ssl-keyfile", metavar="PEM")
    g.add_argument("--ssl-password")
    g.add_argument(
        "--timeout", type=float, default=15.0, help="seconds for connecting and each request (15)"
    )


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


def connection_kwargs(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """(admin client kwargs, ignored property names): the file first, options override it."""
    props = read_properties(args.command_config) if args.command_config else {}
    kwargs = to_kwargs(props)
    ignored: list[str] = kwargs.pop("_ignored", [])
    if args.bootstrap:
        kwargs["bootstrap_servers"] = args.bootstrap
    for attr, name in _OPTION_KEYS:
        value = getattr(args, attr, None)
        if value is not None:
            kwargs[name] = value
    if not kwargs.get("bootstrap_servers"):
        raise ConnectionConfigError("no bootstrap servers: give --bootstrap or bootstrap.servers")
    kwargs["bootstrap_servers"] = _servers(str(kwargs["bootstrap_servers"]).split(","))
    timeout_ms = int(float(args.timeout) * 1000)
    kwargs.setdefault("request_timeout_ms", timeout_ms)
    kwargs.setdefault("bootstrap_timeout_ms", timeout_ms)
    kwargs.setdefault("client_id", "kafka-assignors-explain")
    protocol = str(kwargs.get("security_protocol", "PLAINTEXT"))
    if protocol.startswith("SASL_") and "sasl_mechanism" not in kwargs:
        kwargs["sasl_mechanism"] = "PLAIN"
    return kwargs, ignored


def _servers(items: Iterable[str]) -> list[str]:
    return [s.strip() for s in items if s.strip()]
