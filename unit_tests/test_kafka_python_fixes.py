"""patch_rejoin_hang: a join in progress counts as needing a rejoin; idempotent; safe no-op."""

from __future__ import annotations

import logging
from typing import Any

from kafka import KafkaConsumer

from kafka_assignors import patch_rejoin_hang


class FakeCoordinator:
    """kafka-python 3's shape: need_rejoin() and a 'rejoining' flag."""

    def __init__(self) -> None:
        self.rejoining = False
        self.rejoin_needed = False

    def need_rejoin(self) -> bool:
        return self.rejoin_needed


class FakeConsumer:
    def __init__(self, coordinator: Any) -> None:
        self._coordinator = coordinator


def test_a_join_in_flight_keeps_the_member_rejoining() -> None:
    coordinator = FakeCoordinator()
    assert patch_rejoin_hang(FakeConsumer(coordinator))
    assert coordinator.need_rejoin() is False  # nothing to do
    coordinator.rejoining = True  # JoinGroup sent, the subscription snapshot already updated
    assert coordinator.need_rejoin() is True
    coordinator.rejoining = False
    coordinator.rejoin_needed = True
    assert coordinator.need_rejoin() is True


def test_patching_twice_wraps_once() -> None:
    coordinator = FakeCoordinator()
    consumer = FakeConsumer(coordinator)
    patch_rejoin_hang(consumer)
    first = coordinator.need_rejoin
    assert patch_rejoin_hang(consumer)
    assert coordinator.need_rejoin is first


def test_an_unknown_client_is_left_alone_with_a_warning(caplog: Any) -> None:
    class Other:
        pass

    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        assert not patch_rejoin_hang(Other())
        assert not patch_rejoin_hang(FakeConsumer(object()))
    assert "not patched" in caplog.text


def test_kafka_python_3_coordinator_has_what_the_patch_needs() -> None:
    """Guards the private names the patch relies on against a kafka-python upgrade."""
    from kafka.coordinator.base import BaseCoordinator

    assert callable(BaseCoordinator.need_rejoin)
    assert "rejoining" in BaseCoordinator.__init__.__code__.co_names
    assert "_coordinator" in KafkaConsumer.__init__.__code__.co_names


def test_a_real_kafka_python_consumer_is_patched() -> None:
    """No broker needed: with api_version given, kafka-python connects lazily."""
    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g")
    try:
        assert patch_rejoin_hang(consumer)
        coordinator = consumer._coordinator
        coordinator.rejoining = True
        assert coordinator.need_rejoin() is True
        coordinator.rejoining = False
    finally:
        consumer.close()
