"""Co-partitioned assignment on the model: joined partitions together, balanced, sticky."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_assignors.core.balanced_sticky import usable_topics
from kafka_assignors.core.co_partitioned import co_partitioned, join_groups
from kafka_assignors.core.cooperative import withhold_moving
from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.core.validate import validate_assignment

from . import reference as ref
from .strategies import groups

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def owner_of(a: dict[str, dict[str, list[int]]]) -> dict[tuple[str, int], str]:
    return ref.owner_map(a)


@SETTINGS
@given(groups())
def test_valid(group: GroupSpec) -> None:
    """Every partition of a subscribed topic exactly once, to a subscriber."""
    validate_assignment(group, co_partitioned(group))


@SETTINGS
@given(groups())
def test_partition_i_of_a_join_group_has_one_owner(group: GroupSpec) -> None:
    """Topics with the same count and subscribers: partition i of all of them, one member."""
    a = co_partitioned(group)
    owner = owner_of(a)
    subs = [usable_topics(group, m) for m in group.members]
    for topics, n, _takers in join_groups(group, subs):
        for p in range(n):
            assert len({owner[(t, p)] for t in topics}) == 1


@SETTINGS
@given(groups())
def test_partition_numbers_spread_evenly_in_each_join_group(group: GroupSpec) -> None:
    """In each join group every subscriber gets floor or ceil of n / subscribers numbers."""
    a = co_partitioned(group)
    owner = owner_of(a)
    members = sorted(group.members, key=lambda m: (m.sort_key, m.member_id))
    subs = [usable_topics(group, m) for m in members]
    for topics, n, takers in join_groups(group, subs):
        got = [sum(1 for p in range(n) if owner[(topics[0], p)] == members[i].member_id)
               for i in takers]
        assert max(got) - min(got) <= 1


@SETTINGS
@given(groups(), st.randoms(use_true_random=False))
def test_deterministic_in_any_member_order(group: GroupSpec, rnd: random.Random) -> None:
    """The same group in any member order gives the same assignment."""
    shuffled = list(group.members)
    rnd.shuffle(shuffled)
    assert co_partitioned(GroupSpec(tuple(shuffled), group.topics)) == co_partitioned(group)


def _rejoin(group: GroupSpec, a: dict[str, dict[str, list[int]]]) -> list[MemberSpec]:
    return [MemberSpec(m.member_id, m.topics, a[m.member_id], 3, m.instance_id)
            for m in group.members]


@SETTINGS
@given(groups())
def test_rerun_on_its_own_result_moves_nothing(group: GroupSpec) -> None:
    """A group that rejoins with what it was given keeps everything."""
    again = GroupSpec(tuple(_rejoin(group, co_partitioned(group))), group.topics)
    assert ref.moves(again, co_partitioned(again)) == 0


@SETTINGS
@given(groups(uniform=True, with_claims=False), st.data())
def test_join_and_leave_move_only_what_balance_needs(group: GroupSpec,
                                                     data: st.DataObject) -> None:
    """With one join group, a leave or join moves no more numbers than the new shares force."""
    first = co_partitioned(group)
    members = _rejoin(group, first)
    if len(members) > 1 and data.draw(st.booleans()):
        members.pop(data.draw(st.integers(0, len(members) - 1)))
    else:
        members.append(MemberSpec("joiner", members[0].topics))
    after = GroupSpec(tuple(members), group.topics)
    second = co_partitioned(after)
    jgs = join_groups(after, [usable_topics(after, m) for m in members])
    if len(jgs) == 1:
        # fewest moves: each member keeps its numbers up to its share, larger shares
        # going to the members that owned the most
        topics, n, takers = jgs[0]
        base, extra = divmod(n, len(takers))
        owned = sorted((len(m.owned.get(topics[0], [])) for m in members), reverse=True)
        quotas = [base + 1] * extra + [base] * (len(takers) - extra)
        fewest = sum(max(0, o - q) for o, q in zip(owned, quotas, strict=True))
        assert ref.moves(after, second) == fewest * len(topics)
    holders = {t: {p: frozenset([m.member_id]) for p in ps}
               for m in members for t, ps in m.owned.items()}
    round_one, _ = withhold_moving(second, holders)
    for mid, bt in round_one.items():
        for t, ps in bt.items():
            assert all(holders.get(t, {}).get(p, frozenset([mid])) == {mid} for p in ps)


def test_orders_and_payments_join_even_when_counts_do_not_divide() -> None:
    """Two 5-partition topics over 2 consumers: 3 and 2 numbers, both topics together."""
    members = [MemberSpec(c, frozenset(["orders", "payments"])) for c in ("c0", "c1")]
    a = co_partitioned(GroupSpec.build(members, {"orders": 5, "payments": 5}))
    assert a == {"c0": {"orders": [0, 2, 4], "payments": [0, 2, 4]},
                 "c1": {"orders": [1, 3], "payments": [1, 3]}}


def test_topics_with_other_counts_form_their_own_group() -> None:
    """A 3-partition topic beside two 4-partition ones is balanced on its own."""
    members = [MemberSpec(c, frozenset(["a", "b", "c"])) for c in ("c0", "c1")]
    a = co_partitioned(GroupSpec.build(members, {"a": 4, "b": 4, "c": 3}))
    assert a["c0"]["a"] == a["c0"]["b"] and a["c1"]["a"] == a["c1"]["b"]
    assert sorted(len(v["c"]) for v in a.values()) == [1, 2]
    # the member with fewer partitions so far takes the larger share of c
    totals = {m: sum(map(len, v.values())) for m, v in a.items()}
    assert max(totals.values()) - min(totals.values()) <= 1


def test_a_joiner_takes_whole_partition_numbers_from_the_others() -> None:
    """After a join, the owners keep their numbers up to the new share; pairs stay together."""
    owned = {"c0": [0, 2, 4], "c1": [1, 3, 5]}
    members = [MemberSpec(c, frozenset(["x", "y"]), {"x": ps, "y": ps}, 4)
               for c, ps in owned.items()]
    members.append(MemberSpec("c2", frozenset(["x", "y"])))
    a = co_partitioned(GroupSpec.build(members, {"x": 6, "y": 6}))
    assert all(v["x"] == v["y"] and len(v["x"]) == 2 for v in a.values())
    assert set(a["c0"]["x"]) < {0, 2, 4} and set(a["c1"]["x"]) < {1, 3, 5}
