"""The balanced sticky algorithm: optimal balance, then each topic even, then the fewest moves.

Objectives, in this order (``x[m][t]``: partitions of topic ``t`` member ``m`` gets):
1. the least sum of squared member loads (an optimal semi-matching);
2. the least sum over topics and members of ``x[m][t] ** 2`` (each topic spread
   over its subscribers as evenly as 1 allows);
3. the fewest owned partitions (after :mod:`.claims`) that change owner.

Members are split into independent parts (members linked by a shared topic),
in canonical order (:func:`canonical_members`: static members by instance id,
then member id).  A part whose members all subscribe to the same topics is
planned without search (:mod:`.uniform`); any other part, or a uniform plan
that cannot be proven to move the fewest partitions, goes to the min-cost
method of :mod:`.unequal` (which solves objective 2 on classes of members,
:mod:`.class_shares`).  Whatever the objectives leave open is decided by fixed
orders (members canonical, topics by name, partitions by number), so every
leader computes the same assignment.  ``per_topic=False`` keeps the old
tie-breaking: objectives 1 and 3 only (:mod:`.uniform_total`, and
:mod:`.unequal` without objective 2).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from operator import attrgetter

from .claims import Claims, resolve_claims
from .model import Assignment, GroupSpec, MemberSpec
from .unequal import POLISH_BUDGET, assign_unequal
from .uniform import HeldCounts, IndexedAssignment, deal_uniform, plan_counts, plan_uniform
from .uniform_total import assign_uniform_total

log = logging.getLogger("kafka_assignors.core")


def canonical_members(group: GroupSpec) -> list[MemberSpec]:
    """Members in the order every algorithm uses, whatever order they arrived in."""
    if all(m.instance_id is None for m in group.members):
        return sorted(group.members, key=_member_id)  # the same order, keys made in C
    return sorted(group.members, key=lambda m: (m.sort_key, m.member_id))


_member_id = attrgetter("member_id")
_topics = attrgetter("topics")


def usable_topics(group: GroupSpec, member: MemberSpec) -> frozenset[str]:
    """The member's topics that exist with at least one partition."""
    return frozenset(t for t in member.topics if group.partition_count(t) > 0)


def balanced_sticky(
    group: GroupSpec, polish_budget: int = POLISH_BUDGET, per_topic: bool = True
) -> Assignment:
    """Assign every partition of every subscribed topic; see the module docstring.

    ``polish_budget`` caps the work spent on the exact search (see
    :data:`.unequal.POLISH_BUDGET`); a count of steps, not a time, so the result
    never depends on how fast the leader is.  ``per_topic`` (default) also
    balances every topic over its subscribers.
    """
    members = canonical_members(group)
    # members usually share a handful of distinct subscriptions: work each out once (and
    # look each member's up in C)
    usable = {
        topics: frozenset(t for t in topics if group.partition_count(t) > 0)
        for topics in dict.fromkeys(map(_topics, members))
    }
    subs = list(map(usable.__getitem__, map(_topics, members)))
    counts = {t: spec.partitions for t, spec in group.topics.items()}
    claims = resolve_claims(members, subs, counts)

    indexed: IndexedAssignment = {}
    extra_moves = 0
    for part_members, part_topics in _parts(subs):
        first = subs[part_members[0]]
        # (members share one set per subscription: list.count compares by identity first,
        # where == would compare every topic)
        if list(map(subs.__getitem__, part_members)).count(first) == len(part_members):
            if not per_topic:
                indexed.update(
                    assign_uniform_total(
                        part_members, part_topics, counts, claims.owned, claims.claimed
                    )
                )
                continue
            got, extra = _uniform_part(part_members, part_topics, counts, claims, polish_budget)
            indexed.update(got)
            extra_moves += extra
        else:
            part_subs = {i: sorted(subs[i]) for i in part_members}
            indexed.update(
                assign_unequal(
                    part_members, part_subs, counts, claims.owned, polish_budget, per_topic,
                    claimed=claims.claimed,
                )
            )
    if extra_moves:
        # the one-time repair of a group that was unbalanced per topic (or a rare
        # event where even topics cost a move): say so, it explains the rebalance
        log.info(
            "per-topic balance moved %d partition(s) more than total balance alone needed",
            extra_moves,
        )
    return {m.member_id: indexed.get(i, {}) for i, m in enumerate(members)}


def _uniform_part(
    part_members: list[int],
    part_topics: list[str],
    counts: Mapping[str, int],
    claims: Claims,
    polish_budget: int,
) -> tuple[IndexedAssignment, int]:
    """One part with identical subscriptions, and the moves beyond what total balance needs."""
    held = HeldCounts(claims.owned)  # (counts of the members that need them)
    ones, proven, settled = plan_uniform(
        part_members, part_topics, counts, held, claims.owned, claims.kinds)
    if ones is not None and proven:
        got, moved = deal_uniform(
            part_members, part_topics, counts, claims.owned, claims.claimed, held, ones, settled
        )
    else:
        # rare: the plan cannot be shown to keep the most; the exact search finishes
        # it (or starts afresh if the plan could not be completed)
        start = None if ones is None else plan_counts(part_members, part_topics, counts, ones)
        got = assign_unequal(
            part_members,
            dict.fromkeys(part_members, part_topics),
            counts,
            claims.owned,
            polish_budget,
            True,
            start,
            claims.claimed,
        )
        moved = sum(
            max(0, len(ps) - len(got[i].get(t, ())))
            for i in part_members
            for t, ps in claims.owned[i].items()
        )
    if not moved:
        # (total balance alone needs no more moves than any balanced plan makes: none
        # here, the usual case after a leave, so none to count)
        return got, 0
    return got, moved - _total_only_moves(part_members, part_topics, counts, claims.owned, held)


def _total_only_moves(
    part_members: list[int],
    part_topics: list[str],
    counts: Mapping[str, int],
    owned: Sequence[Mapping[str, Sequence[int]]],
    held: Mapping[int, Mapping[str, int]],
) -> int:
    """The fewest moves total balance alone needs: members above the floor shed down to
    it, except ``e`` of them that keep one more (the ``e`` larger quotas)."""
    base, e = divmod(sum(counts[t] for t in part_topics), len(part_members))
    # each member's claim count: from its held counts where the plan worked them out
    # (dict.get: none is worked out here), else from its lists
    claimed = [
        sum(map(len, owned[i].values())) if (mine := held.get(i)) is None else sum(mine.values())
        for i in part_members
    ]
    over = [c - base for c in claimed if c > base]
    return sum(over) - min(e, len(over))


def _parts(subs: Sequence[frozenset[str]]) -> list[tuple[list[int], list[str]]]:
    """Connected parts of the member-topic graph (members with no topics are left out)."""
    if subs and subs.count(subs[0]) == len(subs):
        # one subscription (the usual case; compared by identity first): one part, or none
        return [(list(range(len(subs))), sorted(subs[0]))] if subs[0] else []
    return _linked_parts(subs)


def _linked_parts(subs: Sequence[frozenset[str]]) -> list[tuple[list[int], list[str]]]:
    """:func:`_parts` of any subscriptions: topics linked by the members that share them."""
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
    root_of = {topics: find(next(iter(topics))) for topics in distinct}  # once per subscription
    members_of: dict[str, list[int]] = {}
    for i, topics in enumerate(subs):
        if topics:
            members_of.setdefault(root_of[topics], []).append(i)
    topics_of: dict[str, list[str]] = {}
    for t in parent:
        topics_of.setdefault(find(t), []).append(t)
    return [(members_of[r], sorted(topics_of[r])) for r in sorted(members_of)]
