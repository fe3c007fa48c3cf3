"""Kafka consumer partition assignors: balanced, sticky, load-aware and rack-aware.

The public API is re-exported here; implementations live in private modules.
Importing this package never imports Spark, Docker or Testcontainers.
"""

from __future__ import annotations

from ._version import __version__
from .adapters.kafka_python import KafkaPythonAssignor
from .adapters.kafka_python_fixes import patch_rejoin_hang
from .assignors.balanced_sticky import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from .assignors.broadcast import BroadcastAssignor, CooperativeBroadcastAssignor
from .assignors.co_partitioned import CooperativeCoPartitionedAssignor, CoPartitionedAssignor
from .assignors.load_aware import CooperativeLoadAwareAssignor, LoadAwareAssignor
from .assignors.pinned import CooperativePinnedAssignor, PinnedAssignor
from .assignors.rack_aware import CooperativeRackAwareAssignor, RackAwareAssignor
from .core.model import Assignment, GroupSpec, MemberSpec, TopicPartition, TopicSpec
from .core.validate import InvalidAssignmentError
from .custom import make_assignor
from .load.live_lag import LiveLag
from .load.profile_topic import ProfileTopic
from .load.sources import FixedWeights, FunctionWeights, ProfileFile, WeightSource

__all__ = [
    "Assignment",
    "BalancedStickyAssignor",
    "BroadcastAssignor",
    "CoPartitionedAssignor",
    "CooperativeBalancedStickyAssignor",
    "CooperativeBroadcastAssignor",
    "CooperativeCoPartitionedAssignor",
    "CooperativeLoadAwareAssignor",
    "CooperativePinnedAssignor",
    "CooperativeRackAwareAssignor",
    "FixedWeights",
    "FunctionWeights",
    "GroupSpec",
    "InvalidAssignmentError",
    "KafkaPythonAssignor",
    "LiveLag",
    "LoadAwareAssignor",
    "MemberSpec",
    "PinnedAssignor",
    "ProfileFile",
    "ProfileTopic",
    "RackAwareAssignor",
    "TopicPartition",
    "TopicSpec",
    "WeightSource",
    "__version__",
    "make_assignor",
    "patch_rejoin_hang",
]
