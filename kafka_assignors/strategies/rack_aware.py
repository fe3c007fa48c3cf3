"""``rack-aware`` and ``cooperative-rack-aware`` (KIP-881)."""

from __future__ import annotations

from typing import ClassVar

from ..core.model import Assignment, GroupSpec
from ..core.rack_aware import rack_aware
from .base import Strategy


class RackAware(Strategy):
    """Prefers a consumer in a rack (zone) that holds a replica of the partition (KIP-881).

    Use it in multi-zone clusters with ``broker.rack`` set, to cut cross-zone
    traffic (with KIP-392 follower fetching, any replica's zone is local).
    Give each consumer its zone: ``RackAwareAssignor(client_rack="zone-a")``;
    it is sent as ``rack_id`` in the subscription, so the leader sees every
    member's zone.  Balance is never traded for locality: the counts are those
    of ``balanced-sticky`` (optimal; within one partition with identical
    subscriptions), then the most partitions local, then the fewest moves.
    Without member racks, or when every partition has replicas in every rack,
    it behaves exactly like ``balanced-sticky`` (as the Java client does).

    Wire name ``rack-aware``; eager.
    """

    name: ClassVar[str] = "rack-aware"
    uses_replica_racks: ClassVar[bool] = True

    def assign_group(self, group: GroupSpec) -> Assignment:
        return rack_aware(group)


class CooperativeRackAware(RackAware):
    """The rack-aware assignment handed over in two cooperative rounds (KIP-429).

    Wire name ``cooperative-rack-aware``; cooperative and eager.
    """

    name: ClassVar[str] = "cooperative-rack-aware"
    cooperative: ClassVar[bool] = True
