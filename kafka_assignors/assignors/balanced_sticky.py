"""``balanced-sticky`` and ``cooperative-balanced-sticky``."""

from __future__ import annotations

from typing import ClassVar

from ..adapters.kafka_python import KafkaPythonAssignor
from ..core.balanced_sticky import balanced_sticky
from ..core.model import Assignment, GroupSpec


class BalancedStickyAssignor(KafkaPythonAssignor):
    """Optimal balance (also with unequal subscriptions), then the fewest partitions moved.

    Eager protocol.  Use :class:`CooperativeBalancedStickyAssignor` to keep
    consuming the partitions that stay put during a rebalance.
    """

    name: ClassVar[str] = "balanced-sticky"

    def assign_group(self, group: GroupSpec) -> Assignment:
        return balanced_sticky(group)


class CooperativeBalancedStickyAssignor(BalancedStickyAssignor):
    """The same assignment, handed over in two cooperative rounds (KIP-429).

    Supports both protocols, so it can be listed beside an eager assignor during
    a rolling upgrade, the way the Java client's cooperative-sticky can.
    """

    name: ClassVar[str] = "cooperative-balanced-sticky"
    cooperative: ClassVar[bool] = True
