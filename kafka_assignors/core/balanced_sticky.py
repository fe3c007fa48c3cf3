"""The balanced sticky algorithm: optimal balance first, then the fewest moves.

Members are split into independent parts (members linked by a shared topic).
A part whose members all subscribe to the same topics is solved in closed form
(:mod:`.uniform`); any other part by the min-cost method of :mod:`.unequal`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from .claims import resolve_claims
from .model import Assignment, GroupSpec, MemberSpec
from .unequal import POLISH_BUDGET, assign_unequal
from .uniform import IndexedAssignment, assign_uniform

log = logging.getLogger("kafka_assignors.core")


def canonical_members(group: GroupSpec) -> list[MemberSpec]:
    """Members in the order every algorithm uses, whatever order they arrived in."""
    return sorted(group.members, key=lambda m: (m.sort_key, m.member_id))


def usable_topics(group: GroupSpec, member: MemberSpec) -> frozenset[str]:
    """The member's topics that exist with at least one partition."""
    return frozenset(t for t in member.topics if group.partition_count(t) > 0)


def balanced_sticky(group: GroupSpec, polish_budget: int = POLISH_BUDGET) -> Assignment:
    """Assign every partition of every subscribed topic; see the module docstring.

    ``polish_budget`` caps the work spent minimising movement among members with
    different subscriptions (see :data:`.unequal.POLISH_BUDGET`); a count of steps,
    not a time, so the result never depends on how fast the leader is.
    """
    members = canonical_members(group)
    # members usually share a handful of distinct subscriptions: work each out once
    usable: dict[frozenset[str], frozenset[str]] = {}
    subs = []
    for m in members:
        u = usable.get(m.topics)
        if u is None:
            u = usable[m.topics] = usable_topics(group, m)
        subs.append(u)
    counts = {t: spec.partitions for t, spec in group.topics.items()}
    claims = resolve_claims(members, subs, counts)

    indexed: IndexedAssignment = {}
    for part_members, part_topics in _parts(subs):
        first = subs[part_members[0]]
        if all(subs[i] == first for i in part_members):
            indexed.update(
                assign_uniform(part_members, part_topics, counts, claims.owned, claims.claimed)
            )
        else:
            part_subs = {i: sorted(subs[i]) for i in part_members}
            indexed.update(
                assign_unequal(part_members, part_subs, counts, claims.owned, polish_budget)
            )
    return {m.member_id: indexed.get(i, {}) for i, m in enumerate(members)}


def _parts(subs: Sequence[frozenset[str]]) -> list[tuple[list[int], list[str]]]:
    """Connected parts of the member-topic graph (members with no topics are left out)."""
    parent: dict[str, str] = {}

    def find(t: str) -> str:
        root = t
        while parent[root] != root:
            root = parent[root]
        while parent[t] != root:
            parent[t], t = root, parent[t]
        return root

    distinct: Mapping[frozenset[str], None] = dict.fromkeys(s for s in subs if s)
    for topics in distinct:
        it = iter(topics)
        first = next(it)
        parent.setdefault(first, first)
        root = find(first)
        for t in it:
            parent.setdefault(t, t)
            other = find(t)
            if other != root:
                parent[other] = root
    members_of: dict[str, list[int]] = {}
    for i, topics in enumerate(subs):
        if topics:
            members_of.setdefault(find(next(iter(topics))), []).append(i)
    topics_of: dict[str, list[str]] = {}
    for t in parent:
        topics_of.setdefault(find(t), []).append(t)
    return [(members_of[r], sorted(topics_of[r])) for r in sorted(members_of)]
