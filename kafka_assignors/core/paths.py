"""What the path and cycle searches share: reading back a shortest path, finding a
cycle among Bellman-Ford predecessors, and the work budget of those searches.

Both path searches (:mod:`.unequal` over topics, :mod:`.fill` over partition
classes) alternate member -> group -> member; each records, for a member, the
group it was reached through, and for a group, the member that gives from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

G = TypeVar("G", bound=Hashable)


def trace_path(
    target: int, via_group: Mapping[int, G], via_member: Mapping[G, int]
) -> list[tuple[int, G, int]]:
    """Hops ``(giver, group, taker)`` from the search's start to ``target``, in order."""
    hops = []
    node = target
    while node in via_group:
        group = via_group[node]
        giver = via_member[group]
        hops.append((giver, group, node))
        node = giver
    hops.reverse()
    return hops


class Budget:
    """Work left (edge relaxations), shared by all the Bellman-Ford runs of one assignment."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def cycle_in_predecessors(pred: Sequence[int]) -> int | None:
    """A node on a cycle of the predecessor graph (such a cycle has negative cost)."""
    state = [0] * len(pred)  # 0 new, 1 on current walk, 2 finished
    for s in range(len(pred)):
        if state[s]:
            continue
        walk = []
        v = s
        while v != -1 and state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = pred[v]
        if v != -1 and state[v] == 1:
            return v
        for w in walk:
            state[w] = 2
    return None
