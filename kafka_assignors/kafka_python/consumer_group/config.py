"""The two options that choose the group protocol, and what the consumer protocol refuses.

``group_protocol`` and ``group_remote_assignor`` are the Java consumer's ``group.protocol``
and ``group.remote.assignor``.  kafka-python rejects options it does not know, so
:func:`split_configs` takes them out before kafka-python sees the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka.errors import KafkaConfigurationError

CLASSIC = "classic"
CONSUMER = "consumer"
#: options the broker decides for a consumer-protocol group (Java refuses them there too)
BROKER_SIDE = {
    "partition_assignment_strategy": "the broker assigns: choose its assignor with "
                                     "group_remote_assignor (e.g. 'balanced-sticky', 'uniform')",
    "session_timeout_ms": "the broker's group.consumer.session.timeout.ms sets it",
    "heartbeat_interval_ms": "the broker's group.consumer.heartbeat.interval.ms sets it",
}


@dataclass(frozen=True)
class ConsumerProtocol:
    """``group_protocol="consumer"`` was asked for; ``remote_assignor`` None: the broker's
    default assignor (the first of its ``group.consumer.assignors``)."""

    remote_assignor: str | None


def split_configs(configs: dict[str, Any]) -> tuple[dict[str, Any], ConsumerProtocol | None]:
    """``configs`` without the two options, and the consumer protocol if it was asked for.

    Raises ``KafkaConfigurationError`` for an unknown protocol, ``group_remote_assignor``
    with the classic protocol, and an option of :data:`BROKER_SIDE` with the consumer one.
    """
    rest = dict(configs)
    protocol = str(rest.pop("group_protocol", CLASSIC) or CLASSIC).lower()
    remote = rest.pop("group_remote_assignor", None)
    if protocol not in (CLASSIC, CONSUMER):
        raise KafkaConfigurationError(
            f"group_protocol must be 'classic' or 'consumer', not {protocol!r}")
    if protocol == CLASSIC:
        if remote:
            raise KafkaConfigurationError(
                "group_remote_assignor cannot be set when group_protocol='classic'")
        return rest, None
    for key, why in BROKER_SIDE.items():
        if key in rest:
            raise KafkaConfigurationError(
                f"{key} cannot be set when group_protocol='consumer': {why}")
    if rest.get("group_id") is None:
        raise KafkaConfigurationError("group_protocol='consumer' needs a group_id")
    return rest, ConsumerProtocol(str(remote) if remote else None)
