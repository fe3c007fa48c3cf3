"""``broadcast`` and ``cooperative-broadcast``."""

from __future__ import annotations

from typing import ClassVar

from ..core.broadcast import broadcast
from ..core.model import Assignment, GroupSpec
from .base import Strategy


class Broadcast(Strategy):
    """Every member gets every partition of the topics it subscribes to.

    Use it when each instance needs the whole stream - cache warming,
    replicated in-memory state, fan-out to local clients - while still using
    the group for membership and rebalance callbacks.

    Committed offsets: Kafka stores ONE committed offset per partition for a
    group, not one per member.  With broadcast every member reads every
    partition, and each member's commit overwrites the others' (last writer
    wins).  After a restart or rebalance a member resumes from whatever was
    committed last - possibly another member's position - so it can skip
    records it never processed or re-read records it already had.  The group's
    reported lag describes only the last committer.  So:

    - set ``enable_auto_commit=False`` and do not commit; start each member
      from a known position (``auto_offset_reset``, or ``seek`` in the
      ``on_partitions_assigned`` callback), or keep per-member positions outside
      Kafka (e.g. next to the member's local state); or
    - if every member needs its own durable committed position, give each
      member its own ``group_id`` instead of broadcasting within one group.

    Wire name ``broadcast``; eager.  The leader validates that every member got
    every partition of its subscription.
    """

    name: ClassVar[str] = "broadcast"
    broadcast: ClassVar[bool] = True

    def assign_group(self, group: GroupSpec) -> Assignment:
        return broadcast(group)


class CooperativeBroadcast(Broadcast):
    """Broadcast under the cooperative protocol: no member ever gives up a partition.

    Nothing is ever revoked (everyone keeps everything), so one round is
    enough.  Wire name ``cooperative-broadcast``; cooperative and eager.
    """

    name: ClassVar[str] = "cooperative-broadcast"
    cooperative: ClassVar[bool] = True

