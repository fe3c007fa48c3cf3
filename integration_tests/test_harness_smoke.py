"""Smoke tests of the harness itself: real brokers, real kafka-python groups."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_assignors.embedded import GroupRunner, KafkaCluster
from kafka_assignors.embedded.admin import partition_leader, partition_replicas

from .conftest import BrokerHandle


def _check_exact_cover(
    assignments: dict[str, frozenset[tuple[str, int]]], topic: str, n: int
) -> None:
    owned = [tp for parts in assignments.values() for tp in parts]
    assert len(owned) == len(set(owned)), f"a partition is owned twice: {assignments}"
    assert set(owned) == {(topic, p) for p in range(n)}, f"incomplete: {assignments}"


def test_range_group_assigns_all_partitions_and_survivors_take_over(
    make_topic: Callable[..., str], make_group: Callable[..., GroupRunner]
) -> None:
    """Three kafka-python `range` members split a 6-partition topic exactly, and the two
    left own all 6 after one closes."""
    topic = make_topic(6)
    group = make_group([topic], ["range"], members=3, session_timeout_ms=10_000)

    assignments = group.wait_stable(timeout=90)
    assert sorted(assignments) == ["m0", "m1", "m2"]
    _check_exact_cover(assignments, topic, 6)
    assert sorted(len(parts) for parts in assignments.values()) == [2, 2, 2]
    assert group.protocol() == "range"

    group.stop_member(0)
    assignments = group.wait_stable(timeout=90)
    assert sorted(assignments) == ["m1", "m2"]
    _check_exact_cover(assignments, topic, 6)
    assert sorted(len(parts) for parts in assignments.values()) == [3, 3]


@pytest.mark.cluster
def test_acks_all_record_survives_stop_of_partition_leader(
    kafka_cluster: KafkaCluster, make_topic: Callable[..., str]
) -> None:
    """A record produced with acks=all to an RF=3, min.insync.replicas=2 topic is still
    read after its partition leader stops."""
    topic = make_topic(
        1,
        replication_factor=3,
        configs={"min.insync.replicas": "2"},
        bootstrap=kafka_cluster.bootstrap,
    )
    racks = {b.node_id: b.rack for b in kafka_cluster.live_brokers()}
    assert racks == {1: "r1", 2: "r2", 3: "r3"} == kafka_cluster.racks
    replicas, isr = partition_replicas(kafka_cluster.bootstrap, topic, 0)
    assert sorted(replicas) == [1, 2, 3] and sorted(isr) == [1, 2, 3]

    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap.split(","), acks="all")
    try:
        sent = producer.send(topic, key=b"k", value=b"survivor").get(timeout=30)
    finally:
        producer.close(timeout=10)

    leader = partition_leader(kafka_cluster.bootstrap, topic, 0)
    assert leader in (1, 2, 3)
    kafka_cluster.stop_broker(leader)
    try:
        others = ",".join(n.bootstrap for n in kafka_cluster.nodes if n.node_id != leader)
        deadline = time.monotonic() + 60
        new_leader = partition_leader(others, topic, 0)
        while new_leader in (-1, leader) and time.monotonic() < deadline:
            time.sleep(0.5)
            new_leader = partition_leader(others, topic, 0)
        assert new_leader not in (-1, leader), "no new leader elected within 60 s"

        consumer = KafkaConsumer(bootstrap_servers=others.split(","), group_id=None)
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            found: list[Any] = []  # kafka-python's ConsumerRecords (untyped)
            deadline = time.monotonic() + 60
            while not found and time.monotonic() < deadline:
                found = consumer.poll(timeout_ms=1000).get(tp, [])
        finally:
            consumer.close()
        assert found, "the acknowledged record was not readable after the leader stopped"
        assert (found[0].offset, found[0].key, found[0].value) == (sent.offset, b"k", b"survivor")
    finally:
        kafka_cluster.start_broker(leader)


def test_console_consumer_tool_in_broker_image_reads_a_record(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str]
) -> None:
    """The broker image's kafka-console-consumer.sh reads back a record that kafka-python
    produced."""
    if kafka_broker.cluster is None:
        pytest.skip("BOOTSTRAP_SERVERS is set: there is no broker container to run the tool in")
    topic = make_topic(1)
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap.split(","), acks="all")
    try:
        producer.send(topic, value=b"hello-tools").get(timeout=30)
    finally:
        producer.close(timeout=10)
    node = kafka_broker.cluster.nodes[0]
    code, output = node.exec(
        [
            "/opt/kafka/bin/kafka-console-consumer.sh",
            "--bootstrap-server",
            node.bootstrap,
            "--topic",
            topic,
            "--from-beginning",
            "--max-messages",
            "1",
            "--timeout-ms",
            "30000",
        ]
    )
    assert code == 0, output
    assert "hello-tools" in output.splitlines(), output
