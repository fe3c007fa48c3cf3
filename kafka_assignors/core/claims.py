"""Who owns what before the rebalance: resolve stale and conflicting owner claims.

A member's claim counts only for a partition that still exists, of a topic it
still subscribes to.  When several members claim one partition, the claim from
the newest generation wins; on a tie the member that sorts first wins (so the
answer does not depend on the order members arrive in).  Either way exactly one
member keeps the claim.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter, methodcaller
from typing import cast

from .model import MemberSpec
from .names import some_ids

log = logging.getLogger("kafka_assignors.core")

#: (claimed topics in claim order, member indices in order, one partition of each topic)
Kind = tuple[tuple[str, ...], list[int], bool]


@dataclass(slots=True)
class Claims:
    """Resolved claims, indexed like the member list they were built from."""

    #: member index -> topic -> claimed partitions (unique and valid; not necessarily sorted;
    #: possibly the member's own dict and lists: read only).
    owned: list[dict[str, list[int]]]
    #: topic -> every partition somebody keeps a claim on.
    claimed: dict[str, set[int]]
    #: How many claims were dropped, by reason (for logs and tests).
    dropped_stale: int = 0
    dropped_conflict: int = 0
    dropped_invalid: int = 0
    #: Members grouped by the topics they claim (in their ``owned`` dicts' order), with
    #: whether each claims one partition of each: every member with claims, when they were
    #: all kept as sent and gathered that way (:func:`_whole_claims`); else None.
    kinds: list[Kind] | None = None

    def count(self, i: int) -> int:
        return sum(map(len, self.owned[i].values()))


def resolve_claims(
    members: Sequence[MemberSpec],
    subscriptions: Sequence[frozenset[str]],
    partition_counts: Mapping[str, int],
) -> Claims:
    """Resolve every member's owned partitions into at most one owner per partition.

    ``members`` must already be in canonical (sorted) order and ``subscriptions``
    hold each member's usable topics.
    """
    whole_claims = _whole_claims(members, subscriptions, partition_counts)
    if whole_claims is not None:
        return whole_claims
    result = Claims(owned=[{} for _ in members], claimed={})
    # topic -> (rank in first-claimed order, claimed partition lists); who sent each list
    # is worked out again only if some claim is contested (_senders)
    slots: dict[str, tuple[int, list[Sequence[int]]]] = {}
    # the usual case, taken whole at the end if no claim is contested: each member's claims
    # as it sent them, all on subscribed topics, as lists, already in
    # first-claimed topic order
    whole: dict[int, dict[str, list[int]]] | None = {}
    for i, member in enumerate(members):
        owned = member.owned
        if not owned:
            continue
        subs = subscriptions[i]
        items: Iterable[tuple[str, Sequence[int]]] = owned.items()
        if not owned.keys() <= subs:
            items = [(t, ps) for t, ps in owned.items() if t in subs]
            result.dropped_invalid += sum(len(ps) for t, ps in owned.items() if t not in subs)
            whole = None
        last = -1
        for topic, ps in items:
            if not ps or ps.__class__ is not list:
                whole = None
                if not ps:
                    continue
            entry = slots.get(topic)
            if entry is None:
                slots[topic] = entry = (len(slots), [ps])
            else:
                entry[1].append(ps)
                if entry[0] < last:
                    whole = None
            last = entry[0]
        if whole is not None:
            # (checked: lists only; a dict is kept as it is, nothing changes a claim)
            whole[i] = cast(dict[str, list[int]], owned if owned.__class__ is dict else dict(owned))

    conflicts: list[str] = []
    # members whose claims were dropped as stale / as naming partitions that do not exist
    stale_members: set[int] = set()
    invalid_members: set[int] = set()
    contested = set()
    for topic, (_rank, lists) in slots.items():
        n = partition_counts[topic]
        distinct: set[int] = set().union(*lists)
        if sum(map(len, lists)) == len(distinct) and min(distinct) >= 0 and max(distinct) < n:
            # the usual case: nobody else claims these partitions
            result.claimed[topic] = distinct
        else:
            contested.add(topic)
            result.claimed[topic] = set()  # (its place in the order; filled in below)
    if whole is not None and not contested:
        for i, mine in whole.items():
            result.owned[i] = mine
        return result
    senders = _senders(members, subscriptions, slots)
    for topic, (_rank, lists) in slots.items():
        owners = senders[topic]
        n = partition_counts[topic]
        if topic not in contested:
            # (the member's own lists are kept, not copied: nothing changes a claim list)
            for i, ps in zip(owners, lists, strict=True):
                result.owned[i][topic] = ps if ps.__class__ is list else list(ps)
            continue
        claims = [(members[i].generation, i, ps) for i, ps in zip(owners, lists, strict=True)]
        slot: dict[int, tuple[int, int]] = {}
        for gen, i, ps in claims:
            for p in ps:
                if not 0 <= p < n:
                    result.dropped_invalid += 1
                    invalid_members.add(i)
                    continue
                prev = slot.get(p)
                if prev is None:
                    slot[p] = (gen, i)
                elif prev[1] == i:
                    continue  # the member listed the partition twice
                elif gen > prev[0]:
                    slot[p] = (gen, i)
                    result.dropped_stale += 1
                    stale_members.add(prev[1])
                elif gen < prev[0]:
                    result.dropped_stale += 1
                    stale_members.add(i)
                else:
                    result.dropped_conflict += 1
                    if len(conflicts) < 5:
                        conflicts.append(
                            f"{topic}-{p} claimed by {members[prev[1]].member_id} and "
                            f"{members[i].member_id} in generation {gen}"
                        )
        for p, (_gen, i) in sorted(slot.items()):
            result.owned[i].setdefault(topic, []).append(p)
        result.claimed[topic] = set(slot)
    if result.dropped_conflict:
        log.warning(
            "%d partition(s) claimed by two members in the same generation; "
            "the first member in sort order keeps each (e.g. %s)",
            result.dropped_conflict,
            "; ".join(conflicts),
        )
    if invalid_members:
        log.warning(
            "%d owner claim(s) on partitions that do not exist ignored; from %d member(s): %s",
            result.dropped_invalid,
            len(invalid_members),
            _named(members, invalid_members),
        )
    if stale_members:
        # a member that missed a generation (a zombie, or a slow rejoin) still claims
        # partitions that a newer generation gave to somebody else
        log.warning(
            "%d stale owner claim(s) from older generations ignored (a newer generation "
            "gave those partitions to another member); from %d member(s): %s",
            result.dropped_stale,
            len(stale_members),
            _named(members, stale_members),
        )
    return result


def _whole_claims(
    members: Sequence[MemberSpec],
    subscriptions: Sequence[frozenset[str]],
    partition_counts: Mapping[str, int],
) -> Claims | None:
    """The claims when every one is kept as sent (what :func:`resolve_claims` then returns),
    or None if some claim is not (then nothing was decided).

    Members come in few kinds: the same claimed topics, in the same order, under the same
    subscription (after a leave, all but a few).  Each kind is checked once and its claims
    gathered by topic in C, instead of one step per member and topic.  Its members' lists
    are read member by member, in the order they were built (with a million claims, memory
    is the cost: reading each topic's lists across all members would touch every one again).
    """
    kinds: dict[tuple[tuple[str, ...], frozenset[str]], list[int]] = {}
    # a kind costs some steps of its own: with kinds of fewer than 8 members on average
    # (unequal subscriptions, say), member by member is as fast
    most = len(members) // _MEMBERS_PER_KIND
    for i, (member, subs) in enumerate(zip(members, subscriptions, strict=True)):
        if member.owned:
            key = (tuple(member.owned), subs)
            kind = kinds.get(key)
            if kind is None:
                if len(kinds) == most:
                    return None
                kinds[key] = [i]
            else:
                kind.append(i)
    owned_of: list[dict[str, list[int]]] = [{} for _ in members]
    # topic -> (rank in first-claimed order, claimed partitions, claim lists); the kinds come
    # in the order of their first members, so topics are ranked as member by member
    slots: dict[str, tuple[int, list[int], list[Sequence[int]]]] = {}
    gathered: list[Kind] = []
    for (topics, subs), kind in kinds.items():
        if not subs.issuperset(topics):
            return None  # a claim on a topic the member does not (or cannot) subscribe to
        last = -1
        ranked = True
        for topic in topics:
            entry = slots.get(topic)
            if entry is None:
                slots[topic] = entry = (len(slots), [], [])
            elif entry[0] < last:
                ranked = False
            last = entry[0]
        owneds = [members[i].owned for i in kind]
        # every claim list of the kind, member after member: topic j's are every width-th
        width = len(topics)
        lists = list(chain.from_iterable(map(_values, owneds)))
        if not all(lists) or set(map(type, lists)) != _LIST_TYPE:
            return None  # an empty claim list, or not a list
        flat = list(chain.from_iterable(lists))
        singles = len(flat) == len(lists)
        if singles:
            # one partition in each list (none is empty): a column of partitions per topic
            # (checked to exist here, for the whole kind at once)
            if min(flat) < 0 or max(flat) >= min(map(partition_counts.__getitem__, topics)):
                return None  # (or some topic has fewer partitions: not the usual case)
            for j, topic in enumerate(topics):
                slots[topic][1].extend(flat[j::width])
        else:
            for j, topic in enumerate(topics):
                slots[topic][2].extend(lists[j::width])
        if ranked:
            gathered.append((topics, kind, singles))
            if set(map(type, owneds)) == _DICT_TYPE:
                # (checked: lists only; a dict is kept as it is, nothing changes a claim)
                for i, mine in zip(kind, cast(list[dict[str, list[int]]], owneds),
                                   strict=True):
                    owned_of[i] = mine
            else:
                for i, other in zip(kind, owneds, strict=True):
                    owned_of[i] = cast(dict[str, list[int]],
                                       other if other.__class__ is dict else dict(other))
        else:
            # topics in another order than first claimed: resolve_claims then builds each
            # member's claims topic by topic in that order (equal dicts, keys in rank order)
            order = sorted(range(len(topics)), key=lambda j: slots[topics[j]][0])
            in_rank = [topics[j] for j in order]
            gathered.append((tuple(in_rank), kind, singles))
            pick = itemgetter(*order)  # (two topics at least: one is always in order)
            for n, i in enumerate(kind):
                owned_of[i] = dict(zip(in_rank, pick(lists[n * width : (n + 1) * width]),
                                       strict=True))
    claimed: dict[str, set[int]] = {}
    for topic, (_rank, single, lists) in slots.items():
        distinct = set(single)
        if len(distinct) != len(single):
            return None  # contested
        if lists:
            distinct.update(*lists)
            if (len(single) + sum(map(len, lists)) != len(distinct) or min(distinct) < 0
                    or max(distinct) >= partition_counts[topic]):
                return None  # contested, or claims on partitions that do not exist
        claimed[topic] = distinct
    return Claims(owned=owned_of, claimed=claimed, kinds=gathered)


_MEMBERS_PER_KIND = 8
_LIST_TYPE = {list}
_DICT_TYPE = {dict}
_values = methodcaller("values")


def _senders(
    members: Sequence[MemberSpec],
    subscriptions: Sequence[frozenset[str]],
    slots: Mapping[str, object],
) -> dict[str, list[int]]:
    """topic -> the member behind each claim list the first pass kept, in its order."""
    senders: dict[str, list[int]] = {t: [] for t in slots}
    for i, member in enumerate(members):
        subs = subscriptions[i]
        for topic, ps in member.owned.items():
            if ps and topic in subs:
                senders[topic].append(i)
    return senders


def _named(members: Sequence[MemberSpec], indices: set[int]) -> str:
    return some_ids([members[i].member_id for i in sorted(indices)])
