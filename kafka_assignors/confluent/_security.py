"""librdkafka security settings turned into kafka-python's, never weaker than configured.

The membership client talks to the same brokers as the confluent-kafka
consumer, so it must authenticate and encrypt the same way.  A security key
that cannot be reproduced exactly is an error, never silently dropped.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from typing import Any

from ._errors import UnsupportedConfigError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI")

#: Security keys translated for the membership client (they also go to librdkafka).
SECURITY_KEYS = frozenset({
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.username",
    "sasl.password",
    "sasl.kerberos.service.name",
    "ssl.ca.location",
    "ssl.ca.pem",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.crl.location",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
    "enable.ssl.certificate.verification",
})
_SECURITY_PREFIXES = ("security.", "ssl.", "ssl_", "sasl.", "enable.ssl.", "enable.sasl.", "oauth")


def is_security_key(key: str) -> bool:
    return key.startswith(_SECURITY_PREFIXES)


def as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise UnsupportedConfigError(f"{key}: expected true or false, got {value!r}")


def translate_security(conf: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python ``KafkaConsumer`` keyword arguments for the security keys in ``conf``."""
    unknown = sorted(k for k in conf if is_security_key(k) and k not in SECURITY_KEYS)
    if unknown:
        raise UnsupportedConfigError(
            f"security settings {unknown} cannot be given to the membership client "
            f"(kafka-python); supported: {sorted(SECURITY_KEYS)}"
        )
    protocol = str(conf.get("security.protocol", "plaintext")).upper()
    if protocol not in PROTOCOLS:
        raise UnsupportedConfigError(f"security.protocol {protocol!r}: use one of {PROTOCOLS}")
    out: dict[str, Any] = {"security_protocol": protocol}
    if protocol.startswith("SASL_"):
        out.update(_sasl(conf))
    elif any(k.startswith("sasl.") for k in conf):
        raise UnsupportedConfigError(f"sasl.* settings given but security.protocol is {protocol}")
    if protocol.endswith("SSL"):
        out["ssl_context"] = ssl_context(conf)
    return out


def _sasl(conf: Mapping[str, Any]) -> dict[str, Any]:
    both = {conf.get("sasl.mechanism"), conf.get("sasl.mechanisms")} - {None}
    if len(both) > 1:
        raise UnsupportedConfigError(f"sasl.mechanism and sasl.mechanisms disagree: {both}")
    mechanism = str(both.pop() if both else "GSSAPI").upper()  # librdkafka's default
    if mechanism not in MECHANISMS:
        raise UnsupportedConfigError(
            f"sasl.mechanism {mechanism!r} is not supported by the bridge; use one of {MECHANISMS}"
        )
    out: dict[str, Any] = {"sasl_mechanism": mechanism}
    if mechanism == "GSSAPI":
        out["sasl_kerberos_service_name"] = str(conf.get("sasl.kerberos.service.name", "kafka"))
    else:
        if "sasl.username" not in conf or "sasl.password" not in conf:
            raise UnsupportedConfigError(f"sasl.mechanism {mechanism} needs sasl.username and "
                                         "sasl.password")
        out["sasl_plain_username"] = str(conf["sasl.username"])
        out["sasl_plain_password"] = str(conf["sasl.password"])
    return out


def ssl_context(conf: Mapping[str, Any]) -> ssl.SSLContext:
    """The TLS context librdkafka would use: same trust, client certificate, checks and ciphers."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    verify = as_bool("enable.ssl.certificate.verification",
                     conf.get("enable.ssl.certificate.verification", True))
    algorithm = str(conf.get("ssl.endpoint.identification.algorithm", "https")).lower()
    if algorithm not in ("https", "none"):
        raise UnsupportedConfigError(
            f"ssl.endpoint.identification.algorithm {algorithm!r}: use https or none"
        )
    # the order matters: check_hostname must be off before verification can be
    ctx.check_hostname = verify and algorithm == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE

    location = conf.get("ssl.ca.location")
    if location is None or str(location) == "probe":
        ctx.load_default_certs()
    elif os.path.isdir(str(location)):
        ctx.load_verify_locations(capath=str(location))
    elif os.path.isfile(str(location)):
        ctx.load_verify_locations(cafile=str(location))
    else:
        raise UnsupportedConfigError(f"ssl.ca.location {location!r} is not a file or directory")
    if "ssl.ca.pem" in conf:
        ctx.load_verify_locations(cadata=str(conf["ssl.ca.pem"]))

    cert, key = conf.get("ssl.certificate.location"), conf.get("ssl.key.location")
    if (cert is None) != (key is None):
        raise UnsupportedConfigError(
            "ssl.certificate.location and ssl.key.location must be given together"
        )
    if cert is not None:
        password = conf.get("ssl.key.password")
        ctx.load_cert_chain(str(cert), str(key), None if password is None else str(password))

    crl = conf.get("ssl.crl.location")
    if crl is not None:
        ctx.load_verify_locations(cafile=str(crl))
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if "ssl.cipher.suites" in conf:
        ctx.set_ciphers(str(conf["ssl.cipher.suites"]))
    return ctx
