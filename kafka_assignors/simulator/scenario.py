"""What the simulator runs: a group, its topics, optional weights and racks, and a churn sequence.

Everything here is plain, picklable data, so scenarios can be built on one
machine and simulated on another (the pipeline ships them to Spark executors).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.model import TopicPartition

JOIN = "join"
LEAVE = "leave"
CRASH = "crash"
SCALE_OUT = "scale-out"
SCALE_IN = "scale-in"
ADD_PARTITIONS = "add-partitions"
REBALANCE = "rebalance"
INITIAL = "initial"

EVENT_KINDS = (JOIN, LEAVE, CRASH, SCALE_OUT, SCALE_IN, ADD_PARTITIONS, REBALANCE)


@dataclass(frozen=True, slots=True)
class SimMember:
    """One consumer of the simulated group."""

    member_id: str
    topics: tuple[str, ...]
    rack: str | None = None
    #: ``group.instance.id`` for a static member.
    instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """One change to the group, followed by one rebalance (two rounds for cooperative).

    ``kind`` is one of :data:`EVENT_KINDS`; a crash is a leave for the assignor
    but is counted apart in the results.
    """

    kind: str
    joins: tuple[SimMember, ...] = ()
    leaves: tuple[str, ...] = ()
    #: topic -> new partition count (only increases, as in Kafka).
    partitions: Mapping[str, int] = field(default_factory=dict)
    #: The event as written in the scenario, for reports.
    label: str = ""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A group at its first rebalance and the events that follow.

    Partitions missing from ``weights`` (e.g. added later) weigh the mean of the
    given ones; without weights every partition weighs 1.  With ``racks``, the
    replicas of partition p of topic t sit on ``replication`` consecutive racks
    starting at a position derived from (t, p), so partitions added later get
    racks too.
    """

    name: str
    topics: Mapping[str, int]
    members: tuple[SimMember, ...]
    events: tuple[Event, ...] = ()
    weights: Mapping[TopicPartition, float] | None = None
    racks: tuple[str, ...] = ()
    replication: int = 3
    #: Grid coordinates (cluster, consumers, churn ...) carried into the results.
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """Rebalances this scenario simulates: the initial one plus one per event."""
        return 1 + len(self.events)

    def replica_racks(self, topic: str, partition: int) -> frozenset[str]:
        if not self.racks:
            return frozenset()
        start = zlib.crc32(topic.encode()) + partition
        n = len(self.racks)
        return frozenset(self.racks[(start + i) % n] for i in range(min(self.replication, n)))
