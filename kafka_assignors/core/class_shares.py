"""Per-topic balance with different subscriptions, solved on classes of members.

Members with identical subscriptions form a *class*.  At the optimum of the
objectives of :mod:`.unequal` (1: sum of squared loads, 2: sum over topics of
squared per-member counts), the members of one class hold the floor or the
ceiling of their class's share, in total and of every topic: otherwise a move
inside the class lowers 1 or 2.  Both objectives then depend only on the shares
``s[c][t]`` (units of topic ``t`` the class holds) and the class totals: a class
of ``M`` members holding ``s`` units pays ``h(s, M)``, the sum of squares of
``s`` split evenly over ``M``, whose next unit costs ``2 * (s // M) + 1``.

So objectives 1 and 2 are a small convex min-cost flow, topic -> class -> sink:
a unit of topic ``t`` in class ``c`` costs ``B2`` times its share's marginal,
a unit of class ``c``'s total ``B1`` times the total's marginal, ``B1 >> B2``.
A tie-break below both prefers fewer moves: a class taking back a unit its
members own costs one less, giving up one of them one more.  Solved by
cancelling negative cycles (Bellman-Ford) from the optimally balanced counts,
pushing along each cycle as many units as keep every marginal cost; without a
negative cycle the shares are optimal (the optimality test of min-cost flow).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .paths import Budget, cycle_in_predecessors

#: an arc of the residual graph: (from, to, cost, units at that cost, class, topic or None)
_Arc = tuple[int, int, int, int, int, str | None]


def balance_shares(
    topics_of: Sequence[Sequence[str]],
    sizes: Sequence[int],
    shares: list[dict[str, int]],
    holdings: Sequence[Mapping[str, int]],
    budget: Budget,
) -> bool:
    """Move units between classes until the shares are optimal; False if the budget ran out.

    ``topics_of[c]`` are class ``c``'s topics, ``sizes[c]`` its members, ``shares[c]``
    its units per topic (changed in place; the start must be optimally balanced) and
    ``holdings[c]`` the units its members owned before.
    """
    topics = sorted({t for ts in topics_of for t in ts})
    index = {t: k for k, t in enumerate(topics)}
    n_t, n_c = len(topics), len(sizes)
    sink = n_t + n_c
    totals = [sum(s.values()) for s in shares]
    nodes = sink + 1
    # weights: a simple cycle changes the tie-break by at most `nodes`, objective 2 by
    # at most `nodes * (2 * units + 1)`
    units = sum(totals)
    b2 = nodes + 1
    b1 = b2 * (nodes * (2 * units + 1) + 1)
    while True:
        arcs = _arcs(topics_of, sizes, shares, holdings, totals, index, n_t, b1, b2)
        cycle = _negative_cycle(arcs, nodes, budget)
        if cycle is None:
            return True
        if not cycle:
            return False
        amount = min(a[3] for a in cycle)
        for u, _v, _w, _n, c, t in cycle:
            if t is None:  # class total: class -> sink adds, sink -> class removes
                totals[c] += amount if u != sink else -amount
            else:  # topic -> class adds a unit of the topic, class -> topic removes one
                shares[c][t] = shares[c].get(t, 0) + (amount if u < n_t else -amount)


def _arcs(
    topics_of: Sequence[Sequence[str]],
    sizes: Sequence[int],
    shares: Sequence[Mapping[str, int]],
    holdings: Sequence[Mapping[str, int]],
    totals: Sequence[int],
    index: Mapping[str, int],
    n_t: int,
    b1: int,
    b2: int,
) -> list[_Arc]:
    sink = n_t + len(sizes)
    arcs: list[_Arc] = []
    for c, ts in enumerate(topics_of):
        size = sizes[c]
        node = n_t + c
        for t in ts:
            s, h = shares[c].get(t, 0), holdings[c].get(t, 0)
            # one more unit: same marginal up to the next multiple of size
            n = size - s % size
            if s < h:
                n = min(n, h - s)
            arcs.append((index[t], node, b2 * (2 * (s // size) + 1) - (s < h), n, c, t))
            if s:
                n = (s - 1) % size + 1
                if s > h:
                    n = min(n, s - h)
                arcs.append((node, index[t], (s <= h) - b2 * (2 * ((s - 1) // size) + 1), n, c, t))
        total = totals[c]
        arcs.append((node, sink, b1 * (2 * (total // size) + 1), size - total % size, c, None))
        if total:
            n = (total - 1) % size + 1
            arcs.append((sink, node, -b1 * (2 * ((total - 1) // size) + 1), n, c, None))
    return arcs


def _negative_cycle(arcs: Sequence[_Arc], nodes: int, budget: Budget) -> list[_Arc] | None:
    """The arcs of a negative cycle in order, None if there is none, [] if out of budget."""
    dist = [0] * nodes
    pred = [-1] * nodes
    via: list[_Arc | None] = [None] * nodes
    for _round in range(nodes):
        if budget.left < len(arcs):
            return []
        budget.left -= len(arcs)
        changed = False
        for arc in arcs:
            u, v, w = arc[0], arc[1], arc[2]
            if dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                pred[v] = u
                via[v] = arc
                changed = True
        if not changed:
            return None
        start = cycle_in_predecessors(pred)
        if start is not None:
            cycle = []
            v = start
            while True:
                hop = via[v]
                assert hop is not None
                cycle.append(hop)
                v = hop[0]
                if v == start:
                    break
            cycle.reverse()
            return cycle
    return None
