"""Plain kafka-python consumers on our assignors, configured as the README says (no call after
``KafkaConsumer(...)``), on a real broker: joins are never dropped, and cooperative members
keep reading the partitions they keep while the group rebalances.

kafka-python 3.0.12 alone drops a JoinGroup/SyncGroup result that completes while the
application is between two polls: the member stays REBALANCING until the broker expels it.
The first test forces exactly that interleaving, so the plain control (kafka.KafkaConsumer)
fails every time and the runtime's KafkaConsumer never does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import kafka
import pytest

from kafka_assignors import make_assignor
from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.model import Assignment, GroupSpec
from kafka_assignors.embedded import GroupRunner, MemberView
from kafka_assignors.kafka_python import KafkaConsumer

from .ledger import holdings, overlaps
from .test_e2e.traffic import (
    SequencedProducer,
    consumed_records,
    delivery_report,
    wait_all_committed,
)

SLOW = "integration_tests.new_assignor_configs:SLOW_BALANCED"
SLOW_COOPERATIVE = "integration_tests.new_assignor_configs:SLOW_COOPERATIVE"
#: the hang's recipe: a leader whose assignment takes 3 s, members polling every 200 ms
HANG_RECIPE = {"poll_timeout_ms": 200, "session_timeout_ms": 6_000, "heartbeat_interval_ms": 500}
FRESH_GROUPS = 10
#: how long the member kept away from the rebalance stalls (the joiner's process has to start
#: and subscribe within it: on a loaded machine that took over 7 s), and how long the others
#: may take to notice the rebalance once the joiner has subscribed (heartbeats every 0.5 s)
STALL_S = 20.0
NOTICE_S = 2.0


def _after_a_second(group: GroupSpec) -> Assignment:
    """balanced-sticky, 1 s late once the group reads two topics: the round trip after the
    subscription change cannot complete inside a 1 ms poll (forming the group stays quick,
    so that the plain control gets as far as the subscription change)."""
    if len(group.topics) > 1:
        time.sleep(1)
    return balanced_sticky(group)


SLOW_EAGER = make_assignor("slow-eager-balanced", _after_a_second)
SLOW_COOPERATIVE_IN_PROCESS = make_assignor("slow-cooperative-balanced", _after_a_second,
                                            cooperative=True)


def _wait_for_partitions(consumer: Any, topic: str, count: int = 2) -> None:
    want = set(range(count))
    deadline = time.monotonic() + 30
    while consumer.partitions_for_topic(topic) != want and time.monotonic() < deadline:
        time.sleep(0.1)
    assert consumer.partitions_for_topic(topic) == want, f"no metadata for {topic}"


def _stable(consumer: Any) -> bool:
    return str(consumer._coordinator.state).strip("<>").upper() == "STABLE"


def _poll_until(consumer: Any, want: set[tuple[str, int]], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        consumer.poll(timeout_ms=200)
        got = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        if got == want and _stable(consumer):
            return True
    return False


@pytest.mark.parametrize("assignor", [SLOW_EAGER, SLOW_COOPERATIVE_IN_PROCESS],
                         ids=["eager", "cooperative"])
@pytest.mark.parametrize("runtime", ["runtime", "plain"])
def test_a_join_result_arriving_between_two_polls_is_taken_up(
    kafka_broker: Any, make_topic: Callable[..., str], unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch, assignor: type, runtime: str,
) -> None:
    """The round trip after a subscription change completes while the application is between
    two polls. The runtime's next poll takes it up; a plain consumer never does."""
    cls = KafkaConsumer if runtime == "runtime" else kafka.KafkaConsumer
    a, b = make_topic(2), make_topic(2)
    consumer = cls(a, bootstrap_servers=kafka_broker.bootstrap,
                             group_id=unique_name("group"),
                             partition_assignment_strategy=[assignor],
                             session_timeout_ms=10_000, heartbeat_interval_ms=1_000)
    try:
        _wait_for_partitions(consumer, a)
        assert _poll_until(consumer, {(a, 0), (a, 1)}, 30), "the group did not form"
        consumer.subscribe([a, b])
        _wait_for_partitions(consumer, b)  # the leader must see b's partitions when it assigns
        coordinator = consumer._coordinator
        consumer.poll(timeout_ms=1)  # sends the JoinGroup and gives up waiting at once
        task = coordinator._join_task
        assert task is not None, "the subscription change started no join"
        deadline = time.monotonic() + 30
        while not task.is_done and time.monotonic() < deadline:
            time.sleep(0.01)  # the application is busy: the result arrives between two polls
        assert task.is_done and task.succeeded(), task.exception
        settled = _poll_until(consumer, {(a, 0), (a, 1), (b, 0), (b, 1)}, 6)
        if runtime == "runtime":
            assert settled, f"still {coordinator.state} with {sorted(consumer.assignment())}"
        else:
            assert not settled, ("kafka-python took up the dropped join result: it has fixed "
                                 "the hang, and the join fix can go")
            assert not _stable(consumer)
    finally:
        consumer.close(autocommit=False)


def _all_subscribed(views: list[MemberView]) -> bool:
    return all(any(e.get("event") == "subscribed" for e in v.events) for v in views)


def test_plain_members_with_a_slow_leader_settle_in_every_fresh_group(
    make_topic: Callable[..., str], make_group: Callable[..., GroupRunner],
) -> None:
    """The hang's recipe (3 s leader, 200 ms polls, a subscription change) on member processes
    that only construct KafkaConsumer: every one of 10 fresh groups settles."""
    a, b = make_topic(4), make_topic(4)
    groups = [make_group([a], [SLOW], members=2, **HANG_RECIPE) for _ in range(FRESH_GROUPS)]
    # 20 processes start at once: on a loaded machine their start-up alone took over 60 s
    # once; the join under test begins when a member has subscribed
    for group in groups:
        group.wait_for(_all_subscribed, timeout=180, what="every member to subscribe")
    for group in groups:
        group.wait_stable(timeout=60, expected={a: 4})
    for group in groups:
        for index in (0, 1):
            group.resubscribe(index, [a, b])
    unsettled = []
    for group in groups:
        try:
            state = group.wait_stable(timeout=60, expected={a: 4, b: 4}, settle=2.0)
        except Exception as exc:
            unsettled.append(f"{group.group_id}: {exc}")
            continue
        assert sorted(len(v) for v in state.values()) == [4, 4]
    assert unsettled == [], "\n".join(unsettled)


def _window_checks(group: GroupRunner, index: int, start: float, end: float,
                   kept: set[tuple[str, int]]) -> tuple[int, int, set[str]]:
    """Records of kept partitions, accepted commits and the states in effect in [start, end]."""
    every = group.events(index)
    events = [e for e in every if start <= float(e["mono"]) <= end]
    records = sum(1 for e in events if e["event"] == "record"
                  and (e["topic"], e["partition"]) in kept)
    commits = sum(1 for e in events if e["event"] == "commit" and e["ok"])
    earlier = [e for e in every if e["event"] == "state" and float(e["mono"]) < start]
    states = {str(e["state"]) for e in earlier[-1:] + events if e["event"] == "state"}
    return records, commits, states


def test_cooperative_members_keep_reading_kept_partitions_during_a_rebalance(
    kafka_broker: Any, make_topic: Callable[..., str], make_group: Callable[..., GroupRunner],
) -> None:
    """While the group waits for a member that is slow to rejoin, the members that already
    rejoined keep reading the partitions they keep (event timestamps prove it); their
    auto-commits made meanwhile land once the JoinGroup is answered (as in Java, nothing is
    committed while it is pending); no partition is read by two members at once and nothing
    is lost."""
    topic = make_topic(6)
    producer = SequencedProducer(kafka_broker.bootstrap, [topic], rate=60).start()
    group = make_group([topic], [SLOW_COOPERATIVE], members=3, report_records=True,
                       commit="auto", **HANG_RECIPE)
    try:
        before = group.wait_stable(timeout=60, expected={topic: 6}, settle=1.0)
        group.stall_member(2, STALL_S)  # m2 rejoins only when it polls again
        joiner = group.add_member()
        after = group.wait_stable(timeout=90, expected={topic: 6}, settle=2.0)
    finally:
        producer.stop()
    names = [v.name for v in group.members()]
    # the others learn of the rebalance at a heartbeat (0.5 s) after the joiner subscribed and
    # rejoin; m2 is away until it resumes, so the first round cannot complete before then
    subscribed = _first(group, joiner, "subscribed")
    resumed = _first(group, 2, "resumed")
    window = (subscribed + NOTICE_S, resumed - 0.2)
    assert window[1] - window[0] >= 1.0, f"the joiner took {subscribed:.1f} s to start"
    for index in (0, 1):
        kept = {(t, p) for t, p in before[names[index]] & after[names[index]]}
        assert kept, f"{names[index]} kept nothing: {before} -> {after}"
        records, _commits, states = _window_checks(group, index, *window, kept)
        assert states == {"REBALANCING"}, f"{names[index]} reported {states} in the window"
        assert records > 0, f"{names[index]} read nothing of {sorted(kept)} during the rebalance"
    failed = [e for e in group.events() if e["event"] == "commit" and not e["ok"]]
    assert failed == [], failed[:5]
    assert overlaps(holdings(group)) == []
    _assert_one_reader_at_a_time(group)
    committed = wait_all_committed(kafka_broker.bootstrap, group.group_id,
                                   [(topic, p) for p in range(6)], timeout=60)
    report = delivery_report(producer, consumed_records([group]), committed)
    print(f"keep-reading: {report.summary()}")
    assert report.lost == 0 and report.failed_sends == 0, report.summary()


def _first(group: GroupRunner, index: int, event: str) -> float:
    return next(float(e["mono"]) for e in group.events(index) if e["event"] == event)


def _assert_one_reader_at_a_time(group: GroupRunner) -> None:
    """Per partition, the records each member read form one unbroken run in time: no member
    reads a partition again after another has started on it."""
    runs: dict[tuple[str, int], list[str]] = {}
    for record in consumed_records([group]):
        readers = runs.setdefault((record.topic, record.partition), [])
        if not readers or readers[-1] != record.member:
            readers.append(record.member)
    interleaved = {tp: r for tp, r in runs.items() if len(r) != len(set(r))}
    assert interleaved == {}, interleaved


def _join_both(first: Any, second: Any, want: int, seconds: float = 60) -> None:
    """Poll two members of one group in turn until both are STABLE and hold ``want``
    partitions between them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for consumer in (first, second):
            consumer.poll(timeout_ms=100)
        held = len(first.assignment()) + len(second.assignment())
        if _stable(first) and _stable(second) and held == want:
            return
    raise AssertionError(f"the group did not form: {first.assignment()} {second.assignment()}")


@pytest.mark.parametrize("runtime", ["runtime", "plain"])
def test_a_cooperative_member_closing_during_a_rebalance_leaves_nothing_to_read_twice(
    kafka_broker: Any, make_topic: Callable[..., str], unique_name: Callable[[str], str],
    runtime: str,
) -> None:
    """A cooperative member changes its subscription (its JoinGroup then waits for a member
    that does not poll), reads on meanwhile (with the runtime; kafka-python alone pauses) and
    closes while its JoinGroup is pending; the other member then polls and the round trip
    completes. The group's committed offsets reach what the closing member had read: nothing
    it read is left for the next owner to read again, with the runtime as without it."""
    from kafka.structs import TopicPartition

    from kafka_assignors import CooperativeBalancedStickyAssignor

    cls = KafkaConsumer if runtime == "runtime" else kafka.KafkaConsumer
    a, b = make_topic(4), make_topic(2)
    producer = kafka.KafkaProducer(bootstrap_servers=kafka_broker.bootstrap)
    for i in range(4000):
        producer.send(a, str(i).encode(), partition=i % 4)
    producer.flush()
    producer.close()
    group = unique_name("group")
    options = {"bootstrap_servers": kafka_broker.bootstrap, "group_id": group,
               "auto_offset_reset": "earliest", "max_poll_records": 10,
               "auto_commit_interval_ms": 600_000, "session_timeout_ms": 10_000,
               "heartbeat_interval_ms": 1_000, "max_poll_interval_ms": 60_000,
               "partition_assignment_strategy": [CooperativeBalancedStickyAssignor]}
    closing, waiting = cls(a, **options), kafka.KafkaConsumer(a, **options)
    closer: threading.Thread | None = None
    try:
        _wait_for_partitions(closing, a, 4)
        _join_both(closing, waiting, 4)
        _wait_for_partitions(closing, b)
        closing.subscribe([a, b])  # rejoins; the round trip waits for `waiting` to poll
        started = time.monotonic()
        while time.monotonic() - started < 3:
            closing.poll(timeout_ms=200)
        assert not _stable(closing), "the round trip completed without the other member"
        read = {tp: closing.position(tp) for tp in closing.assignment()
                if tp.topic == a}
        closer = threading.Thread(target=closing.close, daemon=True)
        closer.start()
        time.sleep(1.0)  # the close is under way while the JoinGroup is pending
        deadline = time.monotonic() + 60
        while closer.is_alive() and time.monotonic() < deadline:
            waiting.poll(timeout_ms=200)  # rejoins: the pending round trip completes
        assert not closer.is_alive(), "close() did not return"
        committed = {tp: waiting.committed(TopicPartition(tp.topic, tp.partition))
                     for tp in read}
        behind = {f"{tp.topic}-{tp.partition}": (committed[tp], read[tp]) for tp in read
                  if (committed[tp] or 0) < read[tp]}
        assert behind == {}, f"committed below what the closing member read: {behind}"
    finally:
        if closer is None:
            closing.close(autocommit=False)
        waiting.close(autocommit=False)
