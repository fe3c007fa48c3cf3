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

In a classic group (the default) librdkafka has no custom-assignor hook, so a
kafka-python client without fetching holds the group membership (and runs the
assignor when it leads) and tells librdkafka which partitions to fetch
(:class:`BridgedConsumer`).  With ``group.protocol=consumer`` (KIP-848) the broker
assigns: librdkafka is the member, with the strategy mapped to the broker's
``group.remote.assignor`` (:class:`BrokerAssignedConsumer`).  The bridged consumer's
``metrics()`` returns the Java consumer's rebalance metrics and our assignment-quality
ones, in the shape of kafka-python's ``KafkaConsumer.metrics()``.  Requires the
``confluent`` extra.  See ``docs/confluent.md`` for what is supported and what differs.
"""

from __future__ import annotations

from ._broker_assigned import BrokerAssignedConsumer
from ._config import (
    BRIDGE_KEYS,
    MEMBERSHIP_KEYS,
    SHARED_KEYS,
    TRANSLATED_KEYS,
    BridgeConfig,
    translate_config,
)
from ._consumer import BridgedConsumer
from ._consumer_protocol import ConsumerProtocolConfig, translate_consumer_protocol
from ._deserializing import DeserializingConsumer
from ._errors import UnsupportedAssignorError, UnsupportedConfigError
from ._protocol_choice import Consumer
from ._remote_assignors import REMOTE_ASSIGNOR, remote_assignor_for
from ._security import SECURITY_KEYS

__all__ = [
    "BRIDGE_KEYS",
    "MEMBERSHIP_KEYS",
    "REMOTE_ASSIGNOR",
    "SECURITY_KEYS",
    "SHARED_KEYS",
    "TRANSLATED_KEYS",
    "BridgeConfig",
    "BridgedConsumer",
    "BrokerAssignedConsumer",
    "Consumer",
    "ConsumerProtocolConfig",
    "DeserializingConsumer",
    "UnsupportedAssignorError",
    "UnsupportedConfigError",
    "remote_assignor_for",
    "translate_config",
    "translate_consumer_protocol",
]
