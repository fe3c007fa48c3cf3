"""Co-partitioned assignment: partition i of joined topics always goes to one member.

Topics with the same partition count and the same subscribers form a join
group; partition number ``i`` of every topic in the group is one unit that a
single member gets (so a consumer joining ``orders`` and ``payments`` keyed the
same way sees both sides of key ``k``).  ``range`` gives this layout only when
the counts happen to divide evenly, and no sticky assignor gives it at all.

Per join group the partition numbers are spread evenly (counts differ by at
most one); a larger share goes to the member with the fewest partitions so
far, then to the member that owned more.  A member keeps the numbers it owned
(the number's owner is the member that held most of its partitions) up to its
share; the rest are dealt out round-robin.
"""

from __future__ import annotations

from collections.abc import Sequence

from .balanced_sticky import canonical_members
from .claims import resolve_claims
from .model import Assignment, GroupSpec
from .subscriptions import usable_subscriptions


def join_groups(
    group: GroupSpec, subs: Sequence[frozenset[str]]
) -> list[tuple[list[str], int, list[int]]]:
    """``(topics, partition count, subscriber indices)`` per join group, largest first."""
    by_key: dict[tuple[int, tuple[int, ...]], list[str]] = {}
    for t in group.subscribed_topics():
        takers = tuple(i for i, s in enumerate(subs) if t in s)
        if takers:
            by_key.setdefault((group.partition_count(t), takers), []).append(t)
    out = [(sorted(ts), n, list(takers)) for (n, takers), ts in by_key.items()]
    out.sort(key=lambda g: (-g[1] * len(g[0]), g[0]))
    return out


def co_partitioned(group: GroupSpec) -> Assignment:
    """Partition i of every topic in a join group to one member; see the module docstring."""
    members = canonical_members(group)
    subs = usable_subscriptions(group, members)
    counts = {t: spec.partitions for t, spec in group.topics.items()}
    claims = resolve_claims(members, subs, counts)
    total = [0] * len(members)
    result: list[dict[str, list[int]]] = [{} for _ in members]
    for topics, n, takers in join_groups(group, subs):
        # who owned each partition number: the member holding most of its partitions
        held: dict[int, dict[int, int]] = {}
        for i in takers:
            for t in topics:
                for p in claims.owned[i].get(t, ()):
                    held.setdefault(p, {})
                    held[p][i] = held[p].get(i, 0) + 1
        owner = {p: min(h, key=lambda i: (-h[i], i)) for p, h in held.items()}
        owned_n = dict.fromkeys(takers, 0)
        for i in owner.values():
            owned_n[i] += 1

        base, extra = divmod(n, len(takers))
        ranked = sorted(takers, key=lambda i: (total[i], -min(owned_n[i], base + 1), i))
        room = dict.fromkeys(takers, base)
        for i in ranked[:extra]:
            room[i] += 1
        taken: dict[int, int] = {}
        for p in sorted(owner, key=lambda p: (-held[p][owner[p]], p)):
            i = owner[p]
            if room[i]:
                taken[p] = i
                room[i] -= 1
        order = _round_robin(takers, room)
        free = [p for p in range(n) if p not in taken]
        for p, i in zip(free, order, strict=True):
            taken[p] = i
        for p, i in taken.items():
            for t in topics:
                result[i].setdefault(t, []).append(p)
            total[i] += len(topics)
    for by_t in result:
        for ps in by_t.values():
            ps.sort()
    return {m.member_id: result[i] for i, m in enumerate(members)}


def _round_robin(takers: Sequence[int], room: dict[int, int]) -> list[int]:
    """Members in turn, one slot per round, until every member's room is used."""
    order: list[int] = []
    left = dict(room)
    while any(left.values()):
        for i in takers:
            if left[i]:
                order.append(i)
                left[i] -= 1
    return order
