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

import heapq
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

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
    n_t, n_c = len(topics), len(sizes)
    totals = [sum(s.values()) for s in shares]
    # weights: a simple cycle changes the tie-break by less than `k`, objective 2 by
    # less than `k * (2 * units + 1)`
    k = 2 * (n_t + n_c + 2)
    b2 = 2 * k + 1
    b1 = b2 * (k * (2 * sum(totals) + 1) + 1)
    costs = _Costs(sizes, shares, holdings, totals, b1, b2)
    if n_c * n_c * n_t <= PAIR_LIMIT:
        return _cancel_on_pairs(topics_of, costs, budget)
    return _cancel_on_arcs(topics_of, topics, costs, budget)


#: Largest classes**2 x topics for which cycles are searched on the class graph
#: (:func:`_cancel_on_pairs`); above it, on topics and classes (:func:`_cancel_on_arcs`).
PAIR_LIMIT = 200_000


class _Costs:
    """Marginal costs of one unit more or less, and how many units keep that cost."""

    def __init__(
        self,
        sizes: Sequence[int],
        shares: list[dict[str, int]],
        holdings: Sequence[Mapping[str, int]],
        totals: list[int],
        b1: int,
        b2: int,
    ) -> None:
        self.sizes, self.shares, self.holdings, self.totals = sizes, shares, holdings, totals
        self.b1, self.b2 = b1, b2

    def take(self, c: int, t: str) -> tuple[int, int]:
        size, s, h = self.sizes[c], self.shares[c].get(t, 0), self.holdings[c].get(t, 0)
        n = size - s % size  # same marginal up to the next multiple of size
        if s < h:
            n = min(n, h - s)
        return self.b2 * (2 * (s // size) + 1) - (s < h), n

    def give(self, c: int, t: str) -> tuple[int, int] | None:
        size, s, h = self.sizes[c], self.shares[c].get(t, 0), self.holdings[c].get(t, 0)
        if not s:
            return None
        n = (s - 1) % size + 1
        if s > h:
            n = min(n, s - h)
        return (s <= h) - self.b2 * (2 * ((s - 1) // size) + 1), n

    def grow(self, c: int) -> tuple[int, int]:
        size, total = self.sizes[c], self.totals[c]
        return self.b1 * (2 * (total // size) + 1), size - total % size

    def shrink(self, c: int) -> tuple[int, int] | None:
        size, total = self.sizes[c], self.totals[c]
        if not total:
            return None
        return -self.b1 * (2 * ((total - 1) // size) + 1), (total - 1) % size + 1

    def transfer(self, a: int, b: int, t: str) -> int | None:
        """Cost of class ``a`` giving one unit of ``t`` to class ``b``."""
        g = self.give(a, t)
        return None if g is None else g[0] + self.take(b, t)[0]

    def add(self, c: int, t: str | None, amount: int) -> None:
        if t is None:
            self.totals[c] += amount
        else:
            self.shares[c][t] = self.shares[c].get(t, 0) + amount


def _cancel_on_pairs(topics_of: Sequence[Sequence[str]], costs: _Costs, budget: Budget) -> bool:
    """Cycles on the class graph: node per class plus the sink; edge ``a -> b`` is the
    cheapest transfer of one unit of a shared topic from ``a`` to ``b`` (kept in a heap per
    pair), ``c -> sink`` / ``sink -> c`` a class total growing / shrinking.  Every cycle of
    topics and classes maps to a class-graph cycle no dearer, and back, so a negative
    cycle exists in one exactly when it does in the other."""
    n_c = len(topics_of)
    sink = n_c
    sets = [set(ts) for ts in topics_of]
    shared = {(a, b): sorted(sets[a] & sets[b]) for a in range(n_c) for b in range(n_c) if a != b}
    shared = {pair: ts for pair, ts in shared.items() if ts}
    sharers: dict[str, list[int]] = {}
    for c, ts in enumerate(topics_of):
        for t in ts:
            sharers.setdefault(t, []).append(c)
    heaps: dict[tuple[int, int], list[tuple[int, str]]] = {}
    for (a, b), ts in shared.items():
        heap = [(w, t) for t in ts if (w := costs.transfer(a, b, t)) is not None]
        heapq.heapify(heap)
        heaps[(a, b)] = heap

    def cheapest(a: int, b: int) -> tuple[int, str] | None:
        heap = heaps[(a, b)]
        while heap:
            w, t = heap[0]
            if costs.transfer(a, b, t) == w:
                return w, t
            heapq.heappop(heap)  # stale: a fresh entry was pushed when it changed
        return None

    while True:
        edges: list[tuple[int, int, int, str | None]] = []
        for a, b in heaps:
            best = cheapest(a, b)
            if best is not None:
                edges.append((a, b, best[0], best[1]))
        for c in range(n_c):
            edges.append((c, sink, costs.grow(c)[0], None))
            shrink = costs.shrink(c)
            if shrink is not None:
                edges.append((sink, c, shrink[0], None))
        cycle = _negative_cycle(edges, n_c + 1, budget)
        if cycle is None:
            return True
        if not cycle:
            return False
        # (class, topic or None for the total, +1 take / -1 give) per unit moved
        steps: list[tuple[int, str | None, int]] = []
        amount = None
        for a, b, _w, t in cycle:
            if t is None:
                c, sign = (a, 1) if b == sink else (b, -1)
                got = costs.grow(c) if sign > 0 else costs.shrink(c)
                assert got is not None
                blocks = [got[1]]
                steps.append((c, None, sign))
            else:
                given = costs.give(a, t)
                assert given is not None
                blocks = [given[1], costs.take(b, t)[1]]
                steps += [(a, t, -1), (b, t, 1)]
            amount = min(blocks) if amount is None else min(amount, *blocks)
        assert amount is not None
        for c, topic, sign in steps:
            costs.add(c, topic, sign * amount)
        for c, topic, _sign in steps:
            if topic is None:
                continue
            for x in sharers[topic]:
                if x == c:
                    continue
                for a, b in ((c, x), (x, c)):
                    w = costs.transfer(a, b, topic)
                    if w is not None:
                        heapq.heappush(heaps[(a, b)], (w, topic))


def _cancel_on_arcs(
    topics_of: Sequence[Sequence[str]], topics: Sequence[str], costs: _Costs, budget: Budget
) -> bool:
    """Cycles on the graph of topics, classes and the sink (many classes)."""
    index = {t: k for k, t in enumerate(topics)}
    n_t = len(topics)
    sink = n_t + len(topics_of)
    while True:
        arcs = _arcs(topics_of, costs, index, n_t)
        cycle = _negative_cycle([(u, v, w, None) for u, v, w, _n, _c, _t in arcs], sink + 1,
                                budget, arcs)
        if cycle is None:
            return True
        if not cycle:
            return False
        amount = min(a[3] for a in cycle)
        for u, _v, _w, _n, c, t in cycle:
            if t is None:  # class total: class -> sink adds, sink -> class removes
                costs.add(c, None, amount if u != sink else -amount)
            else:  # topic -> class adds a unit of the topic, class -> topic removes one
                costs.add(c, t, amount if u < n_t else -amount)


def _arcs(
    topics_of: Sequence[Sequence[str]], costs: _Costs, index: Mapping[str, int], n_t: int
) -> list[_Arc]:
    sink = n_t + len(topics_of)
    arcs: list[_Arc] = []
    for c, ts in enumerate(topics_of):
        node = n_t + c
        for t in ts:
            w, n = costs.take(c, t)
            arcs.append((index[t], node, w, n, c, t))
            given = costs.give(c, t)
            if given is not None:
                arcs.append((node, index[t], given[0], given[1], c, t))
        w, n = costs.grow(c)
        arcs.append((node, sink, w, n, c, None))
        shrink = costs.shrink(c)
        if shrink is not None:
            arcs.append((sink, node, shrink[0], shrink[1], c, None))
    return arcs


E = TypeVar("E")


def _negative_cycle(
    edges: Sequence[tuple[int, int, int, Any]],
    nodes: int,
    budget: Budget,
    labels: Sequence[E] | None = None,
) -> list[Any] | None:
    """The edges (or their ``labels``) of a negative cycle in order, None if there is none,
    [] if the budget ran out (Bellman-Ford from all nodes at distance 0)."""
    dist = [0] * nodes
    pred = [-1] * nodes
    via = [-1] * nodes
    for _round in range(nodes):
        if budget.left < len(edges):
            return []
        budget.left -= len(edges)
        changed = False
        for k, (u, v, w, _x) in enumerate(edges):
            if dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                pred[v] = u
                via[v] = k
                changed = True
        if not changed:
            return None
        start = cycle_in_predecessors(pred)
        if start is not None:
            cycle = []
            v = start
            while True:
                k = via[v]
                cycle.append(edges[k] if labels is None else labels[k])
                v = edges[k][0]
                if v == start:
                    break
            cycle.reverse()
            return cycle
    return None
