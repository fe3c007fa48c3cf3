"""Our assignors for confluent-kafka consumers, through a membership bridge.

Usage::

    from kafka_assignors.confluent import Consumer

    consumer = Consumer({
        "bootstrap.servers": "broker:9092",
        "group.id": "orders",
        "partition.assignment.strategy": "cooperative-balanced-sticky",
    })
    consumer.subscribe(["orders"])
    while True:
        msg = consumer.poll(1.0)

librdkafka has no custom-assignor hook, so a kafka-python client without
fetching holds the group membership (and runs the assignor when it leads) and
tells librdkafka which partitions to fetch.  Requires the ``confluent`` extra.
See ``docs/confluent.md`` for what is supported and what differs.
"""

from __future__ import annotations

from ._config import (
    BRIDGE_KEYS,
    MEMBERSHIP_KEYS,
    SHARED_KEYS,
    TRANSLATED_KEYS,
    BridgeConfig,
    translate_config,
)
from ._consumer import BridgedConsumer
from ._errors import UnsupportedConfigError
from ._security import SECURITY_KEYS

#: Drop-in name: ``from kafka_assignors.confluent import Consumer``.
Consumer = BridgedConsumer

__all__ = [
    "BRIDGE_KEYS",
    "MEMBERSHIP_KEYS",
    "SECURITY_KEYS",
    "SHARED_KEYS",
    "TRANSLATED_KEYS",
    "BridgeConfig",
    "BridgedConsumer",
    "Consumer",
    "UnsupportedConfigError",
    "translate_config",
]
