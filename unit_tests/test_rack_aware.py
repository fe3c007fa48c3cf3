"""Rack-aware assignment on the model: balance first, then locality, then stickiness."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.cooperative import withhold_moving
from kafka_assignors.core.model import GroupSpec, MemberSpec, TopicSpec
from kafka_assignors.core.rack_aware import rack_aware, rack_aware_enabled
from kafka_assignors.core.validate import validate_assignment

from . import reference as ref

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RACKS = ["r0", "r1", "r2"]


@st.composite
def rack_groups(draw: st.DrawFn, max_members: int = 6, max_partitions: int = 6,
                with_claims: bool = True) -> GroupSpec:
    names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    topics = {}
    for t in names:
        n = draw(st.integers(0, max_partitions))
        racks = {p: frozenset(draw(st.lists(st.sampled_from(RACKS), max_size=2, unique=True)))
                 for p in range(n)}
        topics[t] = TopicSpec(t, n, racks)
    uniform = draw(st.booleans())
    shared = frozenset(draw(st.lists(st.sampled_from(names), min_size=1, unique=True)))
    members = []
    for i in range(draw(st.integers(1, max_members))):
        subs = shared if uniform else frozenset(
            draw(st.lists(st.sampled_from(names), unique=True)))
        owned: dict[str, list[int]] = {}
        if with_claims:
            for t in draw(st.lists(st.sampled_from(names), unique=True)):
                owned[t] = draw(st.lists(st.integers(0, max_partitions), max_size=3))
        members.append(MemberSpec(
            f"m{i}", subs, owned, generation=draw(st.integers(-1, 2)),
            rack=draw(st.one_of(st.none(), st.sampled_from(RACKS))),
        ))
    return GroupSpec(tuple(members), topics)


def remote(group: GroupSpec, assignment: dict[str, dict[str, list[int]]]) -> int:
    """Partitions consumed from a rack that holds none of their replicas."""
    rack = {m.member_id: m.rack for m in group.members}
    return sum(
        1
        for mid, by_t in assignment.items()
        for t, ps in by_t.items()
        for p in ps
        if rack[mid] is None or rack[mid] not in group.topics[t].replica_racks.get(p, ())
    )


def optimum_remote(group: GroupSpec) -> tuple[list[int], int]:
    """(optimal sorted loads, fewest remote partitions among them) by exact min-cost flow."""

    def far(m: MemberSpec, t: str, p: int) -> int:
        return int(m.rack is None or m.rack not in group.topics[t].replica_racks.get(p, ()))

    result = ref.balanced_flow(group, far)
    return sorted(ref.loads(result).values()), remote(group, result)


@SETTINGS
@given(rack_groups())
def test_valid_and_optimally_balanced(group: GroupSpec) -> None:
    """Every partition exactly once, and no cost-reducing chain of moves (optimal balance)."""
    a = rack_aware(group)
    validate_assignment(group, a)
    assert ref.cost_reducing_path(group, a) is None


@settings(max_examples=300, deadline=None)
@given(rack_groups(max_members=5, max_partitions=5))
def test_locality_is_the_best_any_balanced_assignment_has(group: GroupSpec) -> None:
    """Among optimally balanced assignments none has fewer remote partitions (exact flow)."""
    a = rack_aware(group)
    best_loads, best_remote = optimum_remote(group)
    assert sorted(ref.loads(a).values()) == best_loads
    if rack_aware_enabled(group):
        assert remote(group, a) == best_remote
    else:
        assert a == balanced_sticky(group)


@SETTINGS
@given(rack_groups(), st.randoms(use_true_random=False))
def test_deterministic_in_any_member_order(group: GroupSpec, rnd: random.Random) -> None:
    """The same group in any member order gives the same assignment."""
    shuffled = list(group.members)
    rnd.shuffle(shuffled)
    assert rack_aware(GroupSpec(tuple(shuffled), group.topics)) == rack_aware(group)


def _next_generation(group: GroupSpec, a: dict[str, dict[str, list[int]]]) -> GroupSpec:
    members = [MemberSpec(m.member_id, m.topics, a[m.member_id], 5, m.instance_id, m.rack)
               for m in group.members]
    return GroupSpec(tuple(members), group.topics)


@SETTINGS
@given(rack_groups())
def test_rerun_on_its_own_result_moves_nothing(group: GroupSpec) -> None:
    """A group that rejoins with what it was given keeps it all (sticky fixed point)."""
    a = rack_aware(group)
    again = _next_generation(group, a)
    assert ref.moves(again, rack_aware(again)) == 0


@SETTINGS
@given(rack_groups(with_claims=False), st.data())
def test_cooperative_rounds_never_share_a_partition(group: GroupSpec, data: st.DataObject) -> None:
    """After a member leaves or joins, round one gives nobody a partition another still holds."""
    first = rack_aware(group)
    nxt = list(_next_generation(group, first).members)
    if len(nxt) > 1 and data.draw(st.booleans()):
        nxt.pop(data.draw(st.integers(0, len(nxt) - 1)))
    else:
        nxt.append(MemberSpec("joiner", nxt[0].topics, rack=data.draw(st.sampled_from(RACKS))))
    after = GroupSpec(tuple(nxt), group.topics)
    target = rack_aware(after)
    holders: dict[str, dict[int, frozenset[str]]] = {}
    for m in nxt:
        for t, ps in m.owned.items():
            for p in ps:
                holders.setdefault(t, {})[p] = frozenset([m.member_id])
    round_one, _pending = withhold_moving(target, holders)
    validate_assignment(after, target)
    for mid, by_t in round_one.items():
        for t, ps in by_t.items():
            for p in ps:
                assert holders.get(t, {}).get(p, frozenset([mid])) == frozenset([mid])


def three_zone_group(owned: dict[str, dict[str, list[int]]] | None = None) -> GroupSpec:
    """6 partitions, each with one replica (rack r{p % 3}); one consumer per rack."""
    racks = {p: frozenset([f"r{p % 3}"]) for p in range(6)}
    members = [MemberSpec(f"c{i}", frozenset(["t"]), (owned or {}).get(f"c{i}", {}),
                          1 if owned else -1, rack=f"r{i}") for i in range(3)]
    return GroupSpec(tuple(members), {"t": TopicSpec("t", 6, racks)})


def test_every_consumer_reads_from_its_own_rack() -> None:
    """One consumer per zone, replicas spread over zones: all six partitions are local."""
    a = rack_aware(three_zone_group())
    assert a == {"c0": {"t": [0, 3]}, "c1": {"t": [1, 4]}, "c2": {"t": [2, 5]}}


def test_locality_beats_stickiness_but_not_balance() -> None:
    """Owners of remote partitions give them to a local consumer; counts stay 2/2/2."""
    owned = {"c0": {"t": [0, 1]}, "c1": {"t": [2, 3]}, "c2": {"t": [4, 5]}}
    a = rack_aware(three_zone_group(owned))
    assert a == {"c0": {"t": [0, 3]}, "c1": {"t": [1, 4]}, "c2": {"t": [2, 5]}}


def test_all_replicas_everywhere_is_plain_balanced_sticky() -> None:
    """When every partition has replicas on every rack, racks change nothing (Java's rule)."""
    racks = {p: frozenset(RACKS) for p in range(5)}
    members = [MemberSpec(f"c{i}", frozenset(["t"]), rack=RACKS[i]) for i in range(3)]
    group = GroupSpec(tuple(members), {"t": TopicSpec("t", 5, racks)})
    assert not rack_aware_enabled(group)
    assert rack_aware(group) == balanced_sticky(group)


def test_no_member_racks_or_no_partition_racks_is_plain_balanced_sticky() -> None:
    """Without member racks, or without replica racks, the result is balanced-sticky's."""
    racks = {p: frozenset([f"r{p % 3}"]) for p in range(6)}
    no_member_rack = GroupSpec(
        tuple(MemberSpec(f"c{i}", frozenset(["t"])) for i in range(3)),
        {"t": TopicSpec("t", 6, racks)},
    )
    no_partition_rack = GroupSpec(
        tuple(MemberSpec(f"c{i}", frozenset(["t"]), rack=f"r{i}") for i in range(3)),
        {"t": TopicSpec("t", 6)},
    )
    for group in (no_member_rack, no_partition_rack):
        assert not rack_aware_enabled(group)
        assert rack_aware(group) == balanced_sticky(group)


def test_members_without_rack_still_take_their_share() -> None:
    """A member with no rack is never local but still gets an even share."""
    racks = {p: frozenset(["r0"]) for p in range(4)} | {p: frozenset(["r1"]) for p in (4, 5)}
    members = [MemberSpec("a", frozenset(["t"]), rack="r0"),
               MemberSpec("b", frozenset(["t"])),
               MemberSpec("c", frozenset(["t"]), rack="r1")]
    a = rack_aware(GroupSpec(tuple(members), {"t": TopicSpec("t", 6, racks)}))
    assert {m: len(v["t"]) for m, v in a.items()} == {"a": 2, "b": 2, "c": 2}
    assert a["c"] == {"t": [4, 5]} and set(a["a"]["t"]) < {0, 1, 2, 3}


def test_large_group_is_fast_and_balanced() -> None:
    """10,000 partitions x 1,000 members in 3 zones, replication 2: balanced and mostly local."""
    import time

    n_parts = 10_000
    racks = {p: frozenset([RACKS[p % 3], RACKS[(p + 1) % 3]]) for p in range(n_parts)}
    members = [MemberSpec(f"m{i:04d}", frozenset(["t"]), rack=RACKS[i % 3]) for i in range(1000)]
    group = GroupSpec(tuple(members), {"t": TopicSpec("t", n_parts, racks)})
    started = time.perf_counter()
    a = rack_aware(group)
    assert time.perf_counter() - started < 5
    counts = ref.loads(a).values()
    assert max(counts) - min(counts) <= 1
    assert remote(group, a) == 0


def optimum_moves(group: GroupSpec) -> int:
    """Fewest moves among assignments that are optimally balanced and optimally local."""
    parts = ref.all_partitions(group)
    n = len(parts)
    before = ref.claim_owner(group)
    g = nx.DiGraph()
    g.add_node("s", demand=-n)
    g.add_node("z", demand=n)
    for t, p in parts:
        g.add_edge("s", ("p", t, p), capacity=1, weight=0)
        for m in group.members:
            if t in ref.usable(group, m):
                far = m.rack is None or m.rack not in group.topics[t].replica_racks.get(p, ())
                moved = before.get((t, p)) not in (None, m.member_id)
                g.add_edge(("p", t, p), ("m", m.member_id), capacity=1,
                           weight=int(far) * (n + 1) + int(moved))
    for m in group.members:
        for k in range(1, n + 1):
            g.add_edge(("m", m.member_id), ("u", m.member_id, k), capacity=1,
                       weight=((n + 1) ** 2 + 1) * (2 * k - 1))
            g.add_edge(("u", m.member_id, k), "z", capacity=1, weight=0)
    flow = nx.min_cost_flow(g)
    result: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in group.members}
    for t, p in parts:
        for target, f in flow[("p", t, p)].items():
            if f:
                result[target[1]].setdefault(t, []).append(p)
    return ref.moves(group, result)


@st.composite
def one_member_per_rack(draw: st.DrawFn) -> GroupSpec:
    """Every member in its own rack (so no two members are interchangeable)."""
    group = draw(rack_groups(max_members=5, max_partitions=5))
    members = [MemberSpec(m.member_id, m.topics, m.owned, m.generation, rack=f"r{i}")
               for i, m in enumerate(group.members)]
    return GroupSpec(tuple(members), group.topics)


@settings(max_examples=300, deadline=None)
@given(one_member_per_rack())
def test_movement_is_minimal_among_balanced_local_assignments(group: GroupSpec) -> None:
    """With no two members alike, moves are the fewest any balanced, most-local result needs."""
    a = rack_aware(group)
    if rack_aware_enabled(group):
        assert ref.moves(group, a) == optimum_moves(group)
