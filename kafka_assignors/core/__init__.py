"""Pure assignment algorithms on a plain model of the group: no Kafka client, no I/O."""

from .balanced_sticky import balanced_sticky
from .cooperative import withhold_moving
from .model import Assignment, GroupSpec, MemberSpec, TopicPartition, TopicSpec
from .validate import InvalidAssignmentError, validate_assignment

__all__ = [
    "Assignment",
    "GroupSpec",
    "InvalidAssignmentError",
    "MemberSpec",
    "TopicPartition",
    "TopicSpec",
    "balanced_sticky",
    "validate_assignment",
    "withhold_moving",
]
