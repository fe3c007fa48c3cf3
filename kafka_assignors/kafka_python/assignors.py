"""The strategies as kafka-python assignors: the classes ``kafka_assignors`` exports.

Each class is a strategy (:mod:`kafka_assignors.strategies`: what it assigns, its
constructor) plus :class:`.assignor.KafkaPythonAssignor` (kafka-python's
``AbstractPartitionAssignor``: subscriptions, the leader's wire path, owned partitions).
A cooperative class derives from its eager one, as the strategies do.
"""

from __future__ import annotations

from .. import strategies
from .assignor import KafkaPythonAssignor


class BalancedStickyAssignor(strategies.BalancedSticky, KafkaPythonAssignor):
    __doc__ = strategies.BalancedSticky.__doc__


class CooperativeBalancedStickyAssignor(strategies.CooperativeBalancedSticky,
                                        BalancedStickyAssignor):
    __doc__ = strategies.CooperativeBalancedSticky.__doc__


class LoadAwareAssignor(strategies.LoadAware, KafkaPythonAssignor):
    __doc__ = strategies.LoadAware.__doc__


class CooperativeLoadAwareAssignor(strategies.CooperativeLoadAware, LoadAwareAssignor):
    __doc__ = strategies.CooperativeLoadAware.__doc__


class RackAwareAssignor(strategies.RackAware, KafkaPythonAssignor):
    __doc__ = strategies.RackAware.__doc__


class CooperativeRackAwareAssignor(strategies.CooperativeRackAware, RackAwareAssignor):
    __doc__ = strategies.CooperativeRackAware.__doc__


class CoPartitionedAssignor(strategies.CoPartitioned, KafkaPythonAssignor):
    __doc__ = strategies.CoPartitioned.__doc__


class CooperativeCoPartitionedAssignor(strategies.CooperativeCoPartitioned,
                                       CoPartitionedAssignor):
    __doc__ = strategies.CooperativeCoPartitioned.__doc__


class PinnedAssignor(strategies.Pinned, KafkaPythonAssignor):
    __doc__ = strategies.Pinned.__doc__


class CooperativePinnedAssignor(strategies.CooperativePinned, PinnedAssignor):
    __doc__ = strategies.CooperativePinned.__doc__


class BroadcastAssignor(strategies.Broadcast, KafkaPythonAssignor):
    __doc__ = strategies.Broadcast.__doc__


class CooperativeBroadcastAssignor(strategies.CooperativeBroadcast, BroadcastAssignor):
    __doc__ = strategies.CooperativeBroadcast.__doc__


#: Every strategy of :mod:`kafka_assignors.strategies` as a kafka-python assignor.
ASSIGNORS: tuple[type[KafkaPythonAssignor], ...] = (
    BalancedStickyAssignor, CooperativeBalancedStickyAssignor,
    LoadAwareAssignor, CooperativeLoadAwareAssignor,
    RackAwareAssignor, CooperativeRackAwareAssignor,
    CoPartitionedAssignor, CooperativeCoPartitionedAssignor,
    PinnedAssignor, CooperativePinnedAssignor,
    BroadcastAssignor, CooperativeBroadcastAssignor,
)

__all__ = [
    "ASSIGNORS",
    "BalancedStickyAssignor",
    "BroadcastAssignor",
    "CoPartitionedAssignor",
    "CooperativeBalancedStickyAssignor",
    "CooperativeBroadcastAssignor",
    "CooperativeCoPartitionedAssignor",
    "CooperativeLoadAwareAssignor",
    "CooperativePinnedAssignor",
    "CooperativeRackAwareAssignor",
    "LoadAwareAssignor",
    "PinnedAssignor",
    "RackAwareAssignor",
]
