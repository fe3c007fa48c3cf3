"""The bridge's side of confluent-kafka's contract that needs no broker: error types and codes,
commit metadata on the wire, the membership client's options, and the consumed-offsets guard."""

from __future__ import annotations

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka import TopicPartition as CTP
from kafka import errors as kp_errors
from kafka.consumer.subscription_state import SubscriptionState
from kafka.structs import TopicPartition as KTP

from kafka_assignors.confluent import UnsupportedConfigError, translate_config
from kafka_assignors.confluent._config import membership_options
from kafka_assignors.confluent._errors import construction_error, max_poll_exceeded
from kafka_assignors.confluent._events import check_message, error_event
from kafka_assignors.confluent._offsets import confluent_partitions, kafka_offsets
from kafka_assignors.confluent._runtime import guard_consumed_offsets

BASE = {"bootstrap.servers": "b:9092", "group.id": "g"}


def test_a_refused_configuration_is_confluent_kafkas_invalid_arg() -> None:
    """UnsupportedConfigError is a KafkaException(_INVALID_ARG), as confluent-kafka raises for a
    configuration it refuses, and still a ValueError; its text is the reason."""
    with pytest.raises(KafkaException) as caught:
        translate_config({"bootstrap.servers": "b:9092"})
    exc = caught.value
    assert isinstance(exc, UnsupportedConfigError) and isinstance(exc, ValueError)
    assert exc.args[0].code() == KafkaError._INVALID_ARG
    assert "group.id is required" in str(exc)


def test_kafka_python_constructor_errors_become_confluent_kafka_exceptions() -> None:
    """A setting kafka-python refuses is _INVALID_ARG; no broker reachable is _TRANSPORT."""
    refused = construction_error(kp_errors.KafkaConfigurationError("bad"))
    unreachable = construction_error(kp_errors.KafkaConnectionError("no broker"))
    assert isinstance(refused, KafkaException) and isinstance(unreachable, KafkaException)
    assert refused.args[0].code() == KafkaError._INVALID_ARG
    assert unreachable.args[0].code() == KafkaError._TRANSPORT


def test_a_session_timeout_below_the_heartbeat_still_constructs() -> None:
    """kafka-python refuses heartbeat >= session at construction, librdkafka does not (the
    broker judges the session timeout): the membership client heartbeats at a third of it."""
    options = membership_options(translate_config({**BASE, "session.timeout.ms": 100}).membership)
    assert options["session_timeout_ms"] == 100
    assert options["heartbeat_interval_ms"] == 33
    kept = membership_options(translate_config(
        {**BASE, "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000}).membership)
    assert kept["heartbeat_interval_ms"] == 1000  # a valid setting is left as given


@pytest.mark.parametrize("metadata", [None, "", "note"])
def test_commit_metadata_is_sent_as_confluent_kafka_sends_it(metadata: str | None) -> None:
    """Metadata goes out as confluent-kafka's C string (with its NUL), so committed() reads back
    what was given ("" stays ""), and commit() returns it unchanged."""
    tp = CTP("t", 0, 5) if metadata is None else CTP("t", 0, 5, metadata=metadata)
    offsets = kafka_offsets([tp])
    sent = next(iter(offsets.values())).metadata
    assert sent == ("" if metadata is None else metadata + "\0")
    [back] = confluent_partitions(offsets)
    assert back.metadata == metadata


def test_an_error_event_cannot_be_committed_or_stored() -> None:
    """commit(message=) / store_offsets(message=) of an error event: _INVALID_ARG, as librdkafka."""
    event = error_event(None, KafkaError(KafkaError.INVALID_SESSION_TIMEOUT, "refused"))
    assert isinstance(event, confluent_kafka.Message)
    error = event.error()
    assert error is not None and error.code() == KafkaError.INVALID_SESSION_TIMEOUT
    for api in ("commit", "store_offsets"):
        with pytest.raises(KafkaException) as caught:
            check_message(event, api)
        assert caught.value.args[0].code() == KafkaError._INVALID_ARG


def test_the_stall_error_is_librdkafkas() -> None:
    """_MAX_POLL_EXCEEDED with librdkafka's wording."""
    error = max_poll_exceeded(6.0, 2.5)
    assert error.code() == KafkaError._MAX_POLL_EXCEEDED
    assert "maximum poll interval (6000ms) exceeded by 2500ms" in error.str()


def test_the_membership_client_never_reports_consumed_offsets() -> None:
    """The listener's placeholder positions (0) are never kafka-python's consumed offsets, so
    none of kafka-python's own commit paths (commit() without offsets, auto-commit, close, the
    runtime's revoke commit) can commit an offset the application never consumed."""

    class Client:
        def __init__(self) -> None:
            self._subscription = SubscriptionState()

    client = Client()
    tp = KTP("t", 0)
    client._subscription.subscribe(topics=["t"])
    client._subscription.assign_from_subscribed([tp])
    client._subscription.seek(tp, 0)  # what the bridge's listener does
    assert client._subscription.all_consumed_offsets()[tp].offset == 0
    assert guard_consumed_offsets(client)
    assert client._subscription.all_consumed_offsets() == {}
    # a subclass of kafka-python's class, not a function put on the instance; once only
    assert isinstance(client._subscription, SubscriptionState)
    assert "all_consumed_offsets" not in vars(client._subscription)
    guarded = type(client._subscription)
    assert guard_consumed_offsets(client) and type(client._subscription) is guarded
    assert client._subscription.assigned_partitions() == {tp}  # the rest is kafka-python's


def test_error_events_without_a_message_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    """confluent-kafka before 2.7 cannot construct a Message: the error event is an object with
    Message's accessors (error() set), never an exception."""
    def refuse(**_kwargs: object) -> None:
        raise TypeError("cannot create 'cimpl.Message' instances")

    monkeypatch.setattr(confluent_kafka, "Message", refuse)
    event = error_event(None, KafkaError(KafkaError._MAX_POLL_EXCEEDED, "stalled"))
    error = event.error()
    assert error is not None and error.code() == KafkaError._MAX_POLL_EXCEEDED
    assert event.offset() is None and event.value() is None
    with pytest.raises(KafkaException):
        check_message(event, "commit")
