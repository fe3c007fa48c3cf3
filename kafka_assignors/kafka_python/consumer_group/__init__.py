"""kafka-python 3 members of KIP-848 consumer groups (``group_protocol="consumer"``).

Turned on by one option of :class:`kafka_assignors.kafka_python.KafkaConsumer`::

    consumer = KafkaConsumer("orders", group_id="billing", bootstrap_servers="broker:9092",
                             group_protocol="consumer", group_remote_assignor="balanced-sticky")

* :mod:`.coordinator`: ``ConsumerProtocolCoordinator``, the member (heartbeats,
  reconciliation, leaving, commits with the member epoch);
* :mod:`.membership`: its state machine (:class:`MemberState`), plain data;
* :mod:`.reconciliation`: what one reconciliation revokes and assigns;
* :mod:`.messages`: ConsumerGroupHeartbeat's message classes; :mod:`.offsets`: OffsetCommit /
  OffsetFetch v9 with the member epoch; :mod:`.config`: the options;
  :mod:`.manifest`: the kafka-python names relied on.
"""

from __future__ import annotations

from typing import Any

from .config import ConsumerProtocol, split_configs
from .errors import ConsumerProtocolUnavailableError
from .membership import MemberState

# the coordinator and the message classes need kafka-python 3: imported where used, so
# this package (and the classic path) still imports on kafka-python 2
__all__ = ["ConsumerProtocol", "ConsumerProtocolUnavailableError", "MemberState", "install",
           "split_configs"]


def heartbeat_version(consumer: Any) -> int:
    """The ConsumerGroupHeartbeat version the consumer's broker and this member share.

    Raises :class:`ConsumerProtocolUnavailableError` if the broker has none: before Kafka
    4.0, or with the consumer protocol turned off (``group.coordinator.rebalance.protocols``
    without ``consumer``), the broker does not offer the API.
    """
    import kafka.errors as Errors

    from .messages import MAX_VERSION, ConsumerGroupHeartbeatRequest

    data = consumer._manager.broker_version_data
    # (a 4.x broker with the protocol turned off still lists the API: its first heartbeat is
    # refused, and poll() raises the same error, with nothing joined)
    try:
        return int(data.api_version(ConsumerGroupHeartbeatRequest, max_version=MAX_VERSION))
    except Errors.IncompatibleBrokerVersion:
        raise ConsumerProtocolUnavailableError(
            f"group_protocol='consumer' needs a broker with the consumer group protocol "
            f"(KIP-848: Apache Kafka 4.0+ with 'consumer' in "
            f"group.coordinator.rebalance.protocols); this broker ({data.broker_version_str}) "
            "does not offer ConsumerGroupHeartbeat. Use group_protocol='classic' (the "
            "default) with it."
        ) from None


def install(consumer: Any, protocol: ConsumerProtocol) -> Any:
    """Make ``consumer``'s coordinator a :class:`ConsumerProtocolCoordinator` (right after
    kafka-python's ``__init__``, before anything joins)."""
    from .coordinator import ConsumerProtocolCoordinator
    from .manifest import missing

    coordinator = consumer._coordinator
    lacking = missing(coordinator)
    if lacking:
        raise ConsumerProtocolUnavailableError(
            "group_protocol='consumer' relies on kafka-python names the installed "
            f"kafka-python lacks or changed: {', '.join(lacking)} (tested: kafka-python "
            "3.0.12)")
    version = heartbeat_version(consumer)
    coordinator.__class__ = ConsumerProtocolCoordinator
    coordinator._init_consumer_protocol(
        remote_assignor=protocol.remote_assignor, rack=consumer.config.get("client_rack"),
        broker_regex=version >= 1)
    if coordinator._metrics is not None:  # metrics_of(consumer) finds them
        from ...metrics import attach

        attach(consumer, coordinator._metrics.metrics)
    return coordinator
