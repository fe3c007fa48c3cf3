"""Figures that describe an assignment: load spread and partitions moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

AssignmentLike = Mapping[str, Mapping[str, Sequence[int]]]


def partition_counts_per_member(assignment: AssignmentLike) -> dict[str, int]:
    return {m: sum(map(len, by_topic.values())) for m, by_topic in assignment.items()}


def count_spread(assignment: AssignmentLike) -> int:
    """Most minus fewest partitions held by a member (0 for an empty group)."""
    counts = list(partition_counts_per_member(assignment).values())
    return max(counts) - min(counts) if counts else 0


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
