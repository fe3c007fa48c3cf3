"""Figures that describe an assignment: load spread, per-topic spread and partitions moved."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

AssignmentLike = Mapping[str, Mapping[str, Sequence[int]]]


def partition_counts_per_member(assignment: AssignmentLike) -> dict[str, int]:
    return {m: sum(map(len, by_topic.values())) for m, by_topic in assignment.items()}


def count_spread(assignment: AssignmentLike) -> int:
    """Most minus fewest partitions held by a member (0 for an empty group)."""
    counts = list(partition_counts_per_member(assignment).values())
    return max(counts) - min(counts) if counts else 0


def topic_spread(
    assignment: AssignmentLike, subscriptions: Mapping[str, Iterable[str]] | None = None
) -> int:
    """Worst per-topic spread: over topics, most minus fewest of the topic's partitions held
    by one of its subscribers (``subscriptions``: member -> topics; without it every member
    of ``assignment`` counts as subscribed to every topic it holds or another holds)."""
    subscribers: dict[str, int] = {}
    if subscriptions is not None:
        # members share a few distinct subscriptions: count each (hashable) one once
        kinds: dict[frozenset[str], int] = {}
        for topics in subscriptions.values():
            if isinstance(topics, frozenset):
                kinds[topics] = kinds.get(topics, 0) + 1
            else:
                for t in topics:
                    subscribers[t] = subscribers.get(t, 0) + 1
        for kind, n in kinds.items():
            for t in kind:
                subscribers[t] = subscribers.get(t, 0) + n
    # (topic, how many of its partitions one member holds) -> members: counted in C, one
    # pass per member, whatever the number of (member, topic) pairs
    cells: Counter[tuple[str, int]] = Counter()
    for by_topic in assignment.values():
        cells.update(zip(by_topic.keys(), map(len, by_topic.values()), strict=True))
    most: dict[str, int] = {}
    fewest: dict[str, int] = {}
    holders: dict[str, int] = {}
    for (t, n), members in cells.items():
        if not n:
            continue
        if t in most:
            most[t] = max(most[t], n)
            fewest[t] = min(fewest[t], n)
            holders[t] += members
        else:
            most[t], fewest[t], holders[t] = n, n, members
    worst = 0
    for t, hi in most.items():
        n_subs = len(assignment) if subscriptions is None else subscribers.get(t, 0)
        # a subscriber holding none of the topic makes the fewest 0
        worst = max(worst, hi - (fewest[t] if holders[t] >= n_subs else 0))
    return worst


def owners(assignment: AssignmentLike) -> dict[tuple[str, int], str]:
    return {
        (t, p): member
        for member, by_topic in assignment.items()
        for t, ps in by_topic.items()
        for p in ps
    }


def moved_partitions(
    previous: AssignmentLike,
    current: AssignmentLike,
    partition_counts: Mapping[str, int] | None = None,
) -> int:
    """Partitions a member had before and that now belong to another member.

    Counted per previous owner.  With ``partition_counts`` (topics still being
    assigned), a partition whose topic is gone is not counted as moved.  A member
    whose partitions did not change costs one comparison.
    """
    moved = 0
    for member, before in previous.items():
        after = current.get(member, {})
        if after == before:
            continue
        for topic, ps in before.items():
            mine = after.get(topic)
            if mine == ps or not ps:
                continue
            if partition_counts is not None:
                n = partition_counts.get(topic, 0)
                if n == 0:
                    continue
                keep = set(mine) if mine else set()
                moved += sum(1 for p in ps if p not in keep and 0 <= p < n)
            else:
                keep = set(mine) if mine else set()
                moved += sum(1 for p in ps if p not in keep)
    return moved
