"""The profile-topic weight source: newest entry per key, tombstones, the consumer's connection,
bounded time, and errors that name the topic (the leader falls back on any of them)."""

from __future__ import annotations

import json
import time
from collections import namedtuple
from typing import Any, ClassVar

import pytest
from kafka import KafkaConsumer
from kafka.structs import TopicPartition as KTP

from kafka_assignors import LoadAwareAssignor, ProfileTopic
from kafka_assignors.core.model import TopicPartition
from kafka_assignors.load.connection import WeightSourceError
from kafka_assignors.load.sources import WeightContext

from .fakes import FakeCluster, FakeMember, assigned, subscription_of

Record = namedtuple("Record", "key value")
CONNECTION = {"bootstrap_servers": ["b:9092"], "security_protocol": "SASL_SSL",
              "sasl_mechanism": "PLAIN", "sasl_plain_username": "u",
              "sasl_plain_password": "p", "client_id": "billing"}
CONSUMER = {"connection": CONNECTION}


def entry(topic: str, partition: int, weight: Any) -> Record:
    value = {"topic": topic, "partition": partition, "weight": weight, "messages": 3}
    return Record(f"{topic}:{partition}".encode(), json.dumps(value).encode())


class FakeConsumer:
    """A compacted topic of one or more partitions, read in batches of two records."""

    DEFAULT_CONFIG: ClassVar[dict[str, Any]] = KafkaConsumer.DEFAULT_CONFIG
    built: ClassVar[list[dict[str, Any]]] = []
    closed: ClassVar[list[bool]] = []
    log: ClassVar[dict[int, list[Record]]] = {}
    stall = 0.0

    def __init__(self, **config: Any) -> None:
        FakeConsumer.built.append(config)
        self._pos: dict[KTP, int] = {}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(self.log) if topic == "profile" else None

    def assign(self, tps: list[KTP]) -> None:
        self._pos = dict.fromkeys(tps, 0)

    def seek_to_beginning(self, *tps: KTP) -> None:
        for tp in tps:
            self._pos[tp] = 0

    def end_offsets(self, tps: list[KTP]) -> dict[KTP, int]:
        return {tp: len(self.log[tp.partition]) for tp in tps}

    def position(self, tp: KTP) -> int:
        return self._pos[tp]

    def poll(self, timeout_ms: int) -> dict[KTP, list[Record]]:
        time.sleep(self.stall)
        out = {}
        for tp, at in self._pos.items():
            batch = self.log[tp.partition][at:at + 2]
            if batch:
                out[tp] = batch
                self._pos[tp] = at + len(batch)
        return out

    def close(self) -> None:
        FakeConsumer.closed.append(True)


@pytest.fixture(autouse=True)
def fresh() -> None:
    FakeConsumer.built.clear()
    FakeConsumer.closed.clear()
    FakeConsumer.stall = 0.0
    FakeConsumer.log = {0: [], 1: []}


def read(**kw: Any) -> dict[TopicPartition, float]:
    source = ProfileTopic("profile", consumer=CONSUMER, consumer_factory=FakeConsumer, **kw)
    return dict(source.weights([], WeightContext()))


def test_newest_entry_per_key_wins_and_tombstones_remove() -> None:
    FakeConsumer.log = {
        0: [entry("orders", 0, 5.0), entry("orders", 1, 1.0), entry("orders", 0, 9.0),
            Record(b"orders:1", None), Record(None, b"ignored: no key")],
        1: [entry("orders", 2, 2.5)],
    }
    assert read() == {TopicPartition("orders", 0): 9.0, TopicPartition("orders", 2): 2.5}
    assert FakeConsumer.closed == [True]


def test_reads_with_the_consumers_connection_outside_any_group() -> None:
    FakeConsumer.log[0] = [entry("orders", 0, 1.0)]
    read(timeout_s=2)
    (config,) = FakeConsumer.built
    for key in ("bootstrap_servers", "security_protocol", "sasl_mechanism",
                "sasl_plain_username", "sasl_plain_password"):
        assert config[key] == CONNECTION[key]
    assert config["group_id"] is None and config["enable_auto_commit"] is False
    assert config["request_timeout_ms"] == 2000 and config["client_id"] == "billing-load-profile"


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ({0: []}, "holds no entries"),
        ({0: [Record(b"k", b"{not json")]}, "not JSON"),
        ({0: [entry("orders", 0, -3)]}, "finite number"),
        ({0: [Record(b"orders:0", b'{"topic": "orders"}')]}, "lacks topic/partition/weight"),
        ({}, "does not exist"),
    ],
)
def test_unusable_topics_raise_naming_the_topic(log: dict[int, list[Record]],
                                                message: str) -> None:
    FakeConsumer.log = log
    with pytest.raises(WeightSourceError, match=message) as info:
        read()
    assert "'profile'" in str(info.value)


def test_a_slow_topic_is_abandoned_within_the_timeout() -> None:
    FakeConsumer.log[0] = [entry("orders", p, 1.0) for p in range(40)]
    FakeConsumer.stall = 0.2
    started = time.monotonic()
    with pytest.raises(WeightSourceError):
        read(timeout_s=0.5)
    assert time.monotonic() - started < 2


def test_unknown_connection_is_an_error_not_a_default_connection() -> None:
    source = ProfileTopic("profile", consumer_factory=FakeConsumer)
    with pytest.raises(WeightSourceError, match="connection settings are unknown"):
        source.weights([], WeightContext())
    assert FakeConsumer.built == []


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="topic"):
        ProfileTopic("")
    with pytest.raises(ValueError, match="timeout_s"):
        ProfileTopic("profile", timeout_s=0)


def test_load_aware_leader_uses_the_topic_and_falls_back_when_it_fails(caplog: Any) -> None:
    FakeConsumer.log[0] = [entry("t", 0, 100.0), entry("t", 1, 100.0)] + [
        entry("t", p, 1.0) for p in range(2, 6)]
    assignor = LoadAwareAssignor(weights=ProfileTopic(
        "profile", consumer=CONSUMER, consumer_factory=FakeConsumer))
    members = [FakeMember(f"m{i}", subscription_of(assignor, ["t"])) for i in range(2)]
    cluster = FakeCluster({"t": 6})
    result = assigned(assignor.assign(cluster, members))
    assert sorted(sum(p < 2 for p in bt["t"]) for bt in result.values()) == [1, 1]
    FakeConsumer.log = {}
    caplog.set_level("WARNING")
    result = assigned(assignor.assign(cluster, members))
    assert sorted(len(bt["t"]) for bt in result.values()) == [3, 3]
    assert "load profile topic 'profile' failed" in caplog.text
