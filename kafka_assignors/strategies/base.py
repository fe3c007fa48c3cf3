"""``Strategy``: what an assignor assigns, whatever client runs it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ..core.model import GroupSpec, TopicPartition, TopicSpec
from ..load.sources import WeightContext
from ..protocol.leader import AssignmentResult


class Strategy:
    """A partition assignment strategy, independent of any Kafka client.

    A strategy has a wire name (the one the group coordinator votes on), says which
    rebalance protocols it speaks, what this member adds to its subscription, and
    computes the group's assignment from the core model. Each client binding
    (``kafka_assignors.kafka_python``, ``kafka_assignors.aiokafka``, the confluent
    bridge) runs it over that client's wire types; ``kafka_assignors.kafka_python``'s
    ``KafkaPythonAssignor`` is this class plus kafka-python's assignor interface.
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
        #: This member's rack (zone), sent to the leader in its subscription.
        self.client_rack = client_rack

    def assign_group(self, group: GroupSpec) -> AssignmentResult:
        """Compute the assignment for ``group``; the one method a custom strategy writes."""
        raise NotImplementedError

    def subscription_fields(self) -> dict[str, object]:
        """Extra fields this member sends to the leader in its user data."""
        return {}

    def partition_weights(
        self, topics: Mapping[str, TopicSpec], context: WeightContext
    ) -> Mapping[TopicPartition, float] | None:
        """Weights for load-aware strategies; None means every partition weighs the same."""
        return None
