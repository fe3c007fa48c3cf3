"""Adapter for kafka-python 3: our strategies as ``AbstractPartitionAssignor`` subclasses.

Each member sends a version-3 ``ConsumerProtocolSubscription``: its topics, the
partitions it owns with the generation it got them in, its rack, and a small
user data object saying whether it runs the eager or the cooperative protocol.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from ..core.model import UNKNOWN_GENERATION, Assignment, GroupSpec, TopicPartition, TopicSpec
from ._callers import caller_value
from .leader import (
    MODE_COOPERATIVE,
    MODE_EAGER,
    AssignmentResult,
    Leader,
    WireMember,
    gc_paused,
)
from .racks import replica_racks
from .user_data import encode_user_data

log = logging.getLogger("kafka_assignors")

SUBSCRIPTION_VERSION = 3
#: How long after a round that withheld partitions its weights are reused for the next.
SECOND_ROUND_WINDOW_S = 120.0


class KafkaPythonAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """Base class: subclasses set :attr:`name` and implement :meth:`assign_group`.

    Usable as a class or an instance in ``partition_assignment_strategy``.
    """

    #: The strategy's wire name, the one the group coordinator votes on.
    name: ClassVar[str] = ""
    #: True for strategies that speak the cooperative protocol (and eager too).
    cooperative: ClassVar[bool] = False
    #: True for strategies that deliberately give a partition to several members.
    broadcast: ClassVar[bool] = False
    #: True for strategies that read replica racks (``TopicSpec.replica_racks``); the
    #: leader then reads them from cluster metadata when any member sent a rack.
    uses_replica_racks: ClassVar[bool] = False

    def __init__(self, *, client_rack: str | None = None) -> None:
        if not self.name:
            raise TypeError(f"{type(self).__name__} must set a wire name in `name`")
        self.client_rack = client_rack
        self._owned: dict[str, list[int]] = {}
        self._generation = UNKNOWN_GENERATION
        self._leader = Leader(self.name)
        self._weights: Mapping[TopicPartition, float] | None = None
        self._weights_at = float("-inf")

    # --- what a strategy implements -------------------------------------------------

    def assign_group(self, group: GroupSpec) -> AssignmentResult:
        """Compute the assignment for ``group``; the one method a custom assignor writes."""
        raise NotImplementedError

    def subscription_fields(self) -> dict[str, object]:
        """Extra fields this member sends to the leader in its user data."""
        return {}

    def partition_weights(
        self, cluster: Any, topics: Mapping[str, TopicSpec]
    ) -> Mapping[TopicPartition, float] | None:
        """Weights for load-aware strategies; None means every partition weighs the same."""
        return None

    # --- kafka-python's interface ------------------------------------------------------

    def supported_protocols(self) -> list[RebalanceProtocol]:
        if self.cooperative:
            return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]
        return [RebalanceProtocol.EAGER]

    #: Set by adapters for clients that only speak one protocol (aiokafka: eager).
    protocol_mode: str | None = None

    def metadata(self, topics: Any) -> ConsumerProtocolSubscription:
        mode = self.protocol_mode or _consumer_protocol_mode()
        if mode is None:
            mode = MODE_COOPERATIVE if self.cooperative else MODE_EAGER
        sub_tp = ConsumerProtocolSubscription.TopicPartition
        return ConsumerProtocolSubscription(
            version=SUBSCRIPTION_VERSION,
            topics=sorted(topics),
            user_data=encode_user_data({"mode": mode, **self.subscription_fields()}),
            owned_partitions=[
                sub_tp(topic=t, partitions=list(ps)) for t, ps in sorted(self._owned.items())
            ],
            generation_id=self._generation,
            rack_id=self.client_rack,
        )

    def on_assignment(self, assignment: Any, generation: int) -> None:
        owned: dict[str, list[int]] = {}
        for tp in assignment.partitions():
            owned.setdefault(tp.topic, []).append(tp.partition)
        self._owned = {t: sorted(ps) for t, ps in owned.items()}
        self._generation = generation
        log.debug("%s: generation %d assigned %s", self.name, generation, self._owned)

    def assign(self, cluster: Any, members: Sequence[Any]) -> dict[str, ConsumerProtocolAssignment]:
        with gc_paused():
            return self._assign(cluster, members)

    def _assign(
        self, cluster: Any, members: Sequence[Any]
    ) -> dict[str, ConsumerProtocolAssignment]:
        wire = [_wire_member(m) for m in members]
        racks = self.uses_replica_racks and any(w.rack for w in wire)
        topics = _topic_specs(cluster, {t for w in wire for t in w.topics}, racks)
        sent = self._leader.assign(
            self.assign_group,
            wire,
            topics,
            cooperative=self.cooperative,
            broadcast=self.broadcast,
            weights=self._round_weights(cluster, topics),
        )
        return _to_wire(sent, self.name, self._leader)

    def _round_weights(
        self, cluster: Any, topics: Mapping[str, TopicSpec]
    ) -> Mapping[TopicPartition, float] | None:
        """Weights for this round; the second cooperative round reuses the first round's.

        Live weights (lag) change from one round to the next; a second round that
        re-read them could aim at a new target and withhold partitions again, round
        after round.  Finishing the move the first round started needs its weights.
        """
        report = self._leader.last_report
        if (
            self.cooperative
            and report is not None
            and report.pending_second_round
            and time.monotonic() - self._weights_at < SECOND_ROUND_WINDOW_S
        ):
            log.info("%s: second cooperative round reuses the first round's weights", self.name)
            return self._weights
        self._weights = self.partition_weights(cluster, topics)
        self._weights_at = time.monotonic()
        return self._weights

    @property
    def last_report(self) -> Any:
        """Figures of the last assignment this instance computed as leader (or None)."""
        return self._leader.last_report


def _wire_member(member: Any) -> WireMember:
    md = member.metadata
    items = getattr(md, "owned_partitions", None) or ()
    pairs = [(i.topic, i.partitions) if hasattr(i, "topic") else i for i in items]
    owned: dict[str, list[int]] = dict(pairs)
    if len(owned) < len(pairs):  # a topic listed twice: merge
        owned = {}
        for topic, partitions in pairs:
            owned.setdefault(topic, []).extend(partitions)
    return WireMember(
        member_id=member.member_id,
        instance_id=getattr(member, "group_instance_id", None),
        topics=list(md.topics or ()),
        owned=owned,
        generation=getattr(md, "generation_id", UNKNOWN_GENERATION),
        rack=getattr(md, "rack_id", None),
        user_data=md.user_data,
    )


def _topic_specs(cluster: Any, topics: set[str], racks: bool = False) -> dict[str, TopicSpec]:
    specs = {}
    for topic in sorted(topics):
        partitions = cluster.partitions_for_topic(topic)
        if not partitions:
            log.warning("no partition metadata for topic %s; it is skipped this round", topic)
            continue
        count = len(partitions)
        if max(partitions) != count - 1:
            log.warning("topic %s reports partitions %s; using the first %d", topic,
                        sorted(partitions), count)
        rack_data = replica_racks(cluster, topic, count) if racks else {}
        specs[topic] = TopicSpec(topic, count, rack_data)
    return specs


def _to_wire(
    sent: Assignment, name: str, leader: Leader
) -> dict[str, ConsumerProtocolAssignment]:
    report = leader.last_report
    pending = report.pending_second_round if report else 0
    user_data = encode_user_data({"assignor": name, "pending": pending})
    return {
        member: ConsumerProtocolAssignment(0, sorted(by_topic.items()), user_data)
        for member, by_topic in sent.items()
    }


def _consumer_protocol_mode() -> str | None:
    """The rebalance protocol of the kafka-python consumer that is asking for metadata.

    kafka-python decides eager vs cooperative once per consumer from all its
    configured assignors, and does not tell the assignor; the coordinator that
    calls ``metadata()`` holds the answer in ``_rebalance_protocol``.
    """
    protocol = caller_value(lambda f: getattr(f.get("self"), "_rebalance_protocol", None))
    if protocol is None:
        return None
    return MODE_COOPERATIVE if protocol == RebalanceProtocol.COOPERATIVE else MODE_EAGER
