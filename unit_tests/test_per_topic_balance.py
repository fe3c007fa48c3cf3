"""Every topic balanced, through kafka-python's real encode/decode path, joins and leaves.

Members are real assignor instances; subscriptions and assignments go through
``encode()``/``decode()`` as on the wire; the leader is one of the members.  The
reference is an exact min-cost flow over assignments with total spread <= 1 and
every topic's spread <= 1 (identical subscriptions), written from that
definition alone.
"""

from __future__ import annotations

import logging
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.core.validate import validate_assignment

from . import reference as ref
from .fakes import FakeCluster, FakeMember, assigned, subscription_of

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class WireGroup:
    """A consumer group of assignor instances that rebalances as kafka-python's would."""

    def __init__(self, cls: type, counts: dict[str, int]) -> None:
        self.cls = cls
        self.counts = counts
        self.cluster = FakeCluster(counts)
        self.members: dict[str, Any] = {}
        self.generation = 0
        self.next_id = 0
        self.owned: dict[str, dict[str, list[int]]] = {}

    def join(self) -> None:
        self.members[f"c{self.next_id:03d}"] = self.cls()
        self.next_id += 1

    def leave(self, member: str) -> None:
        del self.members[member]
        self.owned.pop(member, None)

    def spec(self) -> GroupSpec:
        """What the leader is about to see, as the reference's input."""
        return GroupSpec.build(
            [MemberSpec(m, frozenset(self.counts), self.owned.get(m, {}), self.generation)
             for m in self.members],
            self.counts,
        )

    def rebalance(self) -> tuple[dict[str, dict[str, list[int]]], int]:
        """Rounds until nothing is withheld; returns the stable assignment and the rounds."""
        for rounds in range(1, 4):
            self.generation += 1
            wire = [FakeMember(m, subscription_of(a, sorted(self.counts)))
                    for m, a in self.members.items()]
            leader = self.members[sorted(self.members)[0]]
            result = leader.assign(self.cluster, wire)
            for m, a in self.members.items():
                got = ConsumerProtocolAssignment.decode(result[m].encode())
                a.on_assignment(got, self.generation)
            self.owned = {m: bt for m, bt in assigned(result).items() if bt}
            if not leader.last_report.pending_second_round:
                return assigned(result), rounds
        raise AssertionError("the cooperative rounds did not settle")


def check_even_and_fewest_moves(before: GroupSpec, after: dict[str, dict[str, list[int]]]) -> None:
    validate_assignment(before, after)
    loads = ref.loads(after).values()
    assert max(loads) - min(loads) <= 1
    assert all(s <= 1 for s in ref.topic_spreads(before, after).values())
    assert ref.moves(before, after) == ref.fewest_moves_even(before)


events = st.lists(st.tuples(st.booleans(), st.integers(1, 3), st.integers(0, 99)),
                  min_size=1, max_size=5)


@SETTINGS
@given(
    st.dictionaries(st.sampled_from("abcd"), st.integers(1, 12), min_size=1),
    st.integers(1, 6),
    events,
    st.sampled_from([BalancedStickyAssignor, CooperativeBalancedStickyAssignor]),
)
def test_joins_and_leaves_keep_every_topic_even_with_fewest_moves(
    counts: dict[str, int], first: int, steps: list[tuple[bool, int, int]], cls: type
) -> None:
    """Every stable assignment: total and every topic within 1, and no more moves than
    the fewest any assignment with both properties needs (eager and cooperative)."""
    group = WireGroup(cls, counts)
    for _ in range(first):
        group.join()
    before = group.spec()
    check_even_and_fewest_moves(before, group.rebalance()[0])
    for leave, n, pick in steps:
        for _ in range(n):
            if leave and len(group.members) > 1:
                names = sorted(group.members)
                group.leave(names[pick % len(names)])
            elif not leave:
                group.join()
        before = group.spec()
        after, rounds = group.rebalance()
        check_even_and_fewest_moves(before, after)
        assert rounds <= 2


def sticky_assignment(counts: dict[str, int], members: list[str],
                      history: list[list[str]]) -> dict[str, dict[str, list[int]]]:
    """kafka-python's own ``sticky`` through its own wire path, over a membership history."""
    instances = {m: StickyPartitionAssignor() for m in {m for ms in history for m in ms}}
    cluster = FakeCluster(counts)
    result: dict[str, dict[str, list[int]]] = {}
    for generation, current in enumerate(history, start=1):
        wire = [FakeMember(m, subscription_of(instances[m], sorted(counts))) for m in current]
        out = instances[current[0]].assign(cluster, wire)
        for m in current:
            instances[m].on_assignment(ConsumerProtocolAssignment.decode(out[m].encode()),
                                       generation)
        result = assigned(out)
    return result


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from("abc"), st.integers(1, 10), min_size=2),
    st.integers(2, 5),
    st.integers(0, 2),
)
def test_a_group_unbalanced_per_topic_is_repaired_in_one_rebalance_with_fewest_moves(
    counts: dict[str, int], size: int, joins: int
) -> None:
    """Owners from kafka-python's sticky (often uneven per topic): one rebalance evens every
    topic with the fewest moves, and the leader logs the moves beyond total balance."""
    first = [f"c{i:03d}" for i in range(size)]
    history = [first, first[1:], first[1:] + [f"j{i}" for i in range(joins)]]
    previous = sticky_assignment(counts, first, history)
    members = {m: BalancedStickyAssignor() for m in history[-1]}
    for m, a in members.items():  # as members that ran an older version would report
        a.on_assignment(ConsumerProtocolAssignment(0, sorted(previous[m].items()), b""), 5)
    before = GroupSpec.build(
        [MemberSpec(m, frozenset(counts), previous[m], 5) for m in members], counts
    )
    wire = [FakeMember(m, subscription_of(a, sorted(counts))) for m, a in members.items()]
    logger = logging.getLogger("kafka_assignors.core")
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign,assignment]
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        after = assigned(members[history[-1][0]].assign(FakeCluster(counts), wire))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    check_even_and_fewest_moves(before, after)
    extra = ref.moves(before, after) - ref.optimum(before)[1]
    said = [r.getMessage() for r in records if "per-topic balance moved" in r.getMessage()]
    if extra:
        assert said == [f"per-topic balance moved {extra} partition(s) more than total "
                        "balance alone needed"]
    else:
        assert said == []


def test_the_opt_out_keeps_the_old_tie_breaking() -> None:
    """per_topic_balance=False moves nothing to even out topics: one topic may pile up."""
    counts = {"a": 4, "b": 4}
    old = {"c0": {"a": [0, 1, 2, 3]}, "c1": {"b": [0, 1, 2, 3]}}
    for flag, expected in ((False, old), (True, None)):
        members = {m: BalancedStickyAssignor(per_topic_balance=flag) for m in old}
        for m, a in members.items():
            a.on_assignment(ConsumerProtocolAssignment(0, sorted(old[m].items()), b""), 1)
        wire = [FakeMember(m, subscription_of(a, sorted(counts))) for m, a in members.items()]
        got = assigned(members["c0"].assign(FakeCluster(counts), wire))
        if expected is not None:
            assert got == expected
        else:
            spec = GroupSpec.build(
                [MemberSpec(m, frozenset(counts), old[m], 1) for m in old], counts
            )
            check_even_and_fewest_moves(spec, got)
            assert ref.moves(spec, got) == 4
