"""Errors of the bridge, and kafka-python errors turned into confluent-kafka's."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException
from kafka import errors as kp_errors


class UnsupportedConfigError(ValueError):
    """A configuration key or value the bridge cannot honour (or translate safely)."""


def as_kafka_exception(exc: BaseException) -> Any:
    """A ``confluent_kafka.KafkaException`` carrying the same Kafka error code.

    Broker error codes are the same numbers in both libraries; client-side
    kafka-python errors get the closest librdkafka code.
    """
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


def state_error(message: str) -> Any:
    """A ``KafkaException`` for a call that is not allowed in the consumer's state."""
    return KafkaException(KafkaError(KafkaError._STATE, message))
