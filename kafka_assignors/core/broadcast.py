"""Broadcast assignment: every member gets every partition of every topic it subscribes to.

This deliberately breaks the rule that a partition has one consumer in a
group, so the leader validates it with ``broadcast=True``.  What it means for
committed offsets is spelled out on :class:`~kafka_assignors.BroadcastAssignor`.
"""

from __future__ import annotations

from .balanced_sticky import usable_topics
from .model import Assignment, GroupSpec


def broadcast(group: GroupSpec) -> Assignment:
    """Each member: all partitions of its subscribed topics that exist."""
    return {
        m.member_id: {t: list(range(group.partition_count(t))) for t in sorted(
            usable_topics(group, m))}
        for m in group.members
    }
