"""A small min-cost transportation solver with convex (balancing) costs at the sinks.

Used on aggregated graphs (a handful of partition classes, a handful of member
groups), never per partition.  Units of class ``k`` (``supply[k]`` of them) go
to groups ``g`` along arcs with a fixed cost per unit.  A group of ``s``
members pays ``level_cost * (2q + 1)`` for its unit number ``q*s + r + 1``:
spread evenly over its members that is ``level_cost * sum(load**2)``, a strictly
convex penalty, so the cheapest flow spreads units as an optimal semi-matching
does; with ``level_cost`` larger than any total of arc costs, balance comes
first and arc costs only choose among the best balanced flows.

Successive shortest paths: each step sends units along a cheapest path (Bellman-
Ford, as cancelling a unit on an arc costs its negative) from a class with
supply left to a group's next unit; no negative cycle ever appears.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import pairwise


def convex_transport(
    supply: Sequence[int],
    sizes: Sequence[int],
    arcs: Mapping[tuple[int, int], int],
    level_cost: int,
    holdings: Sequence[Sequence[int]] | None = None,
) -> dict[tuple[int, int], int]:
    """Units per ``(class, group)`` of a cheapest flow that places every supplied unit.

    ``arcs[(k, g)]`` is the cost of one unit of class ``k`` in group ``g``;
    every class with supply needs at least one arc.  ``holdings[g]`` (optional)
    lists how many units each member of group ``g`` held before: within one
    load level, a unit that lets a member keep one more of its own costs one
    less, which breaks ties between equally balanced flows towards fewer moves.
    """
    n_k, n_g = len(supply), len(sizes)
    left = list(supply)
    total = [0] * n_g
    flow: dict[tuple[int, int], int] = {}
    out_arcs: list[list[tuple[int, int]]] = [[] for _ in range(n_k)]
    for (k, g), c in sorted(arcs.items()):
        out_arcs[k].append((g, c))
    while any(left):
        # nodes 0..n_k-1 are classes, n_k.. are groups
        dist: list[int | None] = [None] * (n_k + n_g)
        pred: list[int] = [-1] * (n_k + n_g)
        queue: deque[int] = deque()
        queued = [False] * (n_k + n_g)
        for k in range(n_k):
            if left[k]:
                dist[k] = 0
                queue.append(k)
                queued[k] = True
        while queue:
            u = queue.popleft()
            queued[u] = False
            du = dist[u]
            assert du is not None
            if u < n_k:
                steps = [(n_k + g, c) for g, c in out_arcs[u]]
            else:
                g = u - n_k
                steps = [(k, -arcs[(k, g)]) for k in range(n_k) if flow.get((k, g), 0) > 0]
            for v, c in steps:
                dv = dist[v]
                if dv is None or du + c < dv:
                    dist[v] = du + c
                    pred[v] = u
                    if not queued[v]:
                        queued[v] = True
                        queue.append(v)
        best: tuple[int, int, int] | None = None
        for g in range(n_g):
            dg = dist[n_k + g]
            if dg is not None and sizes[g] > 0:
                unit_cost, room = _next_unit(total[g], sizes[g], holdings, g, level_cost)
                if best is None or dg + unit_cost < best[0]:
                    best = (dg + unit_cost, g, room)
        if best is None:
            raise ValueError("a class with supply has no arc to any group")
        _cost, g, room = best
        path = [n_k + g]
        while pred[path[-1]] != -1:
            path.append(pred[path[-1]])
        path.reverse()  # class with supply -> ... -> group g
        amount = min(left[path[0]], room)
        for u, v in pairwise(path):
            if u >= n_k:  # cancelling units of class v in group u
                amount = min(amount, flow[(v, u - n_k)])
        for u, v in pairwise(path):
            if u < n_k:
                key = (u, v - n_k)
                flow[key] = flow.get(key, 0) + amount
            else:
                key = (v, u - n_k)
                flow[key] -= amount
        left[path[0]] -= amount
        total[g] += amount
    return {key: f for key, f in flow.items() if f}


def _next_unit(
    total: int, size: int, holdings: Sequence[Sequence[int]] | None, g: int, level_cost: int
) -> tuple[int, int]:
    """Cost of a group's next unit, and how many more cost the same."""
    level, r = divmod(total, size)
    cost = level_cost * (2 * level + 1)
    if holdings is None:
        return cost, size - r
    keepers = sum(1 for h in holdings[g] if h > level)
    if r < keepers:
        return cost - 1, keepers - r
    return cost, size - r
