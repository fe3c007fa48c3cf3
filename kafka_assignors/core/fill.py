"""Sticky, optimally balanced placement of interchangeable items on top of fixed loads.

The building block several strategies share: items (partitions, or groups of
partitions) come in classes; every item of a class may go to the same members
(those subscribed to its topic, say).  Members may already carry a fixed load
that cannot move (pinned partitions, weighted partitions placed earlier).

Result, in this order:

1. balance - total loads (fixed plus items) form an optimal semi-matching: no
   chain of item moves, each to a member allowed to take it, leads from a
   member with ``k + 2`` or more to one with ``k`` or fewer;
2. stickiness - an item stays with its previous owner unless balance needs it
   elsewhere, and an item that has to move is one its holder did not own.

Steps: keep owned items; water-fill the rest, most constrained class first;
then push items along cheapest paths (fewest owned items moved) from the
busiest members to members at least two lighter until no such path exists.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from .paths import trace_path

#: An item: a tuple, such as a TopicPartition (tuples sort, so results are deterministic).
Item = TypeVar("Item", bound=tuple[Any, ...])
#: A class of items (a topic, say).
Key = TypeVar("Key", bound=Hashable)


def sticky_fill(
    n_members: int,
    items: Sequence[tuple[Key, Item]],
    eligible: Mapping[Key, Sequence[int]],
    owner: Mapping[Item, int],
    fixed: Sequence[int] | None = None,
) -> list[list[Item]]:
    """Place ``(class, item)`` pairs on members ``0..n_members-1``; see the module docstring.

    ``eligible[c]`` lists the members that may take items of class ``c`` (each
    class must have at least one); ``owner`` gives an item's previous owner;
    ``fixed`` the load each member already carries.  Items must be sortable
    within a class; the result is sorted per member.
    """
    load = list(fixed) if fixed is not None else [0] * n_members
    held: list[dict[Key, list[Item]]] = [{} for _ in range(n_members)]
    free: dict[Key, list[Item]] = {}
    allowed = {c: frozenset(ms) for c, ms in eligible.items()}
    for c, item in items:
        o = owner.get(item)
        if o is not None and o in allowed[c]:
            held[o].setdefault(c, []).append(item)
            load[o] += 1
        else:
            free.setdefault(c, []).append(item)

    # most constrained classes first, so flexible items fill in around them
    for c in sorted(free, key=lambda c: (len(allowed[c]), repr(c))):
        heap = [(load[m], m) for m in sorted(allowed[c])]
        heapq.heapify(heap)
        for item in sorted(free[c]):
            _l, m = heapq.heappop(heap)
            held[m].setdefault(c, []).append(item)
            load[m] += 1
            heapq.heappush(heap, (load[m], m))

    _Balancer(load, held, eligible, owner).run()
    out: list[list[Item]] = []
    for m in range(n_members):
        mine = [i for c in held[m] for i in held[m][c]]
        mine.sort()
        out.append(mine)
    return out


class _Balancer(Generic[Key, Item]):
    def __init__(
        self,
        load: list[int],
        held: list[dict[Key, list[Item]]],
        eligible: Mapping[Key, Sequence[int]],
        owner: Mapping[Item, int],
    ) -> None:
        self.load = load
        self.held = held
        self.eligible = eligible
        self.owner = owner
        # (member, class) -> how many of the held items the member owned before
        self.own: dict[tuple[int, Key], int] = {}
        for m, by_class in enumerate(held):
            for c, its in by_class.items():
                n = sum(1 for i in its if owner.get(i) == m)
                if n:
                    self.own[(m, c)] = n

    def run(self) -> None:
        load, held = self.load, self.held
        active = {m for m in range(len(load)) if held[m]}
        active.update(m for ms in self.eligible.values() for m in ms)
        while active:
            top = max(load[m] for m in active)
            sources = sorted(m for m in active if load[m] == top and held[m])
            found, reached = self._cheapest_path(sources, active, top - 2)
            if found is None:
                # nothing the busiest members hold can reach a lighter member: this
                # closed set is already optimal; carry on below it
                active -= reached
                active -= {m for m in active if load[m] == top}
                continue
            hops, target = found
            amount = (top - load[target]) // 2
            for giver, c, _taker in hops:
                amount = min(amount, len(held[giver][c]))
            for giver, c, taker in hops:
                for _ in range(amount):
                    self._move(giver, c, taker)
                load[giver] -= amount
                load[taker] += amount

    def _move(self, giver: int, c: Key, taker: int) -> None:
        """Move one item, one the giver did not own if there is one."""
        items = self.held[giver][c]
        own = self.own.get((giver, c), 0)
        k = len(items) - 1
        if own < len(items):
            while self.owner.get(items[k]) == giver:
                k -= 1
        item = items.pop(k)
        if not items:
            del self.held[giver][c]
        if self.owner.get(item) == giver:
            self.own[(giver, c)] = own - 1
        elif self.owner.get(item) == taker:
            self.own[(taker, c)] = self.own.get((taker, c), 0) + 1
        self.held[taker].setdefault(c, []).append(item)

    def _cheapest_path(
        self, sources: Sequence[int], active: set[int], max_target_load: int
    ) -> tuple[tuple[list[tuple[int, Key, int]], int] | None, set[int]]:
        """0-1 BFS (cost: owned items moved) from ``sources`` to a member at most
        ``max_target_load``; also returns the members reached."""
        dist_m: dict[int, int] = dict.fromkeys(sources, 0)
        via_class: dict[int, Key] = {}
        dist_c: dict[Key, int] = {}
        via_member: dict[Key, int] = {}
        done_m: set[int] = set()
        done_c: set[Key] = set()
        # entries: (cost, member, None) or (cost, None, class)
        queue: deque[tuple[int, int | None, Key | None]] = deque((0, s, None) for s in sources)
        while queue:
            d, member, cls = queue.popleft()
            if member is not None:
                node = member
                if node in done_m or d > dist_m[node]:
                    continue
                done_m.add(node)
                if self.load[node] <= max_target_load:
                    return (trace_path(node, via_class, via_member), node), done_m
                for c, its in self.held[node].items():
                    cost = 1 if self.own.get((node, c), 0) == len(its) else 0
                    nd = d + cost
                    if c not in done_c and nd < dist_c.get(c, nd + 1):
                        dist_c[c] = nd
                        via_member[c] = node
                        (queue.append if cost else queue.appendleft)((nd, None, c))
            elif cls is not None:
                if cls in done_c or d > dist_c[cls]:
                    continue
                done_c.add(cls)
                for j in self.eligible[cls]:
                    if j in active and j not in done_m and d < dist_m.get(j, d + 1):
                        dist_m[j] = d
                        via_class[j] = cls
                        queue.appendleft((d, j, None))
        return None, done_m
