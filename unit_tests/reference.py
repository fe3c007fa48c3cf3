"""Independent, slow reference answers the fast algorithms are checked against.

Written from the definitions, not from the production code: partition-level
search for cost-reducing paths, and an exact min-cost flow (networkx) for the
fewest moves any optimally balanced assignment needs.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence

import networkx as nx

from kafka_assignors.core.model import GroupSpec, MemberSpec

Owner = dict[tuple[str, int], str]


def usable(group: GroupSpec, m: MemberSpec) -> set[str]:
    return {t for t in m.topics if group.partition_count(t) > 0}


def all_partitions(group: GroupSpec) -> list[tuple[str, int]]:
    return [(t, p) for t in group.subscribed_topics() for p in range(group.partition_count(t))]


def claim_owner(group: GroupSpec) -> Owner:
    """Newest generation wins; on a tie the member sorting first (instance id, then id)."""
    candidates: dict[tuple[str, int], list[tuple[int, tuple[int, str], str]]] = {}
    for m in group.members:
        subs = usable(group, m)
        for t, ps in m.owned.items():
            if t not in subs:
                continue
            for p in set(ps):
                if 0 <= p < group.partition_count(t):
                    key = (-m.generation, m.sort_key, m.member_id)
                    candidates.setdefault((t, p), []).append(key)
    return {tp: min(c)[2] for tp, c in candidates.items()}


def loads(assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> dict[str, int]:
    return {m: sum(len(ps) for ps in bt.values()) for m, bt in assignment.items()}


def owner_map(assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> Owner:
    return {(t, p): m for m, bt in assignment.items() for t, ps in bt.items() for p in ps}


def moves(group: GroupSpec, assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> int:
    before = claim_owner(group)
    after = owner_map(assignment)
    return sum(1 for tp, m in before.items() if after.get(tp) != m)


def cost_reducing_path(
    group: GroupSpec, assignment: Mapping[str, Mapping[str, Sequence[int]]]
) -> list[str] | None:
    """A chain of members m0 -> ... -> mk with load(m0) >= load(mk) + 2, each passing on a
    partition the next one subscribes to; None if the assignment is an optimal semi-matching."""
    subs = {m.member_id: usable(group, m) for m in group.members}
    held = {m: {t for t, ps in bt.items() if ps} for m, bt in assignment.items()}
    load = loads(assignment)
    for start in subs:
        seen = {start: [start]}
        queue = deque([start])
        while queue:
            u = queue.popleft()
            if load[u] - 0 <= load[start] - 2:
                return seen[u]
            for v in subs:
                if v not in seen and held.get(u, set()) & subs[v]:
                    seen[v] = [*seen[u], v]
                    queue.append(v)
    return None


def balanced_flow(
    group: GroupSpec, cost: Callable[[MemberSpec, str, int], int]
) -> dict[str, dict[str, list[int]]]:
    """An optimally balanced assignment of least total ``cost(member, topic, partition)``.

    Exact min-cost flow: member loads carry convex costs (k-th partition costs
    big * (2k - 1)) that dominate any sum of placement costs.
    """
    parts = all_partitions(group)
    n = len(parts)
    big = n + 1
    g = nx.DiGraph()
    g.add_node("s", demand=-n)
    g.add_node("z", demand=n)
    for t, p in parts:
        node = ("p", t, p)
        g.add_edge("s", node, capacity=1, weight=0)
        for m in group.members:
            if t in usable(group, m):
                g.add_edge(node, ("m", m.member_id), capacity=1, weight=cost(m, t, p))
    for m in group.members:
        for k in range(1, n + 1):
            g.add_edge(("m", m.member_id), ("u", m.member_id, k), capacity=1,
                       weight=big * (2 * k - 1))
            g.add_edge(("u", m.member_id, k), "z", capacity=1, weight=0)
    flow = nx.min_cost_flow(g)
    result: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in group.members}
    for t, p in parts:
        for target, f in flow[("p", t, p)].items():
            if f:
                result[target[1]].setdefault(t, []).append(p)
    return result


def optimum(group: GroupSpec) -> tuple[list[int], int]:
    """(sorted optimal loads, fewest moves) by exact min-cost flow."""
    before = claim_owner(group)
    result = balanced_flow(
        group, lambda m, t, p: 0 if before.get((t, p)) == m.member_id else 1
    )
    return sorted(loads(result).values()), moves(group, result)


def topic_squares(group: GroupSpec, assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> int:
    """Sum over topics and members of (partitions of the topic the member holds) squared."""
    return sum(len(ps) ** 2 for bt in assignment.values() for ps in bt.values())


def topic_spreads(
    group: GroupSpec, assignment: Mapping[str, Mapping[str, Sequence[int]]]
) -> dict[str, int]:
    """Per topic: most minus fewest of its partitions held by one of its subscribers."""
    out = {}
    for t in group.subscribed_topics():
        held = [len(assignment.get(m.member_id, {}).get(t, ())) for m in group.members
                if t in usable(group, m)]
        out[t] = max(held) - min(held)
    return out


def per_topic_optimum(group: GroupSpec) -> tuple[list[int], int, int]:
    """(sorted loads, sum of per-topic squares, moves) of the lexicographic optimum:
    least sum of squared loads, then least sum of squared per-topic counts, then
    fewest moves; an exact min-cost flow (networkx), partition by partition.

    Partition -> (member, topic) costs the move (1 if someone else owned it); the
    j-th unit of (member, topic) costs b2 * (2j - 1), the j-th unit of a member's
    load b1 * (2j - 1), with b2 above any total of moves and b1 above any total of
    the two lower levels.
    """
    parts = all_partitions(group)
    n = len(parts)
    before = claim_owner(group)
    b2 = n + 1
    b1 = b2 * (n * n + 1) + n + 1
    g = nx.DiGraph()
    g.add_node("s", demand=-n)
    g.add_node("z", demand=n)
    for t, p in parts:
        g.add_edge("s", ("p", t, p), capacity=1, weight=0)
        for m in group.members:
            if t in usable(group, m):
                owner = before.get((t, p))
                cost = 1 if owner is not None and owner != m.member_id else 0
                g.add_edge(("p", t, p), ("mt", m.member_id, t), capacity=1, weight=cost)
    for m in group.members:
        for t in usable(group, m):
            for j in range(1, group.partition_count(t) + 1):
                g.add_edge(("mt", m.member_id, t), ("ut", m.member_id, t, j), capacity=1,
                           weight=b2 * (2 * j - 1))
                g.add_edge(("ut", m.member_id, t, j), ("m", m.member_id), capacity=1, weight=0)
        for j in range(1, n + 1):
            g.add_edge(("m", m.member_id), ("u", m.member_id, j), capacity=1,
                       weight=b1 * (2 * j - 1))
            g.add_edge(("u", m.member_id, j), "z", capacity=1, weight=0)
    flow = nx.min_cost_flow(g)
    result: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in group.members}
    for t, p in parts:
        for target, f in flow[("p", t, p)].items():
            if f:
                result[target[1]].setdefault(t, []).append(p)
    return sorted(loads(result).values()), topic_squares(group, result), moves(group, result)


def fewest_moves_even(group: GroupSpec) -> int:
    """Identical subscriptions: the fewest moves of any assignment whose member totals and
    per-topic counts are all the floor or the ceiling of their mean (exact min-cost flow).

    Lower bounds as arcs worth ``-big`` each: the optimum fills all of them (such an
    assignment always exists; asserted), and the moves are what is left of the cost.
    """
    members = [m.member_id for m in group.members if usable(group, m)]
    parts = all_partitions(group)
    n, size = len(parts), len(members)
    before = claim_owner(group)
    big = n + 1
    g = nx.DiGraph()
    g.add_node("s", demand=-n)
    g.add_node("z", demand=n)
    must = 0
    for t, p in parts:
        g.add_edge("s", ("p", t, p), capacity=1, weight=0)
        for m in members:
            owner = before.get((t, p))
            g.add_edge(("p", t, p), ("mt", m, t), capacity=1,
                       weight=1 if owner is not None and owner != m else 0)
    base, extra = divmod(n, size)
    for m in members:
        for t in group.subscribed_topics():
            lo, r = divmod(group.partition_count(t), size)
            g.add_edge(("mt", m, t), ("lo", m, t), capacity=lo, weight=-big)
            g.add_edge(("lo", m, t), ("m", m), capacity=lo, weight=0)
            g.add_edge(("mt", m, t), ("m", m), capacity=1 if r else 0, weight=0)
            must += lo
        g.add_edge(("m", m), ("lo", m), capacity=base, weight=-big)
        g.add_edge(("lo", m), "z", capacity=base, weight=0)
        g.add_edge(("m", m), "z", capacity=1 if extra else 0, weight=0)
        must += base
    flow = nx.min_cost_flow(g)
    cost = nx.cost_of_flow(g, flow)
    assert cost < -big * (must - 1) + 1, "no assignment is even in total and in every topic"
    return int(cost + big * must)


def min_makespan(weights: Sequence[float], machines: int) -> float:
    """The exact smallest possible heaviest load (branch and bound; small inputs only)."""
    items = sorted(weights, reverse=True)
    if not items:
        return 0.0
    lower = max(sum(items) / machines, items[0])
    if len(items) > machines:
        lower = max(lower, items[machines - 1] + items[machines])  # pigeonhole
    best = [math.inf]

    def place(i: int, loads: list[float]) -> None:
        peak = max(loads)
        if peak >= best[0] or best[0] <= lower:
            return
        if i == len(items):
            best[0] = peak
            return
        tried: set[float] = set()
        for k in sorted(range(machines), key=loads.__getitem__):
            if loads[k] in tried:  # machines of equal load are interchangeable
                continue
            tried.add(loads[k])
            loads[k] += items[i]
            place(i + 1, loads)
            loads[k] -= items[i]

    place(0, [0.0] * machines)
    return best[0]
