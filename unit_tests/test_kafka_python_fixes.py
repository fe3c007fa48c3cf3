"""patch_rejoin_hang: the join fix alone, for consumers without our assignors; idempotent; safe;
the same class and counts with kafka_assignors.metrics.instrument in either order."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.base import Generation, MemberState
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.future import Future
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from kafka_assignors import patch_rejoin_hang
from kafka_assignors.kafka_python import runtime
from kafka_assignors.metrics import COORDINATOR_GROUP, instrument

REFUSED = runtime.kafka_python_version() in runtime.REFUSED_RELEASES


def _consumer(**config: Any) -> Any:
    """No broker needed: with api_version given, kafka-python connects lazily."""
    return KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                         **config)


@pytest.mark.skipif(REFUSED, reason="a release the runtime refuses")
def test_a_join_in_flight_keeps_a_range_member_rejoining() -> None:
    consumer = _consumer(partition_assignment_strategy=[RangePartitionAssignor])
    try:
        coordinator = consumer._coordinator
        assert runtime.runtime_status(coordinator) is None  # not ours: untouched until asked
        assert patch_rejoin_hang(consumer)
        status = runtime.runtime_status(coordinator)
        assert status is not None and status.join_fix and not status.keep_reading
        coordinator.rejoin_needed = False
        coordinator.rejoining = True  # JoinGroup sent, the subscription snapshot updated
        assert coordinator.need_rejoin() is True
        coordinator.rejoining = False
        assert coordinator.need_rejoin() is False  # not subscribed: nothing to join
        assert "poll" not in vars(type(coordinator))  # the join fix only: kafka-python's poll
    finally:
        consumer.close()


def test_patching_twice_patches_once() -> None:
    consumer = _consumer(partition_assignment_strategy=[RangePartitionAssignor])
    try:
        first = patch_rejoin_hang(consumer)
        cls = type(consumer._coordinator)
        assert patch_rejoin_hang(consumer) is first
        assert type(consumer._coordinator) is cls
    finally:
        consumer.close()


def test_a_refused_release_is_refused_by_patch_rejoin_hang_too(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """The same release check as the runtime's KafkaConsumer: nothing changes, one warning."""
    monkeypatch.setattr(runtime, "kafka_python_version", lambda: "3.0.1")
    consumer = _consumer(partition_assignment_strategy=[RangePartitionAssignor])
    try:
        with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
            assert not patch_rejoin_hang(consumer)
        assert "3.0.2 or later" in caplog.text
        assert type(consumer._coordinator).__name__ == "ConsumerCoordinator"
    finally:
        consumer.close()


def _one_replayed_round_trip(consumer: Any, monkeypatch: pytest.MonkeyPatch) -> float:
    """A round trip completes once and the join fix replays its result: rebalance-total."""
    from kafka.coordinator.base import BaseCoordinator

    assignment = ConsumerProtocolAssignment(version=0, assigned_partitions=[],
                                            user_data=b"").encode()

    async def answered(self: Any) -> Any:
        return assignment

    monkeypatch.setattr(BaseCoordinator, "_do_join_and_sync_async", answered)
    coordinator = consumer._coordinator
    coordinator.coordinator_unknown = lambda: False
    consumer.subscribe(["t"])
    result = consumer._net.run(coordinator._do_join_and_sync_async)  # the round trip
    coordinator.rejoining, coordinator.state = True, MemberState.REBALANCING
    coordinator._generation = Generation(4, "m", "range")
    coordinator._join_task = Future().success(result)  # finished while no poll waited
    assert consumer._net.run(coordinator.join_group_async, 0) is True  # the replay
    coordinator.coordinator_unknown = lambda: True
    return float(consumer.metrics()[COORDINATOR_GROUP]["rebalance-total"])


@pytest.mark.skipif(REFUSED, reason="a release the runtime refuses")
@pytest.mark.parametrize("patch_first", [True, False])
def test_either_order_with_instrument_gives_the_same_class_and_counts(
    patch_first: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """patch_rejoin_hang then instrument, or instrument then patch_rejoin_hang: the same
    coordinator class, and a result the join fix replays counts as one rebalance."""
    consumer = _consumer(partition_assignment_strategy=[RangePartitionAssignor])
    try:
        if patch_first:
            assert patch_rejoin_hang(consumer)
            assert instrument(consumer) is not None
        else:
            assert instrument(consumer) is not None
            assert patch_rejoin_hang(consumer)
        expected = runtime.coordinator_class(ConsumerCoordinator, {"join_fix", "metrics"})
        assert type(consumer._coordinator) is expected
        assert _one_replayed_round_trip(consumer, monkeypatch) == 1.0
    finally:
        consumer.close(autocommit=False)


def test_an_unknown_client_is_left_alone_with_a_warning(caplog: Any) -> None:
    class Other:
        pass

    class Bare:
        _coordinator = object()

    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        assert not patch_rejoin_hang(Other())
        assert not patch_rejoin_hang(Bare())
    assert "not patched" in caplog.text
