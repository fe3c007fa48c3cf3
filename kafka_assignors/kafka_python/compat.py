"""What differs between kafka-python 2.x and 3.x for an assignor, in one place.

Tested with kafka-python 2.0.2, 2.2.21, 2.3.3 and 3.0.12 (README, "kafka-python versions").

- 3.x: ``RebalanceProtocol`` (KIP-429, eager and cooperative); version-3
  ``ConsumerProtocolSubscription`` (owned partitions, generation, rack);
  ``assign(cluster, [JoinGroupResponseMember])``; ``on_assignment(assignment, generation)``.
- 2.x: eager only, no ``RebalanceProtocol``; version-0 subscriptions (topics and user
  data: ``kafka.coordinator.protocol``); ``assign(cluster, {member_id: metadata})`` where
  the metadata is a ``Subscription`` with ``group_instance_id`` (2.3) or the decoded
  struct (2.0, 2.2, whose topics field is ``subscription``); ``on_assignment(assignment)``
  without the generation (kafka-python's own ``sticky`` gets it through a second hook
  kafka-python calls only for the name ``sticky``).
"""

from __future__ import annotations

import enum
from typing import Any

import kafka


def _version(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split("."):
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


#: The installed kafka-python's version, e.g. (2, 3, 3).
KAFKA_PYTHON_VERSION: tuple[int, ...] = _version(getattr(kafka, "__version__", "0"))
#: True on kafka-python 2.x: eager only, version-0 subscriptions.
KAFKA_PYTHON_2: bool = KAFKA_PYTHON_VERSION < (3,)


class _EagerOnly(enum.IntEnum):
    """Stand-in for kafka-python 3's ``RebalanceProtocol`` (same values) on 2.x."""

    EAGER = 0
    COOPERATIVE = 1


def _rebalance_protocol() -> Any:
    try:
        from kafka.coordinator.assignors.abstract import RebalanceProtocol
    except ImportError:  # kafka-python 2.x
        return _EagerOnly
    return RebalanceProtocol


#: kafka-python 3's ``RebalanceProtocol``, or an enum with the same members on 2.x.
RebalanceProtocol: Any = _rebalance_protocol()


def wire_types() -> tuple[Any, Any]:
    """The installed kafka-python's (subscription, assignment) message classes.

    3.x: ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment`` (keyword or
    positional fields); 2.x: the version-0 structs, built positionally as
    ``(version, topics, user_data)`` and ``(version, [(topic, [partition])], user_data)``.
    """
    if not KAFKA_PYTHON_2:
        from kafka.protocol.consumer.metadata import (
            ConsumerProtocolAssignment,
            ConsumerProtocolSubscription,
        )

        return ConsumerProtocolSubscription, ConsumerProtocolAssignment
    from kafka.coordinator.protocol import ConsumerProtocol

    # a list of versions since 2.3, a class before
    proto = ConsumerProtocol[0] if isinstance(ConsumerProtocol, list) else ConsumerProtocol
    return proto.METADATA, proto.ASSIGNMENT


def subscription_topics(metadata: Any) -> list[str]:
    """A decoded 2.x subscription's topics (``topics`` since 2.3, ``subscription`` before)."""
    topics = getattr(metadata, "topics", None)
    if topics is None:
        topics = getattr(metadata, "subscription", None)
    return list(topics or ())


__all__ = ["KAFKA_PYTHON_2", "KAFKA_PYTHON_VERSION", "RebalanceProtocol", "subscription_topics",
           "wire_types"]
