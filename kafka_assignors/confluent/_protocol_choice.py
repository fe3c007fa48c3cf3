"""``Consumer``: the bridge for classic groups, librdkafka itself for consumer-protocol ones.

``Consumer(config)`` builds a :class:`BridgedConsumer` (``group.protocol=classic``, the
default: our assignor runs in the client) or a :class:`BrokerAssignedConsumer`
(``group.protocol=consumer``, KIP-848: the broker assigns).  Both are subclasses of this
class and of ``confluent_kafka.Consumer``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import confluent_kafka

from ._config import group_protocol

_Base: Any = confluent_kafka.Consumer


def given_config(config: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as confluent-kafka takes it: a dict, keywords, or both (keywords
    win); neither is confluent-kafka's ``TypeError``."""
    if config is None and not kwargs:
        raise TypeError("expected configuration dict")
    if config is not None and not isinstance(config, Mapping):
        raise TypeError("expected configuration dict")
    return {**(config or {}), **kwargs}


class Consumer(_Base):  # type: ignore[misc]
    """A confluent-kafka ``Consumer`` on our assignors, in either group protocol."""

    def __new__(cls, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        if cls is Consumer:  # choose the implementation; a subclass named itself
            if group_protocol(given_config(config, kwargs)) == "consumer":
                from ._broker_assigned import BrokerAssignedConsumer

                cls = BrokerAssignedConsumer
            else:
                from ._consumer import BridgedConsumer

                cls = BridgedConsumer
        return _Base.__new__(cls)
