"""Figures of one simulated rebalance: balance, movement, rack locality, co-partitioning."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..core.metrics import topic_spread
from ..core.model import TopicPartition
from .scenario import SimMember

AssignmentLike = Mapping[str, Mapping[str, Sequence[int]]]


@dataclass(frozen=True, slots=True)
class Balance:
    count_imbalance: int
    #: worst over topics of most minus fewest of the topic's partitions per subscriber
    topic_spread: int
    load_imbalance: float
    idle_members: int
    unassigned: int
    duplicated: int
    rack_locality: float | None
    copartition_violations: int
    #: member -> summed weight of its partitions
    loads: dict[str, float]


class Weigher:
    """Weight of a partition; partitions without a given weight weigh the mean of the rest."""

    def __init__(self, weights: Mapping[TopicPartition, float] | None) -> None:
        self._weights = dict(weights or {})
        self.default = sum(self._weights.values()) / len(self._weights) if self._weights else 1.0

    def __call__(self, topic: str, partition: int) -> float:
        return self._weights.get(TopicPartition(topic, partition), self.default)

    def of(self, partitions: Iterable[tuple[str, int]]) -> dict[TopicPartition, float]:
        """Weights of ``partitions``: what a load-aware assignor is given in a simulation."""
        return {TopicPartition(t, p): self(t, p) for t, p in partitions}

    def total(self, topic: str, partitions: Sequence[int]) -> float:
        if not self._weights:
            return self.default * len(partitions)
        get, default = self._weights.get, self.default
        return sum(get(TopicPartition(topic, p), default) for p in partitions)


def owner_map(assignment: AssignmentLike) -> dict[tuple[str, int], str]:
    """(topic, partition) -> owner; with duplicates, the member listed first keeps it."""
    out: dict[tuple[str, int], str] = {}
    for member, by_topic in assignment.items():
        for topic, ps in by_topic.items():
            for p in ps:
                out.setdefault((topic, p), member)
    return out


def balance(
    assignment: AssignmentLike,
    members: Sequence[SimMember],
    topics: Mapping[str, int],
    weigh: Weigher,
    replica_racks: Callable[[str, int], frozenset[str]],
) -> Balance:
    """Balance figures over the members in the group and the partitions they subscribe to."""
    subscribed = {t for m in members for t in m.topics if topics.get(t, 0) > 0}
    counts: dict[str, int] = {}
    loads: dict[str, float] = {}
    seen: set[tuple[str, int]] = set()
    duplicated = local = rack_known = 0
    for m in members:
        n, load = 0, 0.0
        for topic, ps in assignment.get(m.member_id, {}).items():
            n += len(ps)
            load += weigh.total(topic, ps)
            before = len(seen)
            seen.update((topic, p) for p in ps)
            duplicated += len(ps) - (len(seen) - before)
            if m.rack is not None:
                for p in ps:
                    replicas = replica_racks(topic, p)
                    if replicas:
                        rack_known += 1
                        local += m.rack in replicas
        counts[m.member_id] = n
        loads[m.member_id] = load
    total = sum(topics[t] for t in subscribed)
    unassigned = total - sum(1 for t, p in seen if t in subscribed and p < topics[t])
    mean = sum(loads.values()) / len(loads) if loads else 0.0
    in_group = {m.member_id: assignment.get(m.member_id, {}) for m in members}
    return Balance(
        count_imbalance=max(counts.values()) - min(counts.values()) if counts else 0,
        topic_spread=topic_spread(
            in_group, {m.member_id: [t for t in m.topics if t in subscribed] for m in members}
        ),
        load_imbalance=max(loads.values()) / mean if mean > 0 else 1.0,
        idle_members=sum(1 for n in counts.values() if n == 0),
        unassigned=unassigned,
        duplicated=duplicated,
        rack_locality=local / rack_known if rack_known else None,
        copartition_violations=copartition_violations(assignment, members, topics),
        loads=loads,
    )


def copartition_violations(
    assignment: AssignmentLike, members: Sequence[SimMember], topics: Mapping[str, int]
) -> int:
    """Partition numbers whose owners differ across co-partitioned topics.

    Topics count as co-partitioned when they have the same partition count and
    exactly the same subscribers (the usual setup for joining two keyed
    streams).  Each (group of topics, partition number) with more than one
    owner, or no owner on one of the topics, counts once.
    """
    subscribers: dict[str, set[str]] = {}
    for m in members:
        for t in m.topics:
            if topics.get(t, 0) > 0:
                subscribers.setdefault(t, set()).add(m.member_id)
    groups: dict[tuple[int, frozenset[str]], list[str]] = {}
    for t, who in subscribers.items():
        groups.setdefault((topics[t], frozenset(who)), []).append(t)
    owners = owner_map(assignment)
    violations = 0
    for (count, _who), group in groups.items():
        if len(group) < 2:
            continue
        for p in range(count):
            if len({owners.get((t, p)) for t in group}) > 1:
                violations += 1
    return violations


def movement(
    previous: AssignmentLike,
    current: AssignmentLike,
    topics: Mapping[str, int],
    stayed: set[str],
    weigh: Weigher,
) -> tuple[int, float, int]:
    """(partitions moved, weight moved, moved away from members that stayed in the group).

    A partition moved when a member that had it before no longer has it and it
    still exists; the last figure leaves out moves forced by a departure.
    """
    moved = from_stayers = 0
    weight = 0.0
    for member, before in previous.items():
        now = current.get(member, {})
        if now == before:
            continue
        for topic, ps in before.items():
            keep = set(now.get(topic, ()))
            limit = topics.get(topic, 0)
            for p in ps:
                if p < limit and p not in keep:
                    moved += 1
                    weight += weigh(topic, p)
                    from_stayers += member in stayed
    return moved, weight, from_stayers
