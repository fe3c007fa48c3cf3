"""``co-partitioned`` and ``cooperative-co-partitioned``."""

from __future__ import annotations

from typing import ClassVar

from ..core.co_partitioned import co_partitioned
from ..core.model import Assignment, GroupSpec
from .base import Strategy


class CoPartitioned(Strategy):
    """Partition i of topics with the same partition count and subscribers goes to one member.

    Use it for joins and local state keyed the same way across topics
    (``orders`` and ``payments`` partitioned by customer id): each consumer
    sees both sides of its keys.  ``range`` gives this only when counts divide
    evenly; this assignor always does, spreads partition numbers evenly (at
    most one apart per join group) and keeps them where they were.

    Wire name ``co-partitioned``; eager.
    """

    name: ClassVar[str] = "co-partitioned"

    def assign_group(self, group: GroupSpec) -> Assignment:
        return co_partitioned(group)


class CooperativeCoPartitioned(CoPartitioned):
    """The co-partitioned assignment handed over in two cooperative rounds (KIP-429).

    Wire name ``cooperative-co-partitioned``; cooperative and eager.
    """

    name: ClassVar[str] = "cooperative-co-partitioned"
    cooperative: ClassVar[bool] = True
