"""Read which assignors a broker has (``group.consumer.assignors``) with an admin client."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._remote_assignors import assignor_names

#: Keys an admin client needs to reach the same cluster the same way as the consumer.
_CONNECTION_PREFIXES = ("security.", "sasl.", "ssl.", "socket.", "broker.")
_CONNECTION_KEYS = frozenset({
    "bootstrap.servers", "metadata.broker.list", "client.id", "client.dns.lookup",
    "enable.ssl.certificate.verification", "oauth_cb",
})
DESCRIBE_TIMEOUT_S = 10.0


def connection_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The connection and security part of a consumer config (for an ``AdminClient``)."""
    return {
        k: v for k, v in config.items()
        if k in _CONNECTION_KEYS or k.startswith(_CONNECTION_PREFIXES)
    }


def broker_assignors(config: Mapping[str, Any], timeout_s: float = DESCRIBE_TIMEOUT_S
                     ) -> list[str] | str:
    """The assignor names a broker of the cluster offers, or why they could not be read."""
    import confluent_kafka.admin

    ck: Any = confluent_kafka.admin  # its stubs do not re-export ConfigResource, ResourceType
    try:
        admin = ck.AdminClient(connection_config(config))
        brokers = sorted(admin.list_topics(timeout=timeout_s).brokers)
        if not brokers:
            return "no broker in the cluster metadata"
        resource = ck.ConfigResource(ck.ResourceType.BROKER, str(brokers[0]))
        future = admin.describe_configs([resource], request_timeout=timeout_s)[resource]
        entry = future.result(timeout=timeout_s).get("group.consumer.assignors")
    except Exception as exc:  # any failure is reported in the error message, not raised
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if entry is None or entry.value is None:
        return "the broker has no group.consumer.assignors setting (Kafka before 4.0?)"
    return assignor_names(str(entry.value))
