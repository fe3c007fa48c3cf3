"""The Java consumer's rebalance metrics and our assignment-quality metrics on a kafka-python
consumer with our assignors, on a real broker.

The observed member runs in the test process and leads its group; the other members are
processes (they join, leave, crash and subscribe). Every counter is checked exactly against
what the test observed of kafka-python itself (its own log records, see
:mod:`.metrics_witness`), every latency against bounds on the test's own monotonic clock
that program order guarantees (no bound assumes an idle machine).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.core.metrics import count_spread, topic_spread
from kafka_assignors.embedded import GroupRunner
from kafka_assignors.kafka_python import KafkaConsumer  # the runtime: docs/runtime.md
from kafka_assignors.metrics import COORDINATOR_GROUP, QUALITY_GROUP, GroupMetrics, metrics_of

from .metrics_witness import Driver, Listener, Witness, settled, witnessing

#: every metric of Java's KAFKA-8609 set
JAVA_NAMES = {
    "rebalance-latency-avg", "rebalance-latency-max", "rebalance-latency-total",
    "rebalance-total", "rebalance-rate-per-hour", "failed-rebalance-total",
    "failed-rebalance-rate-per-hour", "last-rebalance-seconds-ago",
    "partition-revoked-latency-avg", "partition-revoked-latency-max",
    "partition-assigned-latency-avg", "partition-assigned-latency-max",
    "partition-lost-latency-avg", "partition-lost-latency-max",
}
#: a sample window longer than the test: avg/max/rate cover every event it caused
WINDOW_MS = 600_000
MEMBER = {"session_timeout_ms": 6_000, "heartbeat_interval_ms": 500, "poll_timeout_ms": 200}
STEP_S = 60.0


def _observed(bootstrap: str, group_id: str, assignor: Any) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id,
                         partition_assignment_strategy=[assignor],
                         session_timeout_ms=10_000, heartbeat_interval_ms=500,
                         metrics_sample_window_ms=WINDOW_MS, auto_offset_reset="earliest")


def _counts_hold(consumer: Any, group: GroupRunner, expected: dict[str, int],
                 mine: int, partitions: int) -> Callable[[], bool]:
    """The observed member holds ``mine`` partitions, each process member its count, every
    partition has one owner, and no rebalance of the observed member is due."""

    def done() -> bool:
        held = group.assignments()
        counts = {name: len(tps) for name, tps in held.items()}
        owned = [tp for tps in held.values() for tp in tps]
        owned += [(tp.topic, tp.partition) for tp in consumer.assignment()]
        return (counts == expected and len(consumer.assignment()) == mine
                and len(owned) == len(set(owned)) == partitions and settled(consumer))

    return done


def _check_rebalance_metrics(values: dict[str, float], witness: Witness, listener: Listener,
                             driver: Driver, read: tuple[float, float]) -> int:
    """Java's metrics against the witness: counts exactly, latencies within program-order
    bounds on the test's clock. Returns the number of successful rebalances."""
    assert set(values) >= JAVA_NAMES, sorted(JAVA_NAMES - set(values))
    rebalances = witness.rebalances()
    n = len(rebalances)
    assert values["rebalance-total"] == n == witness.count("synced")
    assert values["failed-rebalance-total"] == witness.count("start") - n
    lower = [r.lower_ms for r in rebalances]
    upper = [r.upper_ms for r in rebalances]
    assert sum(lower) <= values["rebalance-latency-total"] <= sum(upper)
    assert max(lower) <= values["rebalance-latency-max"] <= max(upper)
    assert statistics.fmean(lower) <= values["rebalance-latency-avg"] <= statistics.fmean(upper)
    # kafka-python's Rate: the count over the time since its first sample plus one window
    before, after = read
    first = rebalances[0]
    hour = 3_600_000.0
    assert (n * hour / ((after - first.synced) * 1000 + WINDOW_MS)
            <= values["rebalance-rate-per-hour"]
            <= n * hour / ((before - first.taken_up) * 1000 + WINDOW_MS))
    last = rebalances[-1]
    assert (math.floor(before - last.taken_up) <= values["last-rebalance-seconds-ago"]
            <= math.floor(after - last.synced))
    longest_poll_ms = driver.longest_poll_s() * 1000
    for kind in ("revoked", "assigned", "lost"):
        calls = listener.calls[kind]
        if kind == "lost" and not calls:
            # the scenario expels nobody it observes; none lost, none measured
            assert values["partition-lost-latency-max"] == -math.inf
            continue
        # (lost: a machine loaded enough to hold a heartbeat's answer past the session, once
        # 20.9 s at 1-min load 90, expels the observed member too; Java's metric counts it)
        assert calls, f"the scenario made no on_partitions_{kind} call"
        assert max(calls) <= values[f"partition-{kind}-latency-max"] <= longest_poll_ms
        assert (statistics.fmean(calls) <= values[f"partition-{kind}-latency-avg"]
                <= longest_poll_ms)
    return n


def _check_quality(values: dict[str, float], witness: Witness,
                   partition_counts: dict[str, int]) -> None:
    """The leader's figures against the assignments it logged."""
    done = witness.assignments
    assert values["assignments-total"] == len(done) > 0
    moved = 0
    for a in done:
        subscribed = set().union(*a.topics.values())
        moved += sum(len({tp for tp in owned if tp[0] in subscribed} - a.sent.get(m, set()))
                     for m, owned in a.owned.items())
    assert values["partitions-moved-total"] == moved
    last = done[-1]
    subscribed = set().union(*last.topics.values())
    every = {(t, p) for t in subscribed for p in range(partition_counts[t])}
    withheld = len(every - set().union(*last.sent.values()))
    assert values["partitions-withheld-last"] == withheld
    if withheld == 0:  # what was sent is the target
        target = {m: _by_topic(tps) for m, tps in last.sent.items()}
        assert values["count-spread-last"] == count_spread(target)
        assert values["topic-spread-last"] == topic_spread(target, last.topics)
    assert 0 <= values["assignment-seconds-last"] <= last.finished - last.began
    assert (values["assignment-seconds-last"] <= values["assignment-seconds-max"]
            <= max(a.finished - a.began for a in done))


def _print_summary(mode: str, values: dict[str, dict[str, float]], driver: Driver) -> None:
    c, q = values[COORDINATOR_GROUP], values[QUALITY_GROUP]
    print(f"metrics ({mode}): {c['rebalance-total']:.0f} rebalances, "
          f"{c['failed-rebalance-total']:.0f} failed round trips, latency avg "
          f"{c['rebalance-latency-avg']:.0f} ms max {c['rebalance-latency-max']:.0f} ms; "
          f"{q['assignments-total']:.0f} assignments, {q['partitions-moved-total']:.0f} moved; "
          f"kept-partition pause max {q['kept-partition-pause-seconds-max'] * 1000:.0f} ms "
          f"(longest poll call {driver.longest_poll_s() * 1000:.0f} ms)")


def _by_topic(tps: set[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out


def _read(consumer: Any, listener: Listener
          ) -> tuple[dict[str, dict[str, float]], tuple[float, float]]:
    """consumer.metrics(), the monotonic times around the read, and the listener's calls
    so far (close() calls it again: that call is not in what was read)."""
    before = time.monotonic()
    values = consumer.metrics()
    after = time.monotonic()
    listener.freeze()
    return values, (before, after)


def test_cooperative_group_through_joins_a_leave_a_crash_and_a_subscription_change(
    kafka_broker: Any, make_topic: Callable[..., str], make_group: Callable[..., GroupRunner],
    unique_name: Callable[[str], str],
) -> None:
    """A cooperative leader sees two members join, one leave, one crash (killed: no
    LeaveGroup), its own subscription change and a third member join: consumer.metrics()
    shows Java's rebalance metrics with exactly the counts kafka-python went through, and
    assignment quality matching what the leader sent; kept partitions paused no longer than
    one poll call."""
    a, b = make_topic(6), make_topic(4)
    group_id = unique_name("group")
    listener = Listener(revoke_s=0.05, assign_s=0.02)
    group = make_group([a], ["cooperative-balanced-sticky"], group_id=group_id, **MEMBER)
    with witnessing() as witness:
        consumer = _observed(kafka_broker.bootstrap, group_id, CooperativeBalancedStickyAssignor())
        try:
            consumer.subscribe([a], listener=listener)
            driver = Driver(consumer)
            driver.poll_until(_counts_hold(consumer, group, {}, 6, 6), STEP_S, "alone")
            group.add_member()  # m0 joins
            driver.poll_until(_counts_hold(consumer, group, {"m0": 3}, 3, 6), STEP_S, "m0 in")
            group.add_member()  # m1 joins
            driver.poll_until(_counts_hold(consumer, group, {"m0": 2, "m1": 2}, 2, 6), STEP_S,
                              "m1 in")
            group.stop_member(0)  # m0 leaves
            driver.poll_until(_counts_hold(consumer, group, {"m1": 3}, 3, 6), STEP_S,
                              "m0 out")
            group.kill_member(1)  # m1 crashes: the broker expels it at its session timeout
            driver.poll_until(_counts_hold(consumer, group, {}, 6, 6), STEP_S, "m1 expelled")
            consumer.subscribe([a, b], listener=listener)  # subscription change
            driver.poll_until(_counts_hold(consumer, group, {}, 10, 10), STEP_S, "a and b")
            group.add_member(topics=(a, b))  # m2 joins on both topics
            driver.poll_until(_counts_hold(consumer, group, {"m2": 5}, 5, 10), STEP_S, "m2 in")
            values, read = _read(consumer, listener)
        finally:
            consumer.close(autocommit=False)
    n = _check_rebalance_metrics(values[COORDINATOR_GROUP], witness, listener, driver, read)
    _print_summary("cooperative", values, driver)
    # 7 steps; the leader gives partitions away in three of them: a second round each
    assert n >= 10, n
    quality = values[QUALITY_GROUP]
    _check_quality(quality, witness, {a: 6, b: 4})
    assert quality["partitions-moved-total"] >= 3 + 1 + 5, "the joins moved partitions"
    # keep-reading: a stretch in which kept partitions could not be read ends with the poll
    pause_max = quality["kept-partition-pause-seconds-max"]
    assert 0 <= quality["kept-partition-pause-seconds-last"] <= pause_max
    assert pause_max <= driver.longest_poll_s()


def test_eager_kept_partitions_pause_for_the_whole_rebalance(
    kafka_broker: Any, make_topic: Callable[..., str], make_group: Callable[..., GroupRunner],
    unique_name: Callable[[str], str],
) -> None:
    """An eager leader revokes everything when a member joins or leaves: the partitions it
    keeps pause at least from the JoinGroup to the SyncGroup of that rebalance, at most from
    the trigger to the test seeing the new assignment; Java's counters match exactly."""
    a = make_topic(4)
    group_id = unique_name("group")
    listener = Listener()
    group = make_group([a], ["balanced-sticky"], group_id=group_id, **MEMBER)
    with witnessing() as witness:
        consumer = _observed(kafka_broker.bootstrap, group_id, BalancedStickyAssignor())
        try:
            consumer.subscribe([a], listener=listener)
            driver = Driver(consumer)
            driver.poll_until(_counts_hold(consumer, group, {}, 4, 4), STEP_S, "alone")
            group.add_member()
            driver.poll_until(_counts_hold(consumer, group, {"m0": 2}, 2, 4), STEP_S, "m0 in")
            trigger = time.monotonic()
            group.stop_member(0)
            seen = driver.poll_until(_counts_hold(consumer, group, {}, 4, 4), STEP_S, "m0 out")
            values, read = _read(consumer, listener)
        finally:
            consumer.close(autocommit=False)
    _check_rebalance_metrics(values[COORDINATOR_GROUP], witness, listener, driver, read)
    _print_summary("eager", values, driver)
    quality = values[QUALITY_GROUP]
    _check_quality(quality, witness, {a: 4})
    last = witness.rebalances()[-1]
    assert last.first_start >= trigger
    assert (last.synced - last.first_start <= quality["kept-partition-pause-seconds-last"]
            <= seen - trigger)


def test_a_consumer_configured_as_the_readme_says_shows_the_java_names(
    kafka_broker: Any, make_topic: Callable[..., str], unique_name: Callable[[str], str],
) -> None:
    """The runtime's KafkaConsumer with our assignor (docs/runtime.md) is all it takes:
    consumer.metrics() holds Java's names and ours, tagged like kafka-python's own, and
    metrics_of finds them; with metrics_enabled=False there are none."""
    topic = make_topic(2)
    consumer = KafkaConsumer(topic, bootstrap_servers=kafka_broker.bootstrap,
                             group_id=unique_name("group"),
                             partition_assignment_strategy=[CooperativeBalancedStickyAssignor()])
    off = KafkaConsumer(topic, bootstrap_servers=kafka_broker.bootstrap,
                        group_id=unique_name("group"), metrics_enabled=False,
                        partition_assignment_strategy=[CooperativeBalancedStickyAssignor()])
    try:
        driver = Driver(consumer)
        driver.poll_until(lambda: len(consumer.assignment()) == 2 and settled(consumer),
                          STEP_S, "assigned")
        Driver(off).poll_until(lambda: len(off.assignment()) == 2 and settled(off), STEP_S,
                               "assigned")
        values = consumer.metrics()
        raw = consumer.metrics(raw=True)
        assert off.metrics() is None and metrics_of(off) is None  # kafka-python: no registry
    finally:
        consumer.close(autocommit=False)
        off.close(autocommit=False)
    assert set(values[COORDINATOR_GROUP]) >= JAVA_NAMES | {"commit-latency-avg"}
    assert values[COORDINATOR_GROUP]["rebalance-total"] >= 1
    assert values[QUALITY_GROUP]["assignments-total"] >= 1  # the only member leads
    tags = {n.name: n.tags for n in raw if n.group == COORDINATOR_GROUP}
    assert tags["rebalance-total"] == tags["commit-latency-avg"]
    assert set(tags["rebalance-total"]) == {"client-id"}
    found = metrics_of(consumer)
    assert isinstance(found, GroupMetrics)
    assert found.registry is consumer._metrics
