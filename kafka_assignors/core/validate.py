"""Checks every assignment before it leaves the leader."""

from __future__ import annotations

from collections import defaultdict
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
    topics_of = {m.member_id: m.topics for m in group.members}
    unknown = sorted(assignment.keys() - topics_of.keys())
    if unknown:
        raise InvalidAssignmentError(f"assignment names members not in the group: {unknown[:5]}")
    if broadcast:
        _check_broadcast(group, assignment)
        return
    # (a defaultdict: its missing-key step runs in C, where a get and a test per entry cost
    # a third more)
    per_topic: defaultdict[str, list[int]] = defaultdict(list)
    for member_id, by_topic in assignment.items():
        topics = topics_of[member_id]
        if not by_topic.keys() <= topics:
            _check_subscribed(member_id, topics, by_topic)
        for topic, partitions in by_topic.items():
            per_topic[topic].extend(partitions)

    for topic, got in per_topic.items():
        n = group.partition_count(topic)
        if got and (min(got) < 0 or max(got) >= n):  # (only empty lists: nothing to check)
            raise InvalidAssignmentError(f"a partition of {topic} outside 0..{n - 1} was assigned")
    for topic in group.subscribed_topics():
        n = group.partition_count(topic)
        got = per_topic.get(topic, [])
        distinct = len(set(got))
        if distinct != n:
            raise InvalidAssignmentError(
                f"{n - distinct} partition(s) of {topic} were not assigned to any member"
            )
        if len(got) != n:
            raise InvalidAssignmentError(
                f"{len(got) - n} partition(s) of {topic} were assigned twice"
            )


def _check_subscribed(member_id: str, topics: frozenset[str],
                      by_topic: Mapping[str, Sequence[int]]) -> None:
    if by_topic.keys() <= topics:
        return  # the common case, checked without a loop in Python
    extra = sorted(t for t, ps in by_topic.items() if ps and t not in topics)
    if extra:
        raise InvalidAssignmentError(
            f"member {member_id} was given {extra[0]} but does not subscribe to it"
        )


def _check_broadcast(group: GroupSpec,
                     assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> None:
    """Every subscriber of a topic holds each of its partitions exactly once."""
    full = {t: list(range(group.partition_count(t))) for t in group.subscribed_topics()}
    for m in group.members:
        by_topic = assignment.get(m.member_id, {})
        _check_subscribed(m.member_id, m.topics, by_topic)
        for topic in m.topics & full.keys():
            got = list(by_topic.get(topic, ()))
            # broadcast lists come in order: the plain comparison is the cheap common case
            if got != full[topic] and sorted(got) != full[topic]:
                raise InvalidAssignmentError(
                    f"broadcast: member {m.member_id} did not get each of the "
                    f"{len(full[topic])} partitions of {topic} exactly once"
                )
