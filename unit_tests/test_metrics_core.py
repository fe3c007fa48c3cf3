"""GroupMetrics: Java's rebalance metrics and our quality metrics, on a fake clock."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.metrics import MetricConfig, Metrics

from kafka_assignors.metrics import (
    ATTRIBUTE,
    COORDINATOR_GROUP,
    QUALITY_GROUP,
    GroupMetrics,
    attach,
    metrics_of,
)


class Clock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Report:
    moved: int = 3
    pending_second_round: int = 2
    count_spread: int = 1
    topic_spread: int = 1
    seconds: float = 0.004


def make(clock: Clock, **config: int) -> GroupMetrics:
    return GroupMetrics(Metrics(MetricConfig(tags={"client-id": "c1"}, **config)), clock=clock)


def coordinator(m: GroupMetrics) -> dict[str, float]:
    return m.values()[COORDINATOR_GROUP]


def quality(m: GroupMetrics) -> dict[str, float]:
    return m.values()[QUALITY_GROUP]


def test_before_any_rebalance_java_defaults() -> None:
    """Before any rebalance the counters are 0 and last-rebalance-seconds-ago is -1, as in Java."""
    m = make(Clock())
    c = coordinator(m)
    assert c["rebalance-total"] == 0 and c["failed-rebalance-total"] == 0
    assert c["rebalance-latency-total"] == 0
    assert c["last-rebalance-seconds-ago"] == -1
    assert c["rebalance-latency-max"] == -math.inf  # kafka-python's Max with no sample
    assert set(c) >= {"rebalance-latency-avg", "rebalance-rate-per-hour",
                      "failed-rebalance-rate-per-hour", "partition-revoked-latency-avg",
                      "partition-assigned-latency-max", "partition-lost-latency-avg"}


def test_latency_spans_failed_retries() -> None:
    """A failed round trip keeps the rebalance's start: the success's latency covers the retries."""
    clock = Clock()
    m = make(clock)
    m.rebalance_started()
    clock.advance(1.0)
    m.rebalance_failed()
    assert m.rebalance_in_progress
    clock.advance(0.5)
    m.rebalance_started()  # the retry's JoinGroup: no new start
    clock.advance(0.25)
    m.rebalance_succeeded()
    c = coordinator(m)
    assert c["rebalance-total"] == 1
    assert c["failed-rebalance-total"] == 1
    assert c["rebalance-latency-max"] == pytest.approx(1750.0)
    assert c["rebalance-latency-total"] == pytest.approx(1750.0)
    assert not m.rebalance_in_progress


def test_last_rebalance_seconds_ago_truncates() -> None:
    """last-rebalance-seconds-ago counts whole seconds since the last success (Java truncates)."""
    clock = Clock()
    m = make(clock)
    m.rebalance_started()
    m.rebalance_succeeded()
    clock.advance(2.9)
    assert coordinator(m)["last-rebalance-seconds-ago"] == 2
    clock.advance(0.2)
    assert coordinator(m)["last-rebalance-seconds-ago"] == 3


def test_rates_per_hour_and_window() -> None:
    """Rates are per hour over the sample window; avg/max forget samples older than it."""
    clock = Clock()
    m = make(clock, samples=2, time_window_ms=30_000)
    for latency in (0.1, 0.3):
        m.rebalance_started()
        clock.advance(latency)
        m.rebalance_succeeded()
    c = coordinator(m)
    assert c["rebalance-latency-avg"] == pytest.approx(200.0)
    assert c["rebalance-latency-max"] == pytest.approx(300.0)
    # 2 events over one full 30 s window plus the 0.3 s since the first was recorded
    assert c["rebalance-rate-per-hour"] == pytest.approx(2 / ((30.0 + 0.3) / 3600.0))
    clock.advance(120.0)
    c = coordinator(m)
    assert c["rebalance-latency-max"] == -math.inf
    assert c["rebalance-total"] == 2  # cumulative
    assert c["rebalance-latency-total"] == pytest.approx(400.0)


def test_success_without_start_records_zero() -> None:
    """A success with no recorded start counts, with latency 0, instead of failing."""
    m = make(Clock())
    m.rebalance_succeeded()
    assert coordinator(m)["rebalance-total"] == 1
    assert coordinator(m)["rebalance-latency-max"] == 0


def test_listener_recorded_only_on_normal_return() -> None:
    """A listener call is timed in ms; one that raises is not recorded (Java's rule)."""
    clock = Clock()
    m = make(clock)
    with m.listener("assigned"):
        clock.advance(0.02)
    with pytest.raises(RuntimeError), m.listener("revoked"):
        clock.advance(1.0)
        raise RuntimeError("user code")
    c = coordinator(m)
    assert c["partition-assigned-latency-max"] == pytest.approx(20.0)
    assert c["partition-revoked-latency-max"] == -math.inf
    assert c["partition-lost-latency-max"] == -math.inf


def test_leader_and_member_quality() -> None:
    """The leader's figures land in the quality group; kept pauses keep the last and the max."""
    clock = Clock()
    m = make(clock)
    assert math.isnan(quality(m)["partitions-moved-last"])
    m.record_leader(Report(moved=3))
    m.record_leader(Report(moved=0, pending_second_round=0, seconds=0.5))
    m.record_kept_pause(0.2)
    m.record_kept_pause(0.05)
    q = quality(m)
    assert q["assignments-total"] == 2
    assert q["partitions-moved-last"] == 0 and q["partitions-moved-total"] == 3
    assert q["partitions-withheld-last"] == 0
    assert q["count-spread-last"] == 1 and q["topic-spread-last"] == 1
    assert q["assignment-seconds-last"] == 0.5 and q["assignment-seconds-max"] == 0.5
    assert q["kept-partition-pause-seconds-last"] == 0.05
    assert q["kept-partition-pause-seconds-max"] == 0.2


def test_registry_view_matches_values() -> None:
    """The registry (what consumer.metrics() and reporters read) shows the same values,
    with the registry's default tags."""
    clock = Clock()
    m = make(clock)
    m.rebalance_started()
    clock.advance(0.1)
    m.rebalance_succeeded()
    by_name = {(n.group, n.name): metric for n, metric in m.registry.metrics.items()}
    metric = by_name[(COORDINATOR_GROUP, "rebalance-total")]
    assert metric.value() == 1
    assert metric.metric_name.tags == {"client-id": "c1"}
    assert metric.value(123.0) == 1  # a reporter's own time does not matter


def test_two_on_one_registry_and_private_registry() -> None:
    """A private registry carries the given tags; a second GroupMetrics on it is refused."""
    m = GroupMetrics(tags={"client-id": "b"}, clock=Clock())
    assert {n.tags["client-id"] for n in m.metric_names} == {"b"}
    with pytest.raises(ValueError):
        GroupMetrics(m.registry, tags={"client-id": "b"}, clock=Clock())


def test_metrics_of_and_attach() -> None:
    """metrics_of reads the attribute adapters attach; anything else gives None."""

    class Consumer:
        pass

    consumer = Consumer()
    assert metrics_of(consumer) is None
    m = GroupMetrics(clock=Clock())
    assert attach(consumer, m)
    assert metrics_of(consumer) is m
    setattr(consumer, ATTRIBUTE, "not metrics")
    assert metrics_of(consumer) is None
    assert not attach(object(), m)


@given(st.lists(st.tuples(st.sampled_from(["start", "fail", "ok"]),
                          st.floats(min_value=0, max_value=100)), max_size=40))
def test_counts_and_latency_total_match_a_model(events: list[tuple[str, float]]) -> None:
    """Any sequence of events: totals count successes and failures, and the latency total is the
    sum over successes of the time since the first start after the previous success."""
    clock = Clock()
    m = make(clock)
    start: float | None = None
    ok = failed = 0
    total_ms = 0.0
    for event, dt in events:
        clock.advance(dt)
        if event == "start":
            m.rebalance_started()
            start = clock.now if start is None else start
        elif event == "fail":
            m.rebalance_failed()
            failed += 1
        else:
            m.rebalance_succeeded()
            ok += 1
            total_ms += (clock.now - (clock.now if start is None else start)) * 1000
            start = None
    c = coordinator(m)
    assert c["rebalance-total"] == ok
    assert c["failed-rebalance-total"] == failed
    # within a nanosecond: the implementation and the model subtract the same clock readings
    # in a different order, and floats round differently (seen: 1e-9 s apart, 2e-11 ms off)
    assert c["rebalance-latency-total"] == pytest.approx(total_ms, rel=1e-9, abs=1e-6)
