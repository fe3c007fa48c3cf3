"""Bridged confluent-kafka consumers (kafka_assignors.confluent) in live groups on a real broker.

Members are separate processes (``confluent_member.py``) so one can be
SIGKILLed; a producer writes throughout.  Each stable state must be exactly what
the leader's assignor computed (its ``last_report``), every produced message
must be consumed, duplicates may only come from the killed member, and the
commits must be visible to the admin API.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from .background_producer import BackgroundProducer
from .child_members import ChildMembers
from .conftest import BrokerHandle

MEMBER = Path(__file__).with_name("confluent_member.py")
PARTITIONS = 12
STABLE_TIMEOUT_S = 60.0
pytestmark = pytest.mark.timeout(240)


class BridgeGroup(ChildMembers):
    """Bridged member processes of one group, and what they report."""

    def __init__(self, bootstrap: str, group: str, topic: str, strategy: str) -> None:
        super().__init__(MEMBER, {"bootstrap": bootstrap, "group": group, "topic": topic,
                                  "strategy": strategy})

    def consumed(self) -> list[tuple[str, int, int]]:
        """(member, partition, offset) of every message any member reported, in time order."""
        rows = [(e["mono"], n, p, o) for n in self.members for e in self.events(n)
                if e["event"] == "records" for p, o in e["items"]]
        return [(n, p, o) for _t, n, p, o in sorted(rows, key=lambda r: r[0])]

    def leader(self) -> str | None:
        """The member that computed the latest assignment."""
        reports = [(r["mono"], n) for n in self.members if (r := self.latest(n, "report"))]
        return max(reports)[1] if reports else None

    def callbacks(self) -> str:
        """Each member's rebalance callbacks so far, for a failed check: a ``lost`` means the
        member was expelled, and it then rejoins owning nothing."""
        kinds = ("assigned", "revoked", "lost")
        return "\n".join(
            f"{n}: " + ", ".join(f"{e['event']} {e['partitions']}" for e in self.events(n)
                                 if e["event"] in kinds)
            for n in self.members)

    def latest(self, name: str, kind: str) -> dict[str, Any] | None:
        return next((e for e in reversed(self.events(name)) if e["event"] == kind), None)

    def stable_assignment(self, check_report: bool = True) -> dict[str, frozenset[int]] | None:
        """The assignment if the group is stable and equals the leader's last computation."""
        states = {n: self.latest(n, "state") for n in self.live()}
        if any(s is None or s["state"] != "<stable>" for s in states.values()):
            return None
        if len({s["generation"] for s in states.values() if s}) != 1:
            return None
        actual = {n: frozenset(s["assignment"]) for n, s in states.items() if s}
        if sorted(p for ps in actual.values() for p in ps) != list(range(PARTITIONS)):
            return None  # a partition is missing or held twice
        if not check_report:
            return actual
        reports = [r for n in self.members if (r := self.latest(n, "report"))]
        if not reports:
            return None
        report = max(reports, key=lambda r: r["mono"])
        by_id = {s["member_id"]: n for n, s in states.items() if s}
        if report["sent"] != report["target"] or set(report["target"]) != set(by_id):
            return None  # a cooperative second round is still due, or an old report
        computed = {by_id[m]: frozenset(ps) for m, ps in report["target"].items()}
        return actual if computed == actual else None

    def wait_stable(
        self, timeout: float = STABLE_TIMEOUT_S, check_report: bool = True
    ) -> dict[str, frozenset[int]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for n in self.live():
                if self.members[n].proc.poll() is not None:
                    raise AssertionError(f"{n} exited on its own\n{self.log_tail(n)}")
            got = self.stable_assignment(check_report)
            if got is not None:
                return got
            time.sleep(0.2)
        states = {n: self.latest(n, "state") for n in self.live()}
        raise AssertionError(f"group not stable after {timeout} s: {states}\n"
                             + "\n".join(self.log_tail(n) for n in self.live()))


@pytest.fixture
def bridge_group(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], unique_name: Callable[[str], str]
) -> Iterator[Callable[[str], BridgeGroup]]:
    groups: list[BridgeGroup] = []

    def make(strategy: str) -> BridgeGroup:
        group = BridgeGroup(kafka_broker.bootstrap, unique_name("group"),
                            make_topic(PARTITIONS), strategy)
        groups.append(group)
        return group

    yield make
    for group in groups:
        group.close()


def wait_consumed(group: BridgeGroup, produced: set[tuple[int, int]], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    missing = produced
    while time.monotonic() < deadline:
        missing = produced - {(p, o) for _n, p, o in group.consumed()}
        if not missing:
            return
        time.sleep(0.3)
    raise AssertionError(f"{len(missing)} produced messages never consumed, e.g. "
                         f"{sorted(missing)[:10]}")


def unexpected_duplicates(group: BridgeGroup) -> tuple[int, list[str]]:
    """(duplicates caused by the killed members, descriptions of any other duplicate)."""
    readers: dict[tuple[int, int], list[str]] = {}
    for name, p, o in group.consumed():
        readers.setdefault((p, o), []).append(name)
    from_crash, other = 0, []
    for (p, o), names in readers.items():
        if len(names) > 1:
            if all(n in group.killed for n in names[:-1]):
                from_crash += len(names) - 1
            else:
                other.append(f"partition {p} offset {o} read by {names}")
    return from_crash, other


def duplicate_timeline(group: BridgeGroup, described: list[str]) -> str:
    """For a failed duplicates check: every member's rebalance callbacks,
    and when each read the first duplicated record, on one clock, so a recurrence says
    whether a record was returned after its partition was revoked or before a commit; then
    the readers' logs (a failed commit is logged there)."""
    match = re.match(r"partition (\d+) offset (\d+)", described[0]) if described else None
    if match is None:
        return ""
    p, o = int(match[1]), int(match[2])
    rows = []
    for n in group.members:
        for e in group.events(n):
            if e["event"] in ("assigned", "revoked", "lost"):
                rows.append((e["mono"], f"{n} {e['event']} {e['partitions']}"))
            elif e["event"] == "records" and [p, o] in [list(i) for i in e["items"]]:
                rows.append((e["mono"], f"{n} read partition {p} offset {o}"))
    start = min((t for t, _ in rows), default=0.0)
    readers = sorted({n for n in group.members for e in group.events(n)
                      if e["event"] == "records" and [p, o] in [list(i) for i in e["items"]]})
    return "\n".join([f"+{t - start:7.3f} s {line}" for t, line in sorted(rows)]
                     + [group.log_tail(n) for n in readers])


def committed_offsets(bootstrap: str, group_id: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = ConsumerGroupTopicPartitions(group_id)
    result = admin.list_consumer_group_offsets([request])[group_id].result(30)
    return {tp.partition: tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer

    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets-probe"})
    try:
        return {p: probe.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in range(PARTITIONS)}
    finally:
        probe.close()


def last_read(group: BridgeGroup) -> dict[tuple[str, int], int]:
    """(member, partition) -> the highest offset that member read from it."""
    out: dict[tuple[str, int], int] = {}
    for name, p, o in group.consumed():
        out[(name, p)] = max(o, out.get((name, p), -1))
    return out


def assert_balanced(assignment: dict[str, frozenset[int]]) -> None:
    sizes = [len(ps) for ps in assignment.values()]
    assert max(sizes) - min(sizes) <= 1, assignment


def moved(before: dict[str, frozenset[int]], after: dict[str, frozenset[int]]) -> int:
    return sum(len(ps - before.get(n, frozenset())) for n, ps in after.items())


def test_cooperative_group_through_join_clean_leave_and_crash(
    kafka_broker: BrokerHandle, bridge_group: Callable[[str], BridgeGroup]
) -> None:
    """Cooperative members reading with consume(): assignments equal the leader's computation at
    every step, nothing is lost, only the crash causes duplicates, and the final commits seen
    by the admin API cover everything."""
    group = bridge_group("cooperative-balanced-sticky")
    producer = BackgroundProducer(kafka_broker.bootstrap, group.base["topic"], rate=400,
                                  partitions=PARTITIONS)
    try:
        for name in ("m0", "m1", "m2"):
            group.add(name)
        first = group.wait_stable()
        assert_balanced(first)

        group.add("m3")  # join
        joined = group.wait_stable()
        assert_balanced(joined)
        assert moved(first, joined) == 3, group.callbacks()  # sticky: only the newcomer's move

        group.stop("m0")  # clean leave
        after_leave = group.wait_stable()
        assert_balanced(after_leave)
        assert moved(joined, after_leave) == len(joined["m0"]), (
            f"{joined} -> {after_leave}\n{group.callbacks()}\n"
            + "\n".join(group.log_tail(n, 15) for n in group.members))

        committed = committed_offsets(kafka_broker.bootstrap, group.base["group"])
        for (name, p), last in last_read(group).items():
            if name == "m0":  # what m0 read before leaving is committed
                assert committed.get(p, -1) > last, (p, last, committed)

        group.kill("m1")  # crash: the broker notices after session.timeout.ms
        after_crash = group.wait_stable()
        assert_balanced(after_crash)
        assert set(after_crash) == {"m2", "m3"}
    finally:
        producer.stop()
    assert producer.failed == 0
    wait_consumed(group, producer.acked)
    for name in group.live():
        group.stop(name)

    from_crash, other = unexpected_duplicates(group)
    assert other == [], (f"duplicates without a crash: {other[:10]}\n"
                         + duplicate_timeline(group, other))
    print(f"\nproduced {len(producer.acked)}, duplicates after the crash: {from_crash}")
    assert committed_offsets(kafka_broker.bootstrap, group.base["group"]) == end_offsets(
        kafka_broker.bootstrap, group.base["topic"])


def test_eager_static_members_restart_and_scale_in_without_duplicates(
    kafka_broker: BrokerHandle, bridge_group: Callable[[str], BridgeGroup]
) -> None:
    """Eager (balanced-sticky) static members reading with poll(): a restarted member gets its
    partitions back, a clean scale-in hands over without a single duplicate, commits cover
    everything."""
    group = bridge_group("balanced-sticky")
    producer = BackgroundProducer(kafka_broker.bootstrap, group.base["topic"], rate=400,
                                  partitions=PARTITIONS)
    try:
        for name in ("s0", "s1", "s2"):
            group.add(name, instance_id=f"instance-{name}", api="poll")
        first = group.wait_stable()
        assert_balanced(first)

        # a static follower does not leave on close: restarted within the session, it gets
        # its partitions back without a rebalance (so the leader computes nothing new)
        leader = group.leader()
        name = next(n for n in ("s0", "s1", "s2") if n != leader)
        generation = group.latest(name, "state")["generation"]  # type: ignore[index]
        # the new process is started (and has imported everything) before the old one stops:
        # what must fit in the session is the consumer's restart, not Python's start-up
        group.add(f"{name}-again", instance_id=f"instance-{name}", api="poll", hold=True)
        group.wait_event(f"{name}-again", "ready")
        group.stop(name)
        group.go(f"{name}-again")
        restarted = group.wait_stable(check_report=False)
        assert restarted.pop(f"{name}-again") == first.pop(name)
        assert restarted == first
        assert group.latest(f"{name}-again", "state")["generation"] == generation  # type: ignore[index]

        leaving = next(n for n in group.live() if n != leader)
        group.stop(leaving)  # after session.timeout.ms the broker drops it: scale-in
        scaled_in = group.wait_stable()
        assert_balanced(scaled_in)
        assert leaving not in scaled_in and len(scaled_in) == 2
    finally:
        producer.stop()
    assert producer.failed == 0
    wait_consumed(group, producer.acked)
    for name in group.live():
        group.stop(name)

    from_crash, other = unexpected_duplicates(group)
    assert (from_crash, other) == (0, []), duplicate_timeline(group, other)
    assert committed_offsets(kafka_broker.bootstrap, group.base["group"]) == end_offsets(
        kafka_broker.bootstrap, group.base["topic"])


def reads_twice(group: BridgeGroup) -> int:
    """Records returned more than once, by any members of the group."""
    seen: dict[tuple[int, int], int] = {}
    for _name, p, o in group.consumed():
        seen[(p, o)] = seen.get((p, o), 0) + 1
    return sum(n - 1 for n in seen.values())


def wait_held(group: BridgeGroup, names: list[str], timeout: float = STABLE_TIMEOUT_S) -> None:
    """Until exactly ``names`` hold every partition once between them (their last state)."""
    deadline = time.monotonic() + timeout
    held: dict[str, list[int]] = {}
    while time.monotonic() < deadline:
        held = {n: s["assignment"] for n in names if (s := group.latest(n, "state"))}
        if len(held) == len(names) and sorted(p for ps in held.values() for p in ps) == list(
                range(PARTITIONS)):
            return
        time.sleep(0.2)
    raise AssertionError(f"{names} do not hold every partition after {timeout} s: {held}")


def test_join_then_clean_close_reads_nothing_twice_beside_plain_confluent_kafka(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """Issue 22's scenario: two members auto-committing every 100 ms, a third joins, 15 s later
    one closes cleanly; bridged cooperative-balanced-sticky members read nothing twice, as plain
    confluent-kafka members on cooperative-sticky (same topic and traffic, same run) do not."""
    topic = make_topic(PARTITIONS)
    groups = {
        "bridge": BridgeGroup(kafka_broker.bootstrap, unique_name("bridge"), topic,
                              "cooperative-balanced-sticky"),
        "plain": BridgeGroup(kafka_broker.bootstrap, unique_name("plain"), topic,
                             "cooperative-sticky"),
    }
    options: dict[str, dict[str, Any]] = {
        "bridge": {"auto_commit_ms": 100, "api": "poll"},
        "plain": {"auto_commit_ms": 100, "api": "poll", "plain": True}}
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=400, partitions=PARTITIONS)
    try:
        for kind, group in groups.items():
            group.add("a", **options[kind])
            group.add("b", **options[kind])
        for group in groups.values():
            wait_held(group, ["a", "b"])
        for kind, group in groups.items():
            group.add("c", **options[kind])
        for group in groups.values():
            wait_held(group, ["a", "b", "c"])
        time.sleep(15)
        for group in groups.values():
            group.stop("a")
        for group in groups.values():
            wait_held(group, ["b", "c"])
    finally:
        producer.stop()
        try:
            assert producer.failed == 0
            for group in groups.values():
                wait_consumed(group, producer.acked)
            twice = {kind: reads_twice(group) for kind, group in groups.items()}
        finally:
            for group in groups.values():
                group.close()
    print(f"\nread twice: {twice} (of {len(producer.acked)} records)")
    assert twice == {"bridge": 0, "plain": 0}


def test_after_a_stall_past_max_poll_interval_no_message_of_a_lost_partition_is_returned(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """A member that stops polling for longer than max.poll.interval.ms leaves the group; its next
    poll() reports _MAX_POLL_EXCEEDED once (an error event, as librdkafka), the one after runs
    on_lost before any message, and none librdkafka buffered for a partition the group has
    given to another member is ever returned."""
    import threading

    from kafka_assignors.confluent import Consumer

    topic = make_topic(PARTITIONS)
    conf = {"bootstrap.servers": kafka_broker.bootstrap, "group.id": unique_name("stall"),
            "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500, "max.poll.interval.ms": 7000,
            "auto.commit.interval.ms": 200}
    timeline: list[tuple[str, int]] = []
    held: set[int] = set()

    def on_assign(_c: Any, ps: list[Any]) -> None:
        held.update(p.partition for p in ps)
        timeline.extend(("assign", p.partition) for p in ps)

    def on_lost(_c: Any, ps: list[Any]) -> None:
        held.difference_update(p.partition for p in ps)
        timeline.extend(("lost", p.partition) for p in ps)

    def on_revoke(_c: Any, ps: list[Any]) -> None:
        held.difference_update(p.partition for p in ps)

    stop = threading.Event()
    other_assignment: list[int] = []

    def other_member() -> None:
        other = Consumer({**conf, "client.id": "other"})
        other.subscribe([topic])
        try:
            while not stop.is_set():
                other.poll(0.1)
                other_assignment[:] = sorted(tp.partition for tp in other.assignment())
        finally:
            other.close()

    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=400, partitions=PARTITIONS)
    stalled = Consumer({**conf, "client.id": "stalled"})
    thread = threading.Thread(target=other_member, daemon=True)
    try:
        stalled.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
        thread.start()
        deadline = time.monotonic() + STABLE_TIMEOUT_S
        while len(held) + len(other_assignment) != PARTITIONS or not held:
            assert time.monotonic() < deadline, (held, other_assignment)
            stalled.poll(0.1)
        timeline.clear()
        deadline = time.monotonic() + STABLE_TIMEOUT_S  # the stall: until the group moved on
        while len(other_assignment) != PARTITIONS:
            assert time.monotonic() < deadline, other_assignment
            time.sleep(0.2)
        deadline = time.monotonic() + 10  # the other member holds everything: error, lost
        while time.monotonic() < deadline:
            msg = stalled.poll(0.1)
            if msg is not None and msg.error() is not None:
                timeline.append((msg.error().name(), -1))
            elif msg is not None:
                timeline.append(("message", msg.partition()))
                assert msg.partition() in held, (msg.partition(), held, timeline[:20])
        # as librdkafka: the stall is reported once, as an error event, then on_lost runs
        assert [e for e, _ in timeline[:2]] == ["_MAX_POLL_EXCEEDED", "lost"], timeline[:20]
        assert [e for e, _ in timeline if e.startswith("_")] == ["_MAX_POLL_EXCEEDED"], timeline
    finally:
        stop.set()
        thread.join(40)
        stalled.close()
        producer.stop()
