"""``balanced-sticky`` and ``cooperative-balanced-sticky``."""

from __future__ import annotations

from typing import ClassVar

from ..core.balanced_sticky import balanced_sticky
from ..core.model import Assignment, GroupSpec
from .base import Strategy


class BalancedSticky(Strategy):
    """Optimal balance (also with unequal subscriptions), then every topic as even as that
    allows, then the fewest partitions moved.

    With identical subscriptions every member holds the floor or the ceiling of the
    mean, in total and of every topic.  ``per_topic_balance=False`` keeps the old
    tie-breaking (total balance, then the fewest moves, whatever each topic's
    spread): it spares a group that is unbalanced per topic the one-time repair,
    at the price of topics piling up on some members.  Only the leader's setting
    counts.

    Eager protocol.  Use :class:`CooperativeBalancedStickyAssignor` to keep
    consuming the partitions that stay put during a rebalance.
    """

    name: ClassVar[str] = "balanced-sticky"

    def __init__(self, *, client_rack: str | None = None, per_topic_balance: bool = True) -> None:
        super().__init__(client_rack=client_rack)
        self.per_topic_balance = per_topic_balance

    def assign_group(self, group: GroupSpec) -> Assignment:
        return balanced_sticky(group, per_topic=self.per_topic_balance)


class CooperativeBalancedSticky(BalancedSticky):
    """The same assignment, handed over in two cooperative rounds (KIP-429).

    Supports both protocols, so it can be listed beside an eager assignor during
    a rolling upgrade, the way the Java client's cooperative-sticky can.
    """

    name: ClassVar[str] = "cooperative-balanced-sticky"
    cooperative: ClassVar[bool] = True
