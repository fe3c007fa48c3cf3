"""Bridged confluent-kafka consumers (kafka_assignors.confluent) in live groups on a real broker.

Members are separate processes (``confluent_member.py``) so one can be
SIGKILLed; a producer writes throughout.  Each stable state must be exactly what
the leader's assignor computed (its ``last_report``), every produced message
must be consumed, duplicates may only come from the killed member, and the
commits must be visible to the admin API.
"""

from __future__ import annotations

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
        assert moved(first, joined) == 3  # sticky: only what the newcomer needs moves

        group.stop("m0")  # clean leave
        after_leave = group.wait_stable()
        assert_balanced(after_leave)
        assert moved(joined, after_leave) == len(joined["m0"])

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
    assert other == [], f"duplicates without a crash: {other[:10]}"
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
        group.stop(name)
        group.add(f"{name}-again", instance_id=f"instance-{name}", api="poll")
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
    assert (from_crash, other) == (0, [])
    assert committed_offsets(kafka_broker.bootstrap, group.base["group"]) == end_offsets(
        kafka_broker.bootstrap, group.base["topic"])
