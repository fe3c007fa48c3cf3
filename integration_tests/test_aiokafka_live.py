"""A mixed aiokafka + kafka-python group on balanced-sticky, live on a real broker.

kafka-python members are :class:`GroupRunner` processes; aiokafka members are
``aiokafka_member.py`` processes (``kafka_assignors.aiokafka``), reporting events in
the same format.  The group goes through its formation, a join, a clean leave and a
crash (SIGKILL, noticed at the 6 s session timeout); after each step the assignment,
read from the members and from the broker (DescribeGroups), must be valid across both
libraries, balanced, on ``balanced-sticky``, and sticky: exactly the partitions balance
requires move, and the result is what the pure core computes.

The first member of an empty group becomes its leader and stays leader until it
leaves, so each parametrization forces one library to lead: ``aiokafka-leads`` (an
aiokafka leader assigns to kafka-python members, reading their owned partitions) and
``kafka-python-leads`` (the reverse).  In each, the leader then leaves (crash or clean
leave) and the broker picks a new leader at random; that step checks whoever it is.
One message per partition checks that owners really consume, and that committed
offsets carry over (no message is read twice).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer

from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.embedded import GroupRunner
from kafka_assignors.embedded.events import MemberConfig, MemberView
from kafka_assignors.negotiation import describe_group_strategy

from .child_members import ChildMember, ChildMembers
from .conftest import BrokerHandle
from .ledger import minimal_moves, moved, spread

MEMBER = Path(__file__).with_name("aiokafka_member.py")
WIRE = "balanced-sticky"
KAFKA_PYTHON_STRATEGY = "kafka_assignors:BalancedStickyAssignor"
TOPICS = {"a": 12, "b": 6}  # prefixes; real names are unique per test
SESSION_MS = 6_000
STABLE_TIMEOUT_S = 60.0
SETTLE_S = 1.5
# the kafka-python members log at INFO so the leader's "balanced-sticky: assigned ..." shows
KAFKA_PYTHON_OPTIONS: dict[str, Any] = {
    "session_timeout_ms": SESSION_MS,
    "heartbeat_interval_ms": 500,
    "report_records": True,
    "log_level": "INFO",
    "consumer_config": {"metadata_max_age_ms": 5_000, "auto_commit_interval_ms": 1_000},
}
ASSIGNED_LOG = re.compile(rf"{WIRE}: assigned (\d+) partition\(s\) to (\d+) member\(s\)")
# what a leader logs when it could not read a member's owned partitions
LOST_OWNERSHIP = ("treating it as owning nothing", "could not read full subscriptions",
                  "cannot be decoded")
TP = tuple[str, int]
State = dict[str, frozenset[TP]]
pytestmark = pytest.mark.timeout(240)


class AioMembers(ChildMembers):
    """aiokafka member processes of one group; their events update a MemberView each."""

    def __init__(self, bootstrap: str, group: str, topics: list[str]) -> None:
        super().__init__(MEMBER, {
            "bootstrap": bootstrap, "group": group, "topics": topics, "strategy": WIRE,
            "session_timeout_ms": SESSION_MS, "heartbeat_interval_ms": 500,
            "metadata_max_age_ms": 5_000, "auto_commit_ms": 1_000, "report_records": True,
        })
        self._views: dict[str, MemberView] = {}

    def on_added(self, member: ChildMember) -> None:
        config = MemberConfig(name=member.name, bootstrap=self.base["bootstrap"],
                              group_id=self.base["group"], topics=tuple(self.base["topics"]),
                              strategies=(WIRE,), session_timeout_ms=SESSION_MS)
        # the view keeps the member's event list (MemberView.apply appends to it)
        self._views[member.name] = MemberView(index=len(self._views), name=member.name,
                                              config=config, pid=member.proc.pid,
                                              events=member.events)

    def on_event(self, member: ChildMember, event: dict[str, Any]) -> None:
        self._views[member.name].apply(event)

    def views(self) -> dict[str, MemberView]:
        """Copies of the live members' views (not stopped or killed)."""
        with self._lock:
            return {n: replace(self._views[n], events=list(self._views[n].events))
                    for n, m in self.members.items() if not m.gone}

    def check_alive(self) -> None:
        for name, m in self.members.items():
            if not m.gone and m.proc.poll() is not None:
                raise AssertionError(f"aiokafka member {name} exited on its own\n"
                                     + self.log_tail(name))


class MixedGroup:
    """kafka-python members (GroupRunner) and aiokafka members (AioMembers) in one group."""

    def __init__(self, bootstrap: str, runner: GroupRunner, aio: AioMembers,
                 topics: dict[str, int]) -> None:
        self.bootstrap = bootstrap
        self.runner = runner
        self.aio = aio
        self.topics = topics
        self.expected = frozenset((t, p) for t, n in topics.items() for p in range(n))
        self.kp_index: dict[str, int] = {}

    # -- members ------------------------------------------------------------------------
    def add_kafka_python(self, name: str) -> None:
        self.kp_index[name] = self.runner.add_member(name=name)

    def add_aiokafka(self, name: str) -> None:
        self.aio.add(name)

    def live(self) -> dict[str, MemberView]:
        views = {v.name: v for v in self.runner.members() if v.alive and not v.stopping}
        views.update(self.aio.views())
        return views

    def library(self, name: str) -> str:
        return "kafka-python" if name in self.kp_index else "aiokafka"

    def describe(self) -> str:
        return "\n  ".join(v.describe() for v in self.live().values())

    def ownership_warnings(self) -> list[str]:
        """Log lines (every member, both libraries) of a leader that lost owned partitions."""
        texts = [self.aio.log_text(n) for n in self.aio.members]
        texts += [self.runner.member_log(i) for i in self.kp_index.values()]
        return [line for text in texts for line in text.splitlines()
                if any(w in line for w in LOST_OWNERSHIP)]

    def last_report(self, name: str) -> dict[str, Any]:
        return [e for e in self.aio.events(name) if e["event"] == "report"][-1]

    def logs(self) -> str:
        parts = [self.aio.log_tail(n) for n in self.aio.views()]
        parts += [f"--- {n} log ---\n{self.runner.member_log(i, tail=30)}"
                  for n, i in self.kp_index.items()]
        return "\n".join(parts)

    # -- waiting ------------------------------------------------------------------------
    def _problem(self, after_generation: int) -> str | None:
        live = self.live()
        if not live:
            return "no live members"
        if any(v.state != "STABLE" for v in live.values()):
            return "not all STABLE"
        generations = {v.generation for v in live.values()}
        if len(generations) != 1:
            return f"members on generations {sorted(generations)}"
        if min(generations) <= after_generation:
            return f"no rebalance after generation {after_generation} yet"
        owners: dict[TP, str] = {}
        for name, v in live.items():
            for tp in v.assignment:
                if tp in owners:
                    return f"{tp} owned by {owners[tp]} and {name}"
                owners[tp] = name
        if owners.keys() != self.expected:
            return f"assigned {len(owners)} of {len(self.expected)} partitions"
        return None

    def wait_stable(self, after_generation: int = 0, timeout: float = STABLE_TIMEOUT_S) -> State:
        """Every live member (both libraries) STABLE on one generation newer than
        ``after_generation``, every partition exactly once, unchanged for SETTLE_S."""
        deadline = time.monotonic() + timeout
        since: float | None = None
        key: Any = None
        problem: str | None = "not checked"
        while time.monotonic() < deadline:
            self.aio.check_alive()
            for v in self.runner.members():
                if not v.alive and not v.stopping and not v.killed:
                    raise AssertionError(f"{v.name} exited on its own\n"
                                         + self.runner.member_log(v.index, tail=40))
            problem = self._problem(after_generation)
            if problem is None:
                now_key = sorted((n, v.generation, v.assignment) for n, v in self.live().items())
                if now_key != key:
                    key, since = now_key, time.monotonic()
                elif since is not None and time.monotonic() - since >= SETTLE_S:
                    return {n: v.assignment for n, v in self.live().items()}
            else:
                key = since = None
            time.sleep(0.1)
        raise AssertionError(f"group not stable after {timeout:.0f} s: {problem}\n  "
                             f"{self.describe()}\n{self.logs()}")

    def generation(self) -> int:
        return max((v.generation for v in self.live().values()), default=0)

    # -- leaders ------------------------------------------------------------------------
    def kp_assign_lines(self) -> dict[str, list[tuple[int, int]]]:
        """(partitions, members) of every assignment each kafka-python member computed."""
        return {name: [(int(a), int(b)) for a, b in
                       ASSIGNED_LOG.findall(self.runner.member_log(index))]
                for name, index in self.kp_index.items()}

    def leaders(self, state: State, kp_before: dict[str, list[tuple[int, int]]]) -> set[str]:
        """Live members that computed ``state``: an aiokafka member whose last report is
        exactly it, or a kafka-python member that logged a new assignment for as many
        members since ``kp_before``."""
        live = self.live()
        ids = {v.member_id: n for n, v in live.items()}
        found = set()
        for name in self.aio.views():
            reports = [e for e in self.aio.events(name) if e["event"] == "report"]
            if not reports:
                continue
            report = reports[-1]
            if set(report["target"]) != set(ids):
                continue
            computed = {ids[m]: frozenset((t, p) for t, p in ps)
                        for m, ps in report["target"].items()}
            assert report["sent"] == report["target"], f"{name}: eager sends the target"
            if computed == state:
                found.add(name)
        for name, lines in self.kp_assign_lines().items():
            new = lines[len(kp_before.get(name, [])):]
            if name in live and new and new[-1] == (len(self.expected), len(state)):
                found.add(name)
        return found

    def wait_leader(self, state: State, kp_before: dict[str, list[tuple[int, int]]]) -> str:
        deadline = time.monotonic() + 10
        found: set[str] = set()
        while time.monotonic() < deadline:
            found = self.leaders(state, kp_before)
            if len(found) == 1:
                return found.pop()
            time.sleep(0.2)
        raise AssertionError(f"expected one leader for {sorted(state)}, found {sorted(found)}"
                             f"\n{self.logs()}")

    # -- the broker's view -------------------------------------------------------------
    def check_broker_view(self, state: State, group_id: str) -> None:
        """DescribeGroups: Stable, on balanced-sticky, with exactly this assignment."""
        deadline = time.monotonic() + 15
        while True:
            described = describe_group_strategy(self.bootstrap, group_id)
            if described.state == "Stable" and described.assignments() == state:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"broker shows {described}, members show {state}")
            time.sleep(0.5)
        assert described.strategy == WIRE
        assert {m.client_id for m in described.members} == set(state)


def core_answer(group: MixedGroup, before: State, state_members: list[str]) -> State:
    """What the pure core computes for the live members, given what each owned before."""
    live = group.live()
    specs = [
        MemberSpec(
            member_id=live[name].member_id,
            topics=frozenset(group.topics),
            owned={t: sorted(p for tt, p in before.get(name, frozenset()) if tt == t)
                   for t in group.topics},
            generation=1 if before.get(name) else -1,
            instance_id=None,
        )
        for name in state_members
    ]
    result = balanced_sticky(GroupSpec.build(specs, dict(group.topics)))
    by_id = {live[name].member_id: name for name in state_members}
    return {by_id[m]: frozenset((t, p) for t, ps in a.items() for p in ps)
            for m, a in result.items()}


def produce_one_per_partition(bootstrap: str, topics: dict[str, int], tag: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all")
    try:
        for topic, n in topics.items():
            for p in range(n):
                producer.send(topic, value=f"{tag}-{topic}-{p}".encode(), partition=p)
        producer.flush(30)
    finally:
        producer.close(timeout=10)


def reads(group: MixedGroup) -> list[tuple[str, str, int, str]]:
    """(member, topic, partition, value) of every record any member (ever) reported."""
    rows = [(n, e["topic"], int(e["partition"]), str(e["value"]))
            for v in group.runner.members() for n, e in ((v.name, e) for e in v.events)
            if e.get("event") == "record"]
    rows += [(n, e["topic"], int(e["partition"]), str(e["value"]))
             for n in group.aio.members for e in group.aio.events(n) if e["event"] == "record"]
    return rows


def wait_read_by_owners(group: MixedGroup, state: State, tag: str, timeout: float = 30) -> None:
    owner = {tp: name for name, tps in state.items() for tp in tps}
    want = {(owner[(t, p)], t, p, f"{tag}-{t}-{p}") for t, p in owner}
    deadline = time.monotonic() + timeout
    got: set[tuple[str, str, int, str]] = set()
    while time.monotonic() < deadline:
        got = {r for r in reads(group) if r[3].startswith(f"{tag}-")}
        if got >= want:
            break
        time.sleep(0.2)
    assert got == want, (f"{tag}: not read by the owners: missing {sorted(want - got)[:5]}, "
                         f"unexpected {sorted(got - want)[:5]}")


@pytest.fixture
def mixed_group(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], unique_name: Callable[[str], str],
) -> Iterator[tuple[MixedGroup, str]]:
    topics = {make_topic(n): n for n in TOPICS.values()}
    group_id = unique_name("group")
    runner = make_group(list(topics), [KAFKA_PYTHON_STRATEGY], group_id=group_id,
                        **KAFKA_PYTHON_OPTIONS)
    aio = AioMembers(kafka_broker.bootstrap, group_id, list(topics))
    try:
        yield MixedGroup(kafka_broker.bootstrap, runner, aio, topics), group_id
    finally:
        aio.close()


@pytest.mark.parametrize("leading", ["aiokafka", "kafka-python"],
                         ids=["aiokafka-leads", "kafka-python-leads"])
def test_mixed_group_through_join_leave_and_crash_stays_valid_balanced_and_sticky(
    mixed_group: tuple[MixedGroup, str], leading: str
) -> None:
    group, group_id = mixed_group
    total = len(group.expected)
    # the first member of the empty group leads until it leaves
    if leading == "aiokafka":
        group.add_aiokafka("aio-0")
        first, leave, crash = "aio-0", "kp-0", "aio-0"
    else:
        group.add_kafka_python("kp-0")
        first, leave, crash = "kp-0", "kp-0", "aio-0"
    alone = group.wait_stable()
    assert alone == {first: group.expected}

    def form() -> None:
        if leading == "aiokafka":
            group.add_kafka_python("kp-0")
            group.add_kafka_python("kp-1")
        else:
            group.add_kafka_python("kp-1")
            group.add_aiokafka("aio-0")

    def stop(name: str) -> Callable[[], None]:
        def clean_stop() -> None:
            if group.library(name) == "kafka-python":
                group.runner.stop_member(group.kp_index[name])
            else:
                group.aio.stop(name)

        return clean_stop

    steps: list[tuple[str, Callable[[], None], str | None]] = [
        ("form", form, first),
        ("join", lambda: group.add_aiokafka("aio-1"), first),
        # after the leader leaves, the broker picks any member as the new leader
        ("leave", stop(leave), None if leave == first else first),
        ("crash", lambda: group.aio.kill(crash), None if crash == first or leave == first
         else first),
    ]
    state = alone
    led_by: dict[str, str] = {}
    for what, action, expected_leader in steps:
        before = state
        generation = group.generation()
        kp_before = group.kp_assign_lines()
        action()
        state = group.wait_stable(after_generation=generation)
        context = f"{what}: {group.describe()}"
        # valid (wait_stable: every partition exactly once across both libraries), balanced
        assert spread(state) <= 1, context
        assert {n: v.protocol for n, v in group.live().items()} == dict.fromkeys(state, WIRE)
        group.check_broker_view(state, group_id)
        # sticky: only the partitions balance requires move ...
        assert moved(before, state) == minimal_moves(before, state, total), context
        # ... and (one rebalance per step after formation) exactly what the core computes
        if what != "form":
            assert state == core_answer(group, before, sorted(state)), context
        leader = group.wait_leader(state, kp_before)
        led_by[what] = leader
        if what != "form" and group.library(leader) == "aiokafka":
            # an aiokafka leader read every member's owned partitions (kafka-python's too)
            assert group.last_report(leader)["moved"] == moved(before, state), context
        if expected_leader is not None:
            assert leader == expected_leader, f"{what}: led by {leader}, not {expected_leader}"
        if what == "form":
            produce_one_per_partition(group.bootstrap, group.topics, "round1")
            wait_read_by_owners(group, state, "round1")

    print(f"leaders by step ({leading} first): {led_by}")  # shown with pytest -s
    assert group.library(led_by["form"]) == leading
    # the final owners read new messages; nothing was read twice (offsets were committed)
    produce_one_per_partition(group.bootstrap, group.topics, "round2")
    wait_read_by_owners(group, state, "round2")
    values = [r[3] for r in reads(group)]
    assert group.ownership_warnings() == []
    assert sorted(values) == sorted(set(values)), "a message was read twice"
