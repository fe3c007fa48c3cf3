"""Checks every assignment before it leaves the leader."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .model import GroupSpec


class InvalidAssignmentError(ValueError):
    """An assignor produced an assignment that would lose or duplicate partitions."""


def validate_assignment(
    group: GroupSpec,
    assignment: Mapping[str, Mapping[str, Sequence[int]]],
    *,
    broadcast: bool = False,
) -> None:
    """Raise :class:`InvalidAssignmentError` unless the assignment is complete and sound.

    Sound: only group members, only existing partitions of topics the member
    subscribes to.  Complete: every partition of every subscribed topic goes to
    exactly one member - or, for a broadcast strategy, to every subscriber.
    """
    members = {m.member_id: m for m in group.members}
    unknown = sorted(set(assignment) - set(members))
    if unknown:
        raise InvalidAssignmentError(f"assignment names members not in the group: {unknown[:5]}")
    per_topic: dict[str, list[int]] = {}
    for member_id, by_topic in assignment.items():
        topics = members[member_id].topics
        if not by_topic.keys() <= topics:
            extra = sorted(t for t, ps in by_topic.items() if ps and t not in topics)
            if extra:
                raise InvalidAssignmentError(
                    f"member {member_id} was given {extra[0]} but does not subscribe to it"
                )
        for topic, partitions in by_topic.items():
            if not partitions:
                continue
            got = per_topic.get(topic)
            if got is None:
                per_topic[topic] = list(partitions)
            else:
                got.extend(partitions)

    subscribers: dict[str, int] = {}
    for m in group.members:
        for t in m.topics:
            subscribers[t] = subscribers.get(t, 0) + 1
    for topic, got in per_topic.items():
        n = group.partition_count(topic)
        if min(got) < 0 or max(got) >= n:
            raise InvalidAssignmentError(f"a partition of {topic} outside 0..{n - 1} was assigned")
    for topic in group.subscribed_topics():
        n = group.partition_count(topic)
        got = per_topic.get(topic, [])
        distinct = len(set(got))
        if distinct != n:
            raise InvalidAssignmentError(
                f"{n - distinct} partition(s) of {topic} were not assigned to any member"
            )
        if broadcast:
            if len(got) != n * subscribers[topic]:
                raise InvalidAssignmentError(
                    f"broadcast: not every subscriber of {topic} got all {n} partitions"
                )
        elif len(got) != n:
            raise InvalidAssignmentError(
                f"{len(got) - n} partition(s) of {topic} were assigned twice"
            )
