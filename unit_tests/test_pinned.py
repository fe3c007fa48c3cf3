"""Pinned assignment on the model: pins honoured, conflicts resolved, failover and return."""

from __future__ import annotations

import logging
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.broadcast import broadcast
from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.core.pinned import member_pins, pinned
from kafka_assignors.core.validate import InvalidAssignmentError, validate_assignment

from . import reference as ref
from .strategies import groups

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def pinned_groups(draw: st.DrawFn) -> GroupSpec:
    group = draw(groups())
    names = [*group.topics, "gone"]
    members = []
    for m in group.members:
        pins = draw(st.lists(st.one_of(
            st.tuples(st.sampled_from(names), st.one_of(st.none(), st.integers(0, 7))),
            st.just(("bad",)), st.just(("t", -1)),
        ), max_size=4))
        members.append(MemberSpec(m.member_id, m.topics, m.owned, m.generation, m.instance_id,
                                  user_data={"pinned": [list(p) for p in pins]}))
    return GroupSpec(tuple(members), group.topics)


def explicit_pins(group: GroupSpec) -> dict[tuple[str, int], str]:
    """Valid partition pins, the member sorting first winning each."""
    out: dict[tuple[str, int], str] = {}
    for m in sorted(group.members, key=lambda m: (m.sort_key, m.member_id)):
        for t, p in member_pins(m)[0]:
            if t in ref.usable(group, m) and p < group.partition_count(t):
                out.setdefault((t, p), m.member_id)
    return out


@SETTINGS
@given(pinned_groups())
def test_valid_whatever_the_pins(group: GroupSpec) -> None:
    """Every partition exactly once to a subscriber, whatever members pin."""
    validate_assignment(group, pinned(group))


@SETTINGS
@given(pinned_groups())
def test_every_valid_pin_is_honoured(group: GroupSpec) -> None:
    """A pinned partition goes to its pinner (the first in sort order on a conflict)."""
    owner = ref.owner_map(pinned(group))
    for tp, member in explicit_pins(group).items():
        assert owner[tp] == member


@SETTINGS
@given(pinned_groups())
def test_whole_topic_pins_keep_the_topic_among_its_pinners(group: GroupSpec) -> None:
    """A topic pinned whole goes only to the members pinning it (or pinning its partitions)."""
    owner = ref.owner_map(pinned(group))
    explicit = explicit_pins(group)
    whole: dict[str, set[str]] = {}
    for m in group.members:
        for t in member_pins(m)[1]:
            if t in ref.usable(group, m):
                whole.setdefault(t, set()).add(m.member_id)
    for t, pinners in whole.items():
        for p in range(group.partition_count(t)):
            if (t, p) not in explicit:
                assert owner[(t, p)] in pinners


@SETTINGS
@given(pinned_groups(), st.randoms(use_true_random=False))
def test_deterministic_in_any_member_order(group: GroupSpec, rnd: random.Random) -> None:
    """The same group in any member order gives the same assignment."""
    shuffled = list(group.members)
    rnd.shuffle(shuffled)
    assert pinned(GroupSpec(tuple(shuffled), group.topics)) == pinned(group)


@SETTINGS
@given(pinned_groups())
def test_rerun_on_its_own_result_moves_nothing(group: GroupSpec) -> None:
    """A group that rejoins with what it was given keeps everything."""
    a = pinned(group)
    again = GroupSpec(tuple(
        MemberSpec(m.member_id, m.topics, a[m.member_id], 9, m.instance_id,
                   user_data=m.user_data) for m in group.members), group.topics)
    assert ref.moves(again, pinned(again)) == 0


@SETTINGS
@given(groups())
def test_without_pins_it_is_as_balanced_as_balanced_sticky(group: GroupSpec) -> None:
    """No pins at all: loads are those of an optimal semi-matching, as balanced-sticky's."""
    assert sorted(ref.loads(pinned(group)).values()) == sorted(
        ref.loads(balanced_sticky(group)).values())


# pins: any user data, malformed pins included (test_bad_pins_are_ignored_and_logged)
def member(mid: str, pins: object = None, owned: dict[str, list[int]] | None = None,
           instance: str | None = None) -> MemberSpec:
    return MemberSpec(mid, frozenset(["t", "u"]), owned or {}, 1 if owned else -1, instance,
                      user_data={"pinned": pins} if pins is not None else {})


def test_unpinned_partitions_balance_around_the_pins() -> None:
    """A member pinning 4 partitions gets nothing else until the others have as many."""
    group = GroupSpec.build([member("a", [["t", p] for p in range(4)]), member("b"),
                             member("c")], {"t": 8, "u": 2})
    a = pinned(group)
    assert a["a"] == {"t": [0, 1, 2, 3]}
    assert sorted(ref.loads(a).values()) == [3, 3, 4]


def test_conflicting_pins_go_to_the_first_member_and_are_logged(caplog: Any) -> None:
    """Two members pin t-0: the one sorting first gets it, and a warning names both."""
    group = GroupSpec.build([member("b", [["t", 0]]), member("a", [["t", 0]])], {"t": 2, "u": 0})
    with caplog.at_level(logging.WARNING):
        a = pinned(group)
    assert 0 in a["a"]["t"]
    assert "t-0 to a, not b" in caplog.text


def test_static_instance_id_decides_conflicts_before_member_id() -> None:
    """A static member (instance id) sorts before dynamic ones, so it keeps contested pins."""
    group = GroupSpec.build([member("a", [["t", 0]]), member("z", [["t", 0]], instance="i-1")],
                            {"t": 2, "u": 0})
    assert 0 in pinned(group)["z"]["t"]


def test_a_pinners_partitions_fail_over_and_come_back() -> None:
    """When the pinning member leaves, its partitions go to others; when it returns, to it."""
    pins = [["t", 0], ["t", 1]]
    three = GroupSpec.build([member("a", pins), member("b"), member("c")], {"t": 6, "u": 0})
    first = pinned(three)
    assert first["a"] == {"t": [0, 1]}
    # a leaves: its pins leave with it
    two = GroupSpec.build([member(m, owned=first[m]) for m in ("b", "c")], {"t": 6, "u": 0})
    second = pinned(two)
    assert sorted(ref.loads(second).values()) == [3, 3]
    # a comes back: the pinned partitions return
    back = GroupSpec.build([member("a", pins), *(member(m, owned=second[m]) for m in "bc")],
                           {"t": 6, "u": 0})
    third = pinned(back)
    assert third["a"] == {"t": [0, 1]}
    assert ref.moves(back, third) == 2


def test_bad_pins_are_ignored_and_logged(caplog: Any) -> None:
    """Pins on unsubscribed topics, missing partitions or garbage are ignored with a warning."""
    group = GroupSpec.build([member("a", [["nope", 0], ["t", 99], "x", ["t", True]]),
                             member("b", "not a list")], {"t": 2, "u": 2})
    with caplog.at_level(logging.WARNING):
        a = pinned(group)
    validate_assignment(group, a)
    assert "pin(s) ignored" in caplog.text


def test_broadcast_gives_every_member_its_whole_subscription() -> None:
    """Broadcast: each member gets all partitions of the topics it subscribes to."""
    members = [MemberSpec("a", frozenset(["t"])), MemberSpec("b", frozenset(["t", "u", "x"]))]
    group = GroupSpec.build(members, {"t": 3, "u": 2})
    a = broadcast(group)
    assert a == {"a": {"t": [0, 1, 2]}, "b": {"t": [0, 1, 2], "u": [0, 1]}}
    validate_assignment(group, a, broadcast=True)


@SETTINGS
@given(groups())
def test_broadcast_is_valid_as_a_broadcast(group: GroupSpec) -> None:
    """Broadcast passes the leader's broadcast validation for any group."""
    validate_assignment(group, broadcast(group), broadcast=True)


@pytest.mark.parametrize(
    "bad",
    [
        {"a": {"t": [0, 0, 1]}, "b": {"t": [1]}},  # totals match, but b never gets t-0
        {"a": {"t": [0, 1]}, "b": {"t": [0, 1, 1]}},  # a duplicate on one member
        {"a": {"t": [0, 1]}, "b": {"t": [0, 1], "u": [0]}},  # u is not b's topic
        {"a": {"t": [0, 1]}},  # b is left out
        {"a": {"t": [0, 1]}, "b": {"t": [1, 2]}},  # no t-2 exists
    ],
)
def test_broadcast_validation_checks_every_member(bad: dict[str, dict[str, list[int]]]) -> None:
    """The leader's broadcast check is per member: each subscriber holds each partition once."""
    group = GroupSpec.build([MemberSpec("a", frozenset(["t"])), MemberSpec("b", frozenset(["t"]))],
                            {"t": 2, "u": 1})
    validate_assignment(group, {"a": {"t": [1, 0]}, "b": {"t": [0, 1]}}, broadcast=True)
    with pytest.raises(InvalidAssignmentError):
        validate_assignment(group, bad, broadcast=True)
