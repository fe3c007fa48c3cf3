"""The incremental cooperative protocol (KIP-429) on the model, for any strategy.

Round one gives every member its target assignment minus the partitions that
another member still holds; those holders see their assignment shrink, revoke
the partitions and rejoin.  In round two nobody holds them any more and the
same strategy hands them to their new owners.  No partition is ever held by
two members at once.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from itertools import compress

from .model import Assignment

#: (generation, topic -> partitions) a member reports it still holds.
Holding = tuple[int, Mapping[str, Sequence[int]]]


def withhold_moving(
    target: Mapping[str, Mapping[str, Sequence[int]]],
    holders: Mapping[str, Mapping[int, frozenset[str]]],
) -> tuple[Assignment, int]:
    """Drop from ``target`` each partition whose current holders do not include its new owner.

    ``holders`` maps topic -> partition -> members that still hold it (members
    that revoked everything before joining, as in the eager protocol, hold
    nothing).  Returns the first-round assignment and how many partitions wait
    for the second round.
    """
    out: Assignment = {}
    pending = 0
    for member, by_topic in target.items():
        mine: dict[str, list[int]] = {}
        for topic, partitions in by_topic.items():
            held = holders.get(topic)
            if not held:
                mine[topic] = list(partitions)
                continue
            keep = []
            for p in partitions:
                who = held.get(p)
                if who and member not in who:
                    pending += 1
                else:
                    keep.append(p)
            if keep:
                mine[topic] = keep
        out[member] = mine
    return out, pending


def withhold_held(
    target: Assignment,
    holding: Mapping[str, Holding],
) -> tuple[Assignment, int]:
    """:func:`withhold_moving` from what each member holds, without a set per partition.

    ``target`` gives each partition to at most one member (a validated assignment).
    Holders count only at the newest generation that claims a partition (older
    claims were fenced and let go).  When every holder reports one generation,
    as in a settled group, only partitions new to their target owner are looked
    up, in one set of held partitions per topic.
    """
    generations = {gen for gen, _parts in holding.values()}
    if len(generations) > 1:
        return withhold_moving(target, _holders_by_partition(holding))
    out: Assignment = {}
    empty: Mapping[str, Sequence[int]] = {}
    nothing = (0, empty)
    changing = []
    for member, by_topic in target.items():
        held = holding.get(member, nothing)[1]
        # (a settled member's target may be the very dict it reported: no need to compare)
        if by_topic is held or by_topic == held:
            # the usual case: it keeps exactly what it holds (compared in C); sent as the
            # target's own dict, as eager sends the target (nothing changes it afterwards)
            out[member] = by_topic
        else:
            changing.append(member)
    # A holder whose target is exactly what it holds keeps all it holds, so (each
    # partition going to one member) nobody else gets any of it: only the others'
    # holdings can make a partition wait.  The same holds for a holder whose target
    # keeps all it holds and adds more (a member that takes over a leaver's partitions).
    held_parts = [
        parts
        for m, (_gen, parts) in holding.items()
        if m not in out and _gives_up(parts, target.get(m))
    ]
    held_any: dict[str, set[int]] = {}

    def held_in(topic: str) -> set[int]:
        got = held_any.get(topic)
        if got is None:
            got = held_any[topic] = set().union(*(parts.get(topic, ()) for parts in held_parts))
        return got

    pending = 0
    for member in changing:
        mine_now = holding.get(member, (0, empty))[1]
        if not held_parts:
            # nobody gives anything up, so nothing waits: every list as it is (what the
            # loop below gives when no partition is held by another member)
            # (the target's lists themselves: nothing changes them afterwards)
            out[member] = {
                t: ps for t, ps in target[member].items() if ps or mine_now.get(t) == ps
            }
            continue
        mine: dict[str, list[int]] = {}
        for topic, partitions in target[member].items():
            had = mine_now.get(topic)
            if had == partitions:
                mine[topic] = list(partitions)
                continue
            had_set = set(had) if had else set()
            others = held_in(topic)
            keep = [p for p in partitions if p in had_set or p not in others]
            pending += len(partitions) - len(keep)
            if keep:
                mine[topic] = keep
        out[member] = mine
    return ({m: out[m] for m in target} if changing else out), pending  # in the target's order


def _gives_up(
    held: Mapping[str, Sequence[int]], target: Mapping[str, Sequence[int]] | None
) -> bool:
    """True if ``target`` lacks a partition of ``held``."""
    if not target:
        return any(held.values())
    # topics whose lists differ (compared in C), then the few that do, partition by partition
    differ = compress(held, map(operator.ne, map(target.get, held), held.values()))
    return any(held[t] and not set(held[t]) <= set(target.get(t) or ()) for t in differ)


def _holders_by_partition(
    holding: Mapping[str, Holding],
) -> dict[str, dict[int, frozenset[str]]]:
    best: dict[str, dict[int, tuple[int, set[str]]]] = {}
    for member, (gen, parts) in holding.items():
        for topic, ps in parts.items():
            slot = best.setdefault(topic, {})
            for p in ps:
                g, who = slot.get(p, (gen, set()))
                if gen > g:
                    g, who = gen, set()
                if gen == g:
                    who.add(member)
                slot[p] = (g, who)
    return {t: {p: frozenset(w) for p, (_g, w) in slot.items()} for t, slot in best.items()}
