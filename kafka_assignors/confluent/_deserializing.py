"""``DeserializingConsumer``: confluent-kafka's ``DeserializingConsumer`` on our consumers.

confluent-kafka's ``DeserializingConsumer`` is a Python subclass of its ``Consumer``: its
``poll()`` calls ``super().poll()`` and raises ``ConsumeError`` for an error message (a stall
past ``max.poll.interval.ms`` included), then deserializes key and value.  Placed before
the bridge (or the consumer-protocol member) in the class order, its ``super()`` reaches
ours, so it behaves as it does on a plain ``Consumer``: nothing of it is copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import confluent_kafka

from ._broker_assigned import BrokerAssignedConsumer
from ._config import group_protocol
from ._consumer import BridgedConsumer
from ._protocol_choice import Consumer

_Base: Any = confluent_kafka.Consumer
_Deserializing: Any = confluent_kafka.DeserializingConsumer


class DeserializingConsumer(Consumer):
    """confluent-kafka's ``DeserializingConsumer`` (``key.deserializer`` and
    ``value.deserializer`` in the configuration) on our assignors, in either group protocol.
    """

    def __new__(cls, conf: Mapping[str, Any]) -> Any:
        if cls is DeserializingConsumer:
            rest = {k: v for k, v in conf.items() if not k.endswith(".deserializer")}
            cls = (BrokerAssignedDeserializingConsumer if group_protocol(rest) == "consumer"
                   else BridgedDeserializingConsumer)
        return _Base.__new__(cls)


class BridgedDeserializingConsumer(_Deserializing, BridgedConsumer,  # type: ignore[misc]
                                   DeserializingConsumer):
    """:class:`DeserializingConsumer` in a classic group (the bridge)."""


class BrokerAssignedDeserializingConsumer(_Deserializing,  # type: ignore[misc]
                                          BrokerAssignedConsumer,
                                          DeserializingConsumer):
    """:class:`DeserializingConsumer` in a ``group.protocol=consumer`` group."""
