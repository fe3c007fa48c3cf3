"""``group.protocol=consumer`` in the confluent package: strategy -> broker assignor, config,
and the UNSUPPORTED_ASSIGNOR error (no broker: plain values and fakes)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_assignors import BalancedStickyAssignor, LoadAwareAssignor
from kafka_assignors.confluent import (
    BridgedConsumer,
    BrokerAssignedConsumer,
    Consumer,
    UnsupportedAssignorError,
    UnsupportedConfigError,
    remote_assignor_for,
    translate_consumer_protocol,
)
from kafka_assignors.confluent._errors import is_unsupported_assignor
from kafka_assignors.confluent._remote_assignors import (
    NO_REMOTE_COUNTERPART,
    assignor_names,
    unsupported_assignor_message,
)
from kafka_assignors.simulator.registry import assignor_names as client_side_names

BASE = {"bootstrap.servers": "b1:9092", "group.id": "g", "group.protocol": "consumer"}


@pytest.mark.parametrize(
    ("strategy", "remote"),
    [
        ("balanced-sticky", "balanced-sticky"),
        ("cooperative-balanced-sticky", "balanced-sticky"),
        ("range", "range"),
        ("roundrobin", "uniform"),
        ("sticky", "uniform"),
        ("cooperative-sticky", "uniform"),
        ("cooperative-balanced-sticky, range", "balanced-sticky"),
        (["range", "balanced-sticky"], "range"),
        ([BalancedStickyAssignor], "balanced-sticky"),
        (BalancedStickyAssignor(), "balanced-sticky"),
    ],
)
def test_strategies_map_to_the_brokers_assignor(strategy: Any, remote: str) -> None:
    """Our balanced-sticky becomes the broker's balanced-sticky, Kafka's names their broker
    counterparts; the most preferred strategy decides."""
    assert remote_assignor_for(strategy) == remote


def test_every_client_side_strategy_is_mapped_or_refused_with_a_reason() -> None:
    """No registered strategy falls through to a vague error: each has a broker assignor or
    a stated reason why not."""
    for name in client_side_names():
        base = name.removeprefix("cooperative-")
        try:
            remote_assignor_for(name)
        except UnsupportedConfigError as exc:
            assert base in NO_REMOTE_COUNTERPART, name
            assert NO_REMOTE_COUNTERPART[base] in str(exc)


@pytest.mark.parametrize(
    "strategy", ["load-aware", "cooperative-pinned", "broadcast", "co-partitioned", "rack-aware",
                 [LoadAwareAssignor], "load-aware,balanced-sticky"],
)
def test_a_strategy_without_broker_counterpart_is_refused(strategy: Any) -> None:
    """The error names what the broker offers and the ways out; no silent fallback to a
    later, different strategy."""
    with pytest.raises(UnsupportedConfigError) as info:
        translate_consumer_protocol({**BASE, "partition.assignment.strategy": strategy})
    text = str(info.value)
    assert "balanced-sticky" in text and "uniform" in text and "range" in text
    assert "group.remote.assignor" in text and "group.protocol=classic" in text


def test_the_default_strategy_asks_the_broker_for_balanced_sticky() -> None:
    """Without a strategy the member asks for ours, as the bridge defaults to ours."""
    cfg = translate_consumer_protocol(dict(BASE))
    assert cfg.remote_assignor == "balanced-sticky"
    assert cfg.confluent["group.remote.assignor"] == "balanced-sticky"
    assert cfg.confluent["group.protocol"] == "consumer"
    assert not cfg.assignor_given


def test_group_remote_assignor_given_by_the_user_wins(caplog: pytest.LogCaptureFixture) -> None:
    """A user's group.remote.assignor is used as is, even one we cannot map, and a strategy
    beside it is dropped with a warning."""
    with caplog.at_level(logging.WARNING):
        cfg = translate_consumer_protocol({**BASE, "group.remote.assignor": "custom",
                                           "partition.assignment.strategy": "load-aware"})
    assert cfg.remote_assignor == "custom" and cfg.assignor_given
    assert "partition.assignment.strategy" not in cfg.confluent
    assert "ignored" in caplog.text


def test_classic_only_keys_are_left_out_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """librdkafka refuses these with the consumer protocol (the broker sets them): they are
    not passed, and the log says where they are set instead."""
    with caplog.at_level(logging.WARNING):
        cfg = translate_consumer_protocol({
            **BASE, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
            "group.protocol.type": "consumer", "partition.assignment.strategy": "range",
        })
    for key in ("session.timeout.ms", "heartbeat.interval.ms", "group.protocol.type",
                "partition.assignment.strategy"):
        assert key not in cfg.confluent
    assert set(cfg.left_out) == {"session.timeout.ms", "heartbeat.interval.ms",
                                 "group.protocol.type"}
    assert "group.consumer.session.timeout.ms" in caplog.text


def test_other_keys_reach_librdkafka_unchanged() -> None:
    """librdkafka is the member: commits, static membership, racks and callbacks are its own."""
    def cb(err: Any, partitions: Any) -> None:
        return None
    extra = {"group.instance.id": "i-1", "client.rack": "r1", "enable.auto.commit": False,
             "max.poll.interval.ms": 60000, "on_commit": cb, "auto.offset.reset": "earliest"}
    cfg = translate_consumer_protocol({**BASE, **extra})
    for key, value in extra.items():
        assert cfg.confluent[key] is value


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"group.id": ""}, "group.id is required"),
        ({"group.protocol": "share"}, "expected 'classic' or 'consumer'"),
        ({"partition.assignment.strategy": ""}, "empty"),
        ({"partition.assignment.strategy": [42]}, "no wire name"),
    ],
)
def test_bad_consumer_protocol_config_is_refused(extra: dict[str, Any], message: str) -> None:
    """Bad values fail at construction with the reason (before librdkafka is created)."""
    with pytest.raises(UnsupportedConfigError, match=message):
        Consumer({**BASE, **extra})


def test_consumer_chooses_the_implementation_by_group_protocol() -> None:
    """``Consumer`` is the bridge for classic groups and librdkafka itself for consumer ones;
    both are ``Consumer`` instances.  (Only ``__new__``: nothing connects.)"""
    broker_assigned = Consumer.__new__(Consumer, dict(BASE))
    assert type(broker_assigned) is BrokerAssignedConsumer
    assert isinstance(broker_assigned, Consumer)
    bridged = Consumer.__new__(Consumer, {**BASE, "group.protocol": "classic"})
    assert type(bridged) is BridgedConsumer and isinstance(bridged, Consumer)
    assert type(Consumer.__new__(Consumer, {}, **{"group.protocol": "CONSUMER"})) is \
        BrokerAssignedConsumer


def test_the_bridge_alone_refuses_the_consumer_protocol() -> None:
    """``BridgedConsumer`` named directly says which class runs the consumer protocol."""
    with pytest.raises(UnsupportedConfigError, match="BrokerAssignedConsumer"):
        BridgedConsumer(dict(BASE))


class _Error:
    """A ``KafkaError`` as librdkafka hands it in a message: code and text."""

    def __init__(self, code: int, text: str) -> None:
        self._code, self._text = code, text

    def code(self) -> int:
        return self._code

    def str(self) -> str:
        return self._text


def test_unsupported_assignor_is_recognised_as_librdkafka_reports_it() -> None:
    """librdkafka 2.x reports the broker's UNSUPPORTED_ASSIGNOR as a _FATAL error carrying
    its text; a plain UNSUPPORTED_ASSIGNOR code counts too; other fatal errors do not."""
    text = KafkaError(KafkaError.UNSUPPORTED_ASSIGNOR).str()
    fatal = f"Fatal error: {text}: ConsumerGroupHeartbeat fatal error: {text}"
    assert is_unsupported_assignor(_Error(KafkaError._FATAL, fatal))
    assert is_unsupported_assignor(_Error(KafkaError.UNSUPPORTED_ASSIGNOR, "x"))
    assert not is_unsupported_assignor(_Error(KafkaError._FATAL, "Fatal error: fenced"))
    assert not is_unsupported_assignor(_Error(KafkaError._PARTITION_EOF, text))


def test_the_brokers_assignors_are_named_by_the_names_members_use() -> None:
    """Class names in group.consumer.assignors become the names members give."""
    configured = ("io.github.kafkaassignors.broker.BalancedStickyAssignor, uniform,"
                  "org.apache.kafka.coordinator.group.assignor.RangeAssignor,com.example.Mine")
    assert assignor_names(configured) == ["balanced-sticky", "uniform", "range",
                                          "com.example.Mine"]


def test_the_unsupported_assignor_message_says_what_exists_and_how_to_install_ours() -> None:
    """The broker's list (or why it could not be read) and, for ours, the install steps."""
    ours = unsupported_assignor_message("balanced-sticky", ["uniform", "range"])
    assert "the broker offers uniform, range" in ours
    assert "group.consumer.assignors" in ours and "docs/broker-assignor.md" in ours
    other = unsupported_assignor_message("custom", "KafkaException: timed out")
    assert "could not read the broker's group.consumer.assignors (KafkaException: timed out)" \
        in other
    assert "docs/broker-assignor.md" not in other
    error = UnsupportedAssignorError(ours, "balanced-sticky", ["uniform", "range"])
    assert isinstance(error, KafkaException) and str(error) == ours
    assert error.args[0].code() == KafkaError.UNSUPPORTED_ASSIGNOR and error.args[0].fatal()
