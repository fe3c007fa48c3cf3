"""Small pieces of the bridge's consumer: error events, the message check, weak calls.

An error event is how librdkafka reports a consumer-group error: a message whose
``error()`` is set.  The membership threads call the consumer only weakly (:func:`weakly`),
so that a consumer dropped without ``close()`` is collected, as confluent-kafka's is.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException


def weakly(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (bound) called through a weak reference: None once its object is gone."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any) -> Any:
        bound = ref()
        return None if bound is None else bound(*args)

    return call


def check_message(message: Any, api: str) -> None:
    """A message whose offset can be committed or stored: as librdkafka, ``_INVALID_ARG``
    for an error event (it has no offset)."""
    if message.error() is not None or message.offset() is None or message.offset() < 0:
        raise KafkaException(KafkaError(
            KafkaError._INVALID_ARG,
            f"{api}() of a message without an offset (an error event: {message.error()})",
        ))


def error_event(cause: BaseException | None, error: Any) -> Any:
    """A ``KafkaError`` as librdkafka reports a consumer-group error: a message whose
    ``error()`` is set (:class:`ErrorEvent` where this confluent-kafka cannot make one)."""
    try:
        return confluent_kafka.Message(error=error)
    except TypeError:  # confluent-kafka before 2.7 has no Message constructor
        return ErrorEvent(error)


class ErrorEvent:
    """An error event with ``confluent_kafka.Message``'s accessors, for confluent-kafka
    releases that cannot construct a ``Message``: ``error()`` is set, the rest is None."""

    def __init__(self, error: Any) -> None:
        self._error = error

    def error(self) -> Any:
        return self._error

    def topic(self) -> None:
        return None

    def partition(self) -> None:
        return None

    def offset(self) -> None:
        return None

    def key(self) -> None:
        return None

    def value(self) -> None:
        return None

    def headers(self) -> None:
        return None

    def leader_epoch(self) -> None:
        return None

    def latency(self) -> None:
        return None

    def timestamp(self) -> tuple[int, int]:
        return (confluent_kafka.TIMESTAMP_NOT_AVAILABLE, 0)

    def __len__(self) -> int:
        return 0
