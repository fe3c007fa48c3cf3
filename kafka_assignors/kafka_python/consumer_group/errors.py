"""The consumer protocol's errors: what a heartbeat's error code means for the member, and
the errors this package raises."""

from __future__ import annotations

from typing import Literal

import kafka.errors as Errors

Kind = Literal["ok", "fenced", "coordinator", "retry", "fatal"]

#: fenced: partitions lost, rejoin at epoch 0 (Java: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID)
FENCED = frozenset({Errors.FencedMemberEpochError.errno, Errors.UnknownMemberIdError.errno})
#: find the coordinator again
COORDINATOR = frozenset({Errors.CoordinatorNotAvailableError.errno,
                         Errors.NotCoordinatorError.errno})
#: try again after the backoff (a topic not authorized is reported and retried, as Java)
RETRY = frozenset({Errors.CoordinatorLoadInProgressError.errno,
                   Errors.RequestTimedOutError.errno,
                   Errors.TopicAuthorizationFailedError.errno})


def classify(error_code: int) -> Kind:
    """What a ConsumerGroupHeartbeat error code means; anything not listed is fatal (e.g.
    FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID, UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED,
    INVALID_REGULAR_EXPRESSION, GROUP_ID_NOT_FOUND), as in the Java consumer."""
    if error_code == 0:
        return "ok"
    if error_code in FENCED:
        return "fenced"
    if error_code in COORDINATOR:
        return "coordinator"
    if error_code in RETRY:
        return "retry"
    return "fatal"


class StaleMemberEpochRetry(Errors.StaleMemberEpochError):  # type: ignore[misc]
    """STALE_MEMBER_EPOCH on a commit or offset fetch: retried (with the epoch the next
    heartbeat brings), as the Java consumer retries it."""

    retriable = True


class ConsumerProtocolUnavailableError(Errors.KafkaConfigurationError):  # type: ignore[misc]
    """``group_protocol="consumer"`` cannot run: the broker lacks KIP-848, or the installed
    kafka-python lacks a name the member relies on (the message names it)."""


def protocol_unavailable(detail: str) -> ConsumerProtocolUnavailableError:
    """The error for a broker whose first ConsumerGroupHeartbeat is refused as unsupported
    (the consumer protocol turned off): the member never joined."""
    return ConsumerProtocolUnavailableError(
        "group_protocol='consumer': the broker does not serve the consumer group protocol "
        f"(KIP-848) for this group ({detail}); it needs 'consumer' in "
        "group.coordinator.rebalance.protocols (Apache Kafka 4.0+). Use "
        "group_protocol='classic' (the default) until the cluster serves it.")
