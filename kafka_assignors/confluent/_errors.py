"""Errors of the bridge, and kafka-python errors turned into confluent-kafka's."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException
from kafka import errors as kp_errors


class UnsupportedConfigError(ValueError, KafkaException):
    """A configuration key or value the bridge cannot honour (or translate safely).

    A ``confluent_kafka.KafkaException`` with code ``_INVALID_ARG``, as confluent-kafka raises
    for a configuration it refuses (and a ``ValueError``, as in earlier releases).
    """

    def __init__(self, message: str) -> None:
        super().__init__(KafkaError(KafkaError._INVALID_ARG, message))
        self.message = message

    def __str__(self) -> str:
        return self.message


def construction_error(exc: BaseException) -> Any:
    """A kafka-python error of the membership client's constructor, as confluent-kafka's:
    a refused setting is ``_INVALID_ARG``, anything else (no broker reachable) ``_TRANSPORT``."""
    code = (KafkaError._INVALID_ARG if isinstance(exc, kp_errors.KafkaConfigurationError)
            else KafkaError._TRANSPORT)
    return KafkaException(KafkaError(
        code, f"the bridge's membership client could not start: {type(exc).__name__}: {exc}"))


def max_poll_exceeded(max_poll_interval_s: float, late_s: float) -> Any:
    """The error confluent-kafka raises from the first ``poll()`` after a stall."""
    return KafkaError(
        KafkaError._MAX_POLL_EXCEEDED,
        f"Application maximum poll interval ({max_poll_interval_s * 1000:.0f}ms) exceeded by "
        f"{max(late_s, 0) * 1000:.0f}ms",
    )


def as_kafka_exception(exc: BaseException) -> Any:
    """A ``confluent_kafka.KafkaException`` carrying the same Kafka error code.

    Broker error codes are the same numbers in both libraries; client-side
    kafka-python errors get the closest librdkafka code.
    """
    if isinstance(exc, kp_errors.FencedInstanceIdError):
        return KafkaException(fenced_error(exc))
    errno = getattr(exc, "errno", None)
    retriable = bool(getattr(exc, "retriable", False))
    if isinstance(errno, int) and errno > 0:
        code = errno
    elif isinstance(exc, kp_errors.KafkaTimeoutError):
        code = KafkaError._TIMED_OUT
    elif isinstance(exc, kp_errors.CommitFailedError):
        # the member is no longer in the group: what a broker says as ILLEGAL_GENERATION
        code = KafkaError.ILLEGAL_GENERATION
    else:
        code = KafkaError._FAIL
    return KafkaException(KafkaError(code, f"{type(exc).__name__}: {exc}", retriable=retriable))


def fenced_error(exc: BaseException) -> Any:
    """librdkafka's fatal error for a fenced static member (FENCED_INSTANCE_ID): ``_FATAL``."""
    return KafkaError(
        KafkaError._FATAL,
        f"Fatal error: Broker: Static consumer fenced by other consumer with same "
        f"group.instance.id ({type(exc).__name__}: {exc}); create a new consumer",
        fatal=True,
    )


def state_error(message: str) -> Any:
    """A ``KafkaException`` for a call that is not allowed in the consumer's state."""
    return KafkaException(KafkaError(KafkaError._STATE, message))


#: what confluent-kafka's Consumer.c says when librdkafka refuses an assignment call
_FAILED = {"assign": "Failed to set assignment: ", "unassign": "Failed to remove assignment: "}


def protocol_refusal(name: str, cooperative: bool) -> Any:
    """librdkafka's ``_STATE`` refusal of ``name()`` in a group whose rebalance protocol is
    known (``rdkafka_cgrp.c``, the assign op), or None where that protocol allows it.

    ``assign()``/``unassign()`` report only the code (``Failed to set assignment: Local:
    Erroneous state``): the reason librdkafka logs is appended here."""
    incremental = name.startswith("incremental_")
    if incremental != cooperative:
        reason = ("Changes to the current assignment must be made using incremental_assign() "
                  "or incremental_unassign() when rebalance protocol type is COOPERATIVE"
                  if cooperative else
                  "Changes to the current assignment must be made using assign() when "
                  "rebalance protocol type is EAGER")
        text = reason if incremental else (
            f"{_FAILED[name]}{KafkaError(KafkaError._STATE).str()} ({reason})")
        return KafkaException(KafkaError(KafkaError._STATE, text))
    return None


class UnsupportedAssignorError(KafkaException):
    """The broker does not have the ``group.remote.assignor`` a consumer-protocol member asked
    for (Kafka's UNSUPPORTED_ASSIGNOR); the message names the assignors the broker has.

    A ``confluent_kafka.KafkaException`` (code ``UNSUPPORTED_ASSIGNOR``, fatal): the consumer
    cannot join the group until it names another assignor or the broker installs this one.
    """

    def __init__(self, message: str, assignor: str, broker_assignors: list[str] | None) -> None:
        super().__init__(KafkaError(KafkaError.UNSUPPORTED_ASSIGNOR, message, fatal=True))
        self.message = message
        #: the group.remote.assignor asked for
        self.assignor = assignor
        #: what the broker lists in group.consumer.assignors (None: could not be read)
        self.broker_assignors = broker_assignors

    def __str__(self) -> str:
        return self.message


def is_unsupported_assignor(error: Any) -> bool:
    """True for librdkafka's report of UNSUPPORTED_ASSIGNOR (librdkafka 2.x raises it as a
    fatal error, ``_FATAL``, whose text carries the broker's error)."""
    code = error.code()
    if code == KafkaError.UNSUPPORTED_ASSIGNOR:
        return True
    return bool(code == KafkaError._FATAL and _UNSUPPORTED_ASSIGNOR_TEXT in error.str())


_UNSUPPORTED_ASSIGNOR_TEXT = KafkaError(KafkaError.UNSUPPORTED_ASSIGNOR).str()
