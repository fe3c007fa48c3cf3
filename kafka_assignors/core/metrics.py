"""Figures that describe an assignment: load spread and partitions moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

AssignmentLike = Mapping[str, Mapping[str, Sequence[int]]]


def partition_counts_per_member(assignment: AssignmentLike) -> dict[str, int]:
    return {m: sum(len(ps) for ps in by_topic.values()) for m, by_topic in assignment.items()}


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


def moved_partitions(previous: AssignmentLike, current: AssignmentLike) -> int:
    """Partitions that had an owner before and have a different one now."""
    before = owners(previous)
    moved = 0
    for member, by_topic in current.items():
        for t, ps in by_topic.items():
            for p in ps:
                old = before.get((t, p))
                if old is not None and old != member:
                    moved += 1
    return moved
