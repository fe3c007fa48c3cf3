"""Kafka consumer partition assignors: balanced, sticky, load-aware and rack-aware.

The public API is re-exported here: the strategies (``kafka_assignors.strategies``) as
kafka-python assignors (``kafka_assignors.kafka_python``); ``kafka_assignors.aiokafka`` and
``kafka_assignors.confluent`` hold the other clients' bindings.
Importing this package never imports Spark, Docker or Testcontainers.
"""

from __future__ import annotations

from ._version import __version__
from .core.model import Assignment, GroupSpec, MemberSpec, TopicPartition, TopicSpec
from .core.validate import InvalidAssignmentError
from .custom import make_assignor
from .kafka_python.assignor import KafkaPythonAssignor
from .kafka_python.assignors import (
    BalancedStickyAssignor,
    BroadcastAssignor,
    CooperativeBalancedStickyAssignor,
    CooperativeBroadcastAssignor,
    CooperativeCoPartitionedAssignor,
    CooperativeLoadAwareAssignor,
    CooperativePinnedAssignor,
    CooperativeRackAwareAssignor,
    CoPartitionedAssignor,
    LoadAwareAssignor,
    PinnedAssignor,
    RackAwareAssignor,
)
from .kafka_python.fixes import patch_rejoin_hang
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
