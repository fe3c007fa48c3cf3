"""``kafka_assignors.confluent.Consumer`` with ``group.protocol=consumer`` (KIP-848) and
``kafka-assignors explain`` on such groups, against a real broker.

The broker assigns: our strategy names become ``group.remote.assignor``.  Groups are waited
for by the broker's Stable state and every member's own view (see
``consumer_protocol_group.py``), never by a quiet period.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafka_assignors.cli import main
from kafka_assignors.core import GroupSpec, MemberSpec, balanced_sticky
from kafka_assignors.core.metrics import count_spread

from .conftest import BrokerHandle
from .consumer_protocol_group import (
    ConsumerProtocolGroup,
    broker_assignors,
    require_balanced_sticky,
)
from .test_cli import produce

RECORDS_PER_PARTITION = 20


def _bridge_consumer(config: dict[str, Any]) -> Any:
    from kafka_assignors.confluent import Consumer

    return Consumer(config)


def _squares(a: dict[str, dict[str, list[int]]]) -> int:
    return sum(sum(map(len, by_t.values())) ** 2 for by_t in a.values())


def test_bridge_consumer_protocol_group_on_balanced_sticky(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """Three members with unequal subscriptions and our strategy run a consumer-protocol group
    on the broker's balanced-sticky: the broker names that assignor, the assignment is as
    balanced as the core's, callbacks get the partitions that change, and every record
    produced is read by the member that holds its partition."""
    from confluent_kafka.admin import AdminClient

    from kafka_assignors.confluent import BrokerAssignedConsumer

    require_balanced_sticky(kafka_broker.bootstrap)
    a, b = make_topic(5), make_topic(3)
    counts = {a: 5, b: 3}
    subs = {"m1": [a, b], "m2": [a], "m3": [b]}
    group = ConsumerProtocolGroup(
        kafka_broker.bootstrap, unique_name("group"),
        {"partition.assignment.strategy": "cooperative-balanced-sticky",
         "auto.offset.reset": "earliest", "enable.auto.commit": False,
         "session.timeout.ms": 45000},  # left out with a warning: the broker sets it
        factory=_bridge_consumer,
    )
    held: dict[str, set[tuple[str, int]]] = {name: set() for name in subs}
    calls: list[tuple[str, str, int]] = []

    def tracker(name: str, kind: str) -> Callable[[Any, list[Any]], None]:
        def callback(consumer: Any, partitions: list[Any]) -> None:
            calls.append((name, kind, len(partitions)))
            change = {(tp.topic, tp.partition) for tp in partitions}
            held[name] = held[name] | change if kind == "assign" else held[name] - change
        return callback

    try:
        for name, topics in subs.items():
            consumer = group.join(name, topics, on_assign=tracker(name, "assign"),
                                  on_revoke=tracker(name, "revoke"))
            assert isinstance(consumer, BrokerAssignedConsumer)
            assert consumer.remote_assignor == "balanced-sticky"
        assigned = group.stable(sum(counts.values()))
        admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
        assert group.describe(admin).partition_assignor == "balanced-sticky"
        want = balanced_sticky(GroupSpec.build(
            [MemberSpec(m, frozenset(ts), {}) for m, ts in subs.items()], counts))
        assert _squares(assigned) == _squares(want)
        assert count_spread(assigned) == count_spread(want)
        for name, by_t in assigned.items():  # incremental callbacks add up to the assignment
            assert held[name] == {(t, p) for t, ps in by_t.items() for p in ps}
            assert set(by_t) <= set(subs[name])
        assert all(kind == "assign" or n > 0 for _, kind, n in calls)

        for topic, n in counts.items():
            produce(kafka_broker.bootstrap, topic, n, RECORDS_PER_PARTITION)
        total = sum(counts.values()) * RECORDS_PER_PARTITION
        read: dict[tuple[str, int, int], str] = {}
        deadline = time.monotonic() + 60
        while len(read) < total and time.monotonic() < deadline:
            for name, consumer in group.members.items():
                for msg in consumer.consume(100, 0.1):
                    assert msg.error() is None, msg.error()
                    key = (msg.topic(), msg.partition(), msg.offset())
                    assert key not in read, f"{key} read twice"
                    read[key] = name
        assert len(read) == total, f"read {len(read)} of {total} records"
        for (topic, partition, _), name in read.items():
            assert partition in assigned[name][topic]
        for consumer in group.members.values():
            # (asynchronous by default, as confluent-kafka's)
            assert consumer.commit(asynchronous=False) is not None
        assert not group.errors
    finally:
        group.close()


def test_a_subscription_to_a_topic_that_does_not_exist_yet_is_assigned_the_others(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """A member that also names a topic nobody has created yet (subscribing before the
    producer creates it is common) gets its share of the topics that exist: the broker's
    balanced-sticky does not fail the heartbeat (it did: UNKNOWN_SERVER_ERROR, fatal for
    librdkafka), and a member of the plain topic shares them with it."""
    require_balanced_sticky(kafka_broker.bootstrap)
    a = make_topic(5)
    group = ConsumerProtocolGroup(
        kafka_broker.bootstrap, unique_name("group"),
        {"partition.assignment.strategy": "cooperative-balanced-sticky"},
        factory=_bridge_consumer,
    )
    try:
        group.join("m1", [a, unique_name("not-created")])
        assert group.stable(5) == {"m1": {a: [0, 1, 2, 3, 4]}}
        group.join("m2", [a])
        assigned = group.stable(5)
        assert sorted(len(by_t[a]) for by_t in assigned.values()) == [2, 3]
        assert not group.errors
    finally:
        group.close()


def test_an_unknown_remote_assignor_names_the_brokers_assignors(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """A group.remote.assignor the broker lacks fails poll() with UnsupportedAssignorError,
    naming what the broker lists in group.consumer.assignors."""
    from kafka_assignors.confluent import Consumer, UnsupportedAssignorError

    on_broker = broker_assignors(kafka_broker.bootstrap)
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap,
                         "group.id": unique_name("group"), "group.protocol": "consumer",
                         "group.remote.assignor": "no-such-assignor"})
    try:
        consumer.subscribe([make_topic(2)])
        deadline = time.monotonic() + 30
        with pytest.raises(UnsupportedAssignorError) as info:
            while time.monotonic() < deadline:
                consumer.poll(0.2)
        error = info.value
        assert error.assignor == "no-such-assignor"
        assert error.broker_assignors == on_broker
        assert f"the broker offers {', '.join(on_broker)}" in str(error)
        with pytest.raises(UnsupportedAssignorError):  # fatal: every later poll says so
            consumer.poll(0)
        with pytest.raises(UnsupportedAssignorError):
            consumer.consume(1, 0)
    finally:
        consumer.close()


def test_explain_shows_a_consumer_protocol_group(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str], capsys: pytest.CaptureFixture[str],
) -> None:
    """explain --json on a consumer-protocol group: the broker's assignor, epochs, every
    member with the assignment it holds itself, its target, its epoch, and the lag after
    its commits; the text form names the same."""
    a, b = make_topic(4), make_topic(2)
    group = ConsumerProtocolGroup(
        kafka_broker.bootstrap, unique_name("group"),
        {"group.remote.assignor": "range", "auto.offset.reset": "earliest",
         "enable.auto.commit": False, "client.rack": "r1"},
    )
    try:
        group.join("m1", [a, b])
        group.join("m2", [a])
        own = group.stable(6)
        produce(kafka_broker.bootstrap, a, 4, 5)  # after the wait, which drops what it polls
        read = 0
        deadline = time.monotonic() + 60
        while read < 20 and time.monotonic() < deadline:
            for consumer in group.members.values():
                read += sum(1 for m in consumer.consume(50, 0.1) if m.error() is None)
        assert read == 20
        for name, consumer in group.members.items():
            if a in own[name]:
                consumer.commit(asynchronous=False)
        assert group.stable(6) == own  # nobody joined or left
        member_ids = {name: c.memberid() for name, c in group.members.items()}

        code = main(["explain", "--bootstrap", kafka_broker.bootstrap,
                     "--group", group.group_id, "--json"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        doc = json.loads(captured.out)
        assert doc["group_type"] == "consumer" and doc["protocol_type"] == "consumer"
        assert doc["state"] == "Stable" and doc["strategy"] == "range"
        assert doc["group_epoch"] == doc["assignment_epoch"] > 0
        by_client = {m["client_id"]: m for m in doc["members"]}
        assert set(by_client) == set(own)
        for name, held in own.items():
            member = by_client[name]
            assert member["member_id"] == member_ids[name]
            assert member["assignment"] == held == member["target_assignment"]
            assert member["member_epoch"] == doc["group_epoch"]
            assert member["rack"] == "r1" and member["member_type"] == "consumer"
            assert member["topics"] == sorted([a, b] if name == "m1" else [a])
            for t, ps in held.items():  # a's records are read and committed; b is empty
                for p in ps:
                    assert member["lag"][f"{t}-{p}"] in ((0,) if t == a else (0, None))
        assert doc["unassigned"] == [] and doc["total_lag"] == 0
        assert not [n for n in doc["notes"] if "reconciling" in n or "behind" in n]

        assert main(["explain", "--bootstrap", kafka_broker.bootstrap,
                     "--group", group.group_id]) == 0
        text = capsys.readouterr().out
        assert "assignor   range (on the broker)" in text
        assert f"epochs     group {doc['group_epoch']}, target assignment" in text
        assert text.count("target: the same (reconciled)") == 2
    finally:
        group.close()
