"""The plain model every assignor works on: a group in, an assignment out.

Nothing here imports a Kafka client.  Adapters translate client-library types
to :class:`GroupSpec` and an :data:`Assignment` back to the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import NamedTuple

#: Generation of a claim whose generation is unknown (old subscription versions).
UNKNOWN_GENERATION = -1


class TopicPartition(NamedTuple):
    """A partition of a topic.  Equal to (and hashes like) kafka-python's TopicPartition."""

    topic: str
    partition: int


#: member id -> topic -> sorted partition numbers.  The canonical result of an assignor.
Assignment = dict[str, dict[str, list[int]]]


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member of the group as the leader sees it at assignment time."""

    member_id: str
    topics: frozenset[str]
    #: Partitions the member says it owns, per topic (from its subscription).
    owned: Mapping[str, Sequence[int]] = field(default_factory=dict)
    #: Generation in which the member got ``owned``; older claims lose to newer ones.
    generation: int = UNKNOWN_GENERATION
    #: ``group.instance.id`` of a static member, else None.
    instance_id: str | None = None
    rack: str | None = None
    #: Assignor-specific data the member sent (already decoded by the client binding).
    user_data: Mapping[str, object] = field(default_factory=dict)

    @property
    def sort_key(self) -> tuple[int, str]:
        """Order members by what survives a restart: instance id first, then member id."""
        if self.instance_id is not None:
            return (0, self.instance_id)
        return (1, self.member_id)

    def owned_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t, ps in self.owned.items() for p in ps]


def _slot_setters() -> tuple[Callable[[object, object], None], ...]:
    # each field's slot, set directly: what the frozen dataclass's __init__ does through
    # object.__setattr__ (a lookup by name per field)
    return tuple(MemberSpec.__dict__[f.name].__set__ for f in fields(MemberSpec))


def member_spec(
    member_id: str,
    topics: frozenset[str],
    owned: Mapping[str, Sequence[int]],
    generation: int,
    instance_id: str | None,
    rack: str | None,
    user_data: Mapping[str, object],
) -> MemberSpec:
    """``MemberSpec(member_id, topics, owned, ...)`` with every field given, made about
    three times faster (the leader makes one per member)."""
    spec = _new(MemberSpec)
    _set_id(spec, member_id)
    _set_topics(spec, topics)
    _set_owned(spec, owned)
    _set_generation(spec, generation)
    _set_instance_id(spec, instance_id)
    _set_rack(spec, rack)
    _set_user_data(spec, user_data)
    return spec


_new = object.__new__
(_set_id, _set_topics, _set_owned, _set_generation, _set_instance_id, _set_rack,
 _set_user_data) = _slot_setters()


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic as cluster metadata describes it."""

    name: str
    partitions: int
    #: Racks of each partition's replicas (partition -> racks); empty when unknown.
    replica_racks: Mapping[int, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """The whole group: members, the topics they can see, optional partition weights."""

    members: tuple[MemberSpec, ...]
    topics: Mapping[str, TopicSpec]
    #: Optional load per partition (missing partitions weigh the mean of the rest).
    weights: Mapping[TopicPartition, float] | None = None

    @staticmethod
    def build(
        members: Iterable[MemberSpec],
        partition_counts: Mapping[str, int],
        weights: Mapping[TopicPartition, float] | None = None,
    ) -> GroupSpec:
        """Convenience constructor from a ``{topic: partition count}`` mapping."""
        topics = {t: TopicSpec(t, n) for t, n in partition_counts.items()}
        return GroupSpec(tuple(members), topics, weights)

    def partition_count(self, topic: str) -> int:
        spec = self.topics.get(topic)
        return spec.partitions if spec is not None else 0

    def subscribed_topics(self) -> list[str]:
        """Sorted topics that at least one member subscribes to and that have partitions."""
        # members share a few distinct subscriptions: each is read once
        seen = {t for topics in {m.topics for m in self.members} for t in topics}
        return sorted(t for t in seen if self.partition_count(t) > 0)


def assignment_from_partitions(
    per_member: Mapping[str, Iterable[tuple[str, int]]],
) -> Assignment:
    """Turn ``{member: [TopicPartition, ...]}`` into the canonical :data:`Assignment`."""
    out: Assignment = {}
    for member, tps in per_member.items():
        by_topic: dict[str, list[int]] = {}
        for topic, partition in tps:
            by_topic.setdefault(topic, []).append(partition)
        for ps in by_topic.values():
            ps.sort()
        out[member] = by_topic
    return out


def assignment_partitions(assignment: Mapping[str, Mapping[str, Sequence[int]]]) -> dict[
    str, list[TopicPartition]
]:
    """The inverse of :func:`assignment_from_partitions`."""
    return {
        m: [TopicPartition(t, p) for t in sorted(by_topic) for p in by_topic[t]]
        for m, by_topic in assignment.items()
    }
