"""Kafka consumer partition assignors: balanced, sticky, load-aware and rack-aware.

The public API is re-exported here; implementations live in private modules.
Importing this package never imports Spark, Docker or Testcontainers.
"""

from __future__ import annotations

from .adapters.kafka_python import KafkaPythonAssignor
from .assignors.balanced_sticky import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from .core.model import Assignment, GroupSpec, MemberSpec, TopicPartition, TopicSpec
from .core.validate import InvalidAssignmentError
from .custom import make_assignor

__version__ = "0.1.0.dev0"

__all__ = [
    "Assignment",
    "BalancedStickyAssignor",
    "CooperativeBalancedStickyAssignor",
    "GroupSpec",
    "InvalidAssignmentError",
    "KafkaPythonAssignor",
    "MemberSpec",
    "TopicPartition",
    "TopicSpec",
    "__version__",
    "make_assignor",
]
