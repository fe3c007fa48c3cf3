"""Reading back a shortest path found by a breadth-first search over members and groups.

Both path searches (:mod:`.unequal` over topics, :mod:`.fill` over partition
classes) alternate member -> group -> member; each records, for a member, the
group it was reached through, and for a group, the member that gives from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
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
