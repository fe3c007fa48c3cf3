"""The kafka-python metrics hooks: which coordinator events they record, on a fake clock
(a plain fake coordinator with kafka-python's method names), and their installation on real
kafka-python consumers (no broker: api_version given)."""

from __future__ import annotations

import asyncio
import math
from abc import ABC
from dataclasses import dataclass, field
from typing import Any

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.metrics import MetricConfig, Metrics

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer as RuntimeConsumer
from kafka_assignors.kafka_python.runtime import metrics as hooks
from kafka_assignors.metrics import (
    ATTRIBUTE,
    COORDINATOR_GROUP,
    QUALITY_GROUP,
    instrument,
    metrics_of,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Generation:
    lost: bool = False

    def is_lost(self) -> bool:
        return self.lost


@dataclass
class Subscription:
    held: set[tuple[str, int]] = field(default_factory=set)

    def assigned_partitions(self) -> set[tuple[str, int]]:
        return set(self.held)


@dataclass
class Report:
    moved: int = 2
    pending_second_round: int = 1
    count_spread: int = 0
    topic_spread: int = 0
    seconds: float = 0.01


class FakeCoordinator(ABC):  # noqa: B024 - kafka-python's BaseCoordinator's root, as the runtime needs
    """kafka-python 3's names, with steps the test scripts."""

    group_id = "g"

    def __init__(self, clock: Clock, registry: Metrics | None) -> None:
        self.clock = clock
        self.config: dict[str, Any] = {"metrics": registry, "metric_group_prefix": "consumer"}
        self._subscription = Subscription()
        self._generation = Generation()
        self.round_trip_s = 0.0
        self.round_trip_error: BaseException | None = None
        self.poll_script: list[tuple[float, bool]] = []  # (seconds inside, ready)
        self.listener_error: Exception | None = None

    async def _do_join_and_sync_async(self) -> bytes:
        self.clock.now += self.round_trip_s
        if self.round_trip_error is not None:
            raise self.round_trip_error
        return b"assignment"

    async def _invoke_rebalance_listener_async(self, method_name: str, arg: Any) -> None:
        self.clock.now += 0.25
        if self.listener_error is not None:
            raise self.listener_error

    def _perform_assignment(self, leader_id: str, protocol: str, members: Any) -> dict[str, Any]:
        return {}

    def _lookup_assignor(self, name: str) -> Any:
        return None

    async def _on_join_prepare_async(self, generation: int, member_id: str,
                                     timeout_ms: float | None = None) -> None:
        self.clock.now += 0.1

    async def _on_join_complete_async(self, generation: int, member_id: str, protocol: str,
                                      assignment: bytes) -> None:
        self._subscription.held = self.next_held

    next_held: set[tuple[str, int]] = set()

    def poll(self, timeout_ms: float | None = None) -> bool:
        seconds, ready = self.poll_script.pop(0)
        self.clock.now += seconds
        return ready


def _installed(clock: Clock) -> tuple[FakeCoordinator, Any]:
    coordinator = FakeCoordinator(clock, Metrics(MetricConfig(tags={"client-id": "c"})))
    metrics = hooks.install(coordinator, clock)
    assert metrics is not None
    return coordinator, metrics


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_round_trips_start_succeed_and_fail_as_java_counts_them() -> None:
    """A round trip starts a rebalance, its success records the latency since the first start,
    its error counts a failed rebalance; a cancelled one counts neither way."""
    clock = Clock()
    coordinator, metrics = _installed(clock)
    coordinator.round_trip_s = 0.5
    coordinator.round_trip_error = RuntimeError("REBALANCE_IN_PROGRESS")
    with pytest.raises(RuntimeError):
        _run(coordinator._do_join_and_sync_async())
    coordinator.round_trip_error = None
    assert _run(coordinator._do_join_and_sync_async()) == b"assignment"
    coordinator.round_trip_error = asyncio.CancelledError()
    with pytest.raises(asyncio.CancelledError):
        _run(coordinator._do_join_and_sync_async())
    values = metrics.values()[COORDINATOR_GROUP]
    assert values["rebalance-total"] == 1
    assert values["failed-rebalance-total"] == 1
    assert values["rebalance-latency-max"] == pytest.approx(1000.0)  # both round trips


def test_listener_calls_are_timed_by_kind_and_failures_are_not_recorded() -> None:
    """on_partitions_* calls land in their own sensor; a raising listener is not recorded and
    its exception goes on to kafka-python."""
    clock = Clock()
    coordinator, metrics = _installed(clock)
    _run(coordinator._invoke_rebalance_listener_async("on_partitions_assigned", set()))
    coordinator.listener_error = ValueError("user")
    with pytest.raises(ValueError):
        _run(coordinator._invoke_rebalance_listener_async("on_partitions_revoked", set()))
    values = metrics.values()[COORDINATOR_GROUP]
    assert values["partition-assigned-latency-max"] == pytest.approx(250.0)
    assert values["partition-revoked-latency-max"] == -math.inf


def test_the_leader_records_its_assignors_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """After kafka-python's _perform_assignment, our assignor's report for this consumer is
    recorded; another assignor's assignment records nothing."""
    clock = Clock()
    coordinator, metrics = _installed(clock)
    coordinator._perform_assignment("me", "range", [])
    assert metrics.values()[QUALITY_GROUP]["assignments-total"] == 0
    ours = BalancedStickyAssignor()
    monkeypatch.setattr(coordinator, "_lookup_assignor", lambda name: ours)
    monkeypatch.setattr(ours, "report_for", lambda c: Report() if c is coordinator else None)
    coordinator._perform_assignment("me", "balanced-sticky", [])
    values = metrics.values()[QUALITY_GROUP]
    assert values["assignments-total"] == 1
    assert values["partitions-moved-last"] == 2 and values["partitions-withheld-last"] == 1


def _rebalance(coordinator: FakeCoordinator, keep: set[tuple[str, int]]) -> None:
    coordinator.next_held = keep
    _run(coordinator._on_join_prepare_async(1, "m"))
    _run(coordinator._on_join_complete_async(2, "m", "p", b""))


def test_eager_pause_runs_from_the_preparing_poll_to_the_first_ready_one() -> None:
    """Eager: polls are not ready from the one that prepares to the take-up; the kept
    partitions' pause spans them all, application time between them included."""
    clock = Clock()
    coordinator, metrics = _installed(clock)
    coordinator._subscription.held = {("t", 0), ("t", 1)}
    coordinator.poll_script = [(0.1, True), (0.3, False), (0.2, False), (0.4, True)]
    assert coordinator.poll()  # a normal poll: no pause recorded
    start = clock.now
    coordinator.poll_script.insert(0, (0.0, False))
    coordinator.poll()  # prepares the rebalance (inside a poll that is not ready)
    _run(coordinator._on_join_prepare_async(1, "m"))
    coordinator.poll()
    clock.now += 1.0  # the application, between two polls that returned nothing
    coordinator.poll()
    coordinator.next_held = {("t", 0)}  # keeps one partition
    _run(coordinator._on_join_complete_async(2, "m", "p", b""))
    assert coordinator.poll()
    values = metrics.values()[QUALITY_GROUP]
    assert values["kept-partition-pause-seconds-last"] == pytest.approx(clock.now - start)


def test_keep_reading_pause_is_the_longest_blocking_poll_and_app_time_is_not_counted() -> None:
    """Cooperative with keep-reading: every poll is ready, so the pause is the longest poll of
    the rebalance; time the application spends between ready polls is not a pause."""
    clock = Clock()
    coordinator, metrics = _installed(clock)
    coordinator._subscription.held = {("t", 0), ("t", 1)}
    coordinator.poll_script = [(0.05, True), (0.3, True), (0.02, True)]
    _run(coordinator._on_join_prepare_async(1, "m"))
    coordinator.poll()
    clock.now += 5.0  # the application processes records of the kept partitions
    coordinator.poll()
    coordinator.next_held = {("t", 0), ("t", 1), ("t", 2)}
    _run(coordinator._on_join_complete_async(2, "m", "p", b""))
    coordinator.poll()
    values = metrics.values()[QUALITY_GROUP]
    assert values["kept-partition-pause-seconds-last"] == pytest.approx(0.3)


def test_nothing_kept_or_lost_records_no_pause() -> None:
    """A rebalance that keeps nothing (or in which the partitions were lost) records no pause."""
    clock = Clock()
    coordinator, metrics = _installed(clock)
    coordinator.poll_script = [(0.1, True), (0.1, True)]
    _rebalance(coordinator, {("t", 0)})  # held nothing before: nothing kept
    coordinator.poll()
    coordinator._generation.lost = True
    _run(coordinator._on_join_prepare_async(1, "m"))
    coordinator._generation.lost = False
    coordinator.next_held = {("t", 0)}
    _run(coordinator._on_join_complete_async(3, "m", "p", b""))
    coordinator.poll()
    assert math.isnan(metrics.values()[QUALITY_GROUP]["kept-partition-pause-seconds-last"])


def test_no_registry_no_metrics() -> None:
    """metrics_enabled=False (no registry): nothing is registered or wrapped."""
    coordinator = FakeCoordinator(Clock(), None)
    before = dict(vars(coordinator))
    assert hooks.install(coordinator) is None
    assert hooks.install(coordinator) is None
    assert {k: v for k, v in vars(coordinator).items() if k != ATTRIBUTE} == before


def _consumer(strategy: list[Any], cls: Any = RuntimeConsumer, **config: Any) -> Any:
    return cls(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
               partition_assignment_strategy=strategy, **config)


@pytest.mark.parametrize("strategy", [[CooperativeBalancedStickyAssignor()],
                                      [BalancedStickyAssignor]])
def test_runtime_consumers_carry_their_metrics(strategy: list[Any]) -> None:
    """The runtime's KafkaConsumer: the metrics are in its registry under Java's group and
    attached to the consumer object itself."""
    consumer = _consumer(strategy)
    try:
        found = metrics_of(consumer)
        assert found is not None and vars(consumer)[ATTRIBUTE] is found
        assert found.registry is consumer._metrics
        assert "rebalance-total" in consumer.metrics()[COORDINATOR_GROUP]
    finally:
        consumer.close()


def test_prefix_and_disabled() -> None:
    """kafka-python's metric_group_prefix names the group; metrics_enabled=False gets none."""
    consumer = _consumer([BalancedStickyAssignor], metric_group_prefix="billing")
    disabled = _consumer([BalancedStickyAssignor], metrics_enabled=False)
    try:
        assert "rebalance-total" in consumer.metrics()["billing-coordinator-metrics"]
        assert metrics_of(disabled) is None
    finally:
        for c in (consumer, disabled):
            c.close()


@pytest.mark.parametrize("strategy", [[CooperativeBalancedStickyAssignor],
                                      [RangePartitionAssignor]])
def test_plain_consumers_get_no_metrics_unless_instrumented(strategy: list[Any]) -> None:
    """A plain kafka.KafkaConsumer (our assignor or not) is not touched; instrument() adds the
    metrics alone: the timing wrappers, none of the runtime's behaviour changes."""
    consumer = _consumer(strategy, KafkaConsumer)
    try:
        assert metrics_of(consumer) is None and vars(consumer._coordinator).keys().isdisjoint(
            {"poll", "_do_join_and_sync_async", "need_rejoin", "join_group_async"})
        found = instrument(consumer)
        assert found is not None and metrics_of(consumer) is found
        assert instrument(consumer) is found  # idempotent
        assert "rebalance-total" in consumer.metrics()[COORDINATOR_GROUP]
        wrapped = set(vars(consumer._coordinator))
        assert {"need_rejoin", "join_group_async", "time_to_next_poll"}.isdisjoint(wrapped)
    finally:
        consumer.close()


def test_instrument_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match="KafkaConsumer"):
        instrument(object())


def test_a_coordinator_of_another_shape_gets_nothing(caplog: pytest.LogCaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A kafka-python whose coordinator lacks a name the hooks use: one warning, no metrics,
    nothing wrapped."""

    class Other(ABC):  # noqa: B024
        group_id = "g"
        config = {"metrics": Metrics()}

        def poll(self) -> bool:
            return True

    coordinator = Other()
    monkeypatch.setattr(hooks, "_warned", set())
    with caplog.at_level("WARNING", logger="kafka_assignors"):
        assert hooks.install(coordinator) is None
    assert "_do_join_and_sync_async" in caplog.text
    assert "poll" not in vars(coordinator)
