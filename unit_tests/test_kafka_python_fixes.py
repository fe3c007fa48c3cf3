"""patch_rejoin_hang: the join fix alone, for consumers without our assignors; idempotent; safe."""

from __future__ import annotations

import logging
from typing import Any

from kafka import KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor

from kafka_assignors import patch_rejoin_hang


def _consumer(**config: Any) -> Any:
    """No broker needed: with api_version given, kafka-python connects lazily."""
    return KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                         **config)


def test_a_join_in_flight_keeps_a_range_member_rejoining() -> None:
    consumer = _consumer(partition_assignment_strategy=[RangePartitionAssignor])
    try:
        coordinator = consumer._coordinator
        assert "need_rejoin" not in vars(coordinator)  # not ours: untouched until asked
        assert patch_rejoin_hang(consumer)
        coordinator.rejoin_needed = False
        coordinator.rejoining = True  # JoinGroup sent, the subscription snapshot updated
        assert coordinator.need_rejoin() is True
        coordinator.rejoining = False
        assert coordinator.need_rejoin() is False  # not subscribed: nothing to join
        assert "poll" not in vars(coordinator)  # the join fix only: poll() is kafka-python's
    finally:
        consumer.close()


def test_patching_twice_wraps_once() -> None:
    consumer = _consumer(partition_assignment_strategy=[RangePartitionAssignor])
    try:
        patch_rejoin_hang(consumer)
        first = consumer._coordinator.need_rejoin
        assert patch_rejoin_hang(consumer)
        assert consumer._coordinator.need_rejoin is first
    finally:
        consumer.close()


def test_an_unknown_client_is_left_alone_with_a_warning(caplog: Any) -> None:
    class Other:
        pass

    class Bare:
        _coordinator = object()

    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        assert not patch_rejoin_hang(Other())
        assert not patch_rejoin_hang(Bare())
    assert "not patched" in caplog.text
