"""The opt-in aiokafka runtime: cooperative rebalancing (KIP-429) for aiokafka consumers.

``kafka_assignors.aiokafka.AIOKafkaConsumer`` (:mod:`.consumer`) puts
:class:`~.coordinator.CooperativeGroupCoordinator` in place of aiokafka's coordinator;
:mod:`.manifest` lists every aiokafka internal they rely on. A plain
``aiokafka.AIOKafkaConsumer`` is never changed.
"""

from .consumer import AIOKafkaConsumer, cooperative_protocol
from .manifest import MissingInternals

__all__ = ["AIOKafkaConsumer", "MissingInternals", "cooperative_protocol"]
