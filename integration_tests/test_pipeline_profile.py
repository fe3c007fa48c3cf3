"""profile: a real topic read through Spark's Kafka source, checked against what was produced."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.load.profile import read_profile

pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """The pipeline's session; every pipeline test module gets the same one (getOrCreate)."""
    from kafka_assignors.pipeline.session import build_session

    yield build_session("local[2]", "kafka-assignors-tests", kafka=True)


def produce(
    bootstrap: str, topic: str, records: Sequence[tuple[int, bytes | None, bytes, int]]
) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    for partition, key, value, ts in records:
        producer.send(topic, key=key, value=value, partition=partition, timestamp_ms=ts)
    producer.flush(timeout=30)
    producer.close()


T0 = int(time.time() * 1000) - 60_000
# partition 0: ten messages with key "a" (100-byte values), one second apart
P0 = [(0, b"a", b"x" * 100, T0 + i * 1000) for i in range(10)]
# partition 1: keys b, b, b, c and one message without a key (10-byte values)
P1 = [(1, k, b"y" * 10, T0 + i * 1000) for i, k in enumerate([b"b", b"b", b"b", b"c", None])]
# partition 2: nothing


@pytest.fixture(scope="module")
def topic(kafka_broker: Any) -> Iterator[str]:
    from kafka_assignors.embedded.admin import create_topic, delete_topic

    name = f"profile-{int(time.time() * 1000)}"
    create_topic(kafka_broker.bootstrap, name, 3, 1, None)
    produce(kafka_broker.bootstrap, name, P0 + P1)
    yield name
    delete_topic(kafka_broker.bootstrap, name)


def commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    consumer.commit(
        {TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}
    )
    consumer.close()


def test_profile_counts_what_was_produced(
    spark: Any,
    kafka_broker: Any,
    topic: str,
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """Messages, bytes (key + value), keys, hot key, lag; the empty partition weighs 0."""
    from kafka_assignors.pipeline.profile import Window, run_profile, write_profile

    group = unique_name("group")
    commit(kafka_broker.bootstrap, group, topic, {0: 6})
    profile = run_profile(spark, kafka_broker.bootstrap, [topic], Window(), group=group)
    by_p = {p.partition: p for p in profile.partitions}
    assert sorted(by_p) == [0, 1, 2] and profile.weight_metric == "bytes_per_s"
    m0, m1, m2 = (by_p[p].measured for p in range(3))
    assert (m0["messages"], m0["bytes"], m0["distinct_keys"]) == (10, 10 * 101, 1)
    assert (m0["hot_key"], m0["hot_key_messages"], m0["hot_key_share"]) == ("a", 10, 1.0)
    assert (m0["top10_keys_messages"], m0["top10_keys_share"]) == (10, 1.0)
    assert (m1["messages"], m1["bytes"], m1["distinct_keys"]) == (5, 4 * 11 + 10, 2)
    assert (m1["hot_key"], m1["hot_key_share"]) == ("b", pytest.approx(3 / 5))
    # keys b (3) and c (1) are the top keys; the keyless message is never counted
    assert (m1["top10_keys_messages"], m1["top10_keys_share"]) == (4, pytest.approx(4 / 5))
    assert (m2["messages"], m2["bytes"], by_p[2].weight) == (0, 0, 0.0)
    # the window spans the produced timestamps: T0 .. T0 + 9 s
    assert profile.meta["window"]["seconds"] == pytest.approx(9.0)
    assert m0["messages_per_s"] == pytest.approx(10 / 9)
    assert by_p[0].weight == pytest.approx(1010 / 9)
    assert (m0["committed"], m0["lag"]) == (6, 4)
    assert (m1["committed"], m1["lag"]) == (None, 5)  # no commit: lag from the log start
    assert profile.meta["group"] == group

    json_path, parquet_path = write_profile(profile, tmp_path)
    again = read_profile(json_path)
    assert again.weights() == profile.weights()
    table = pq.read_table(parquet_path).to_pylist()
    entries = json.loads(json_path.read_text())["partitions"]
    assert [{k: r[k] for k in e} for r, e in zip(table, entries, strict=True)] == entries


def test_profile_of_a_time_window(spark: Any, kafka_broker: Any, topic: str) -> None:
    """[T0+2s, T0+5s) holds messages 2, 3, 4 of each keyed partition."""
    from kafka_assignors.pipeline.profile import Window, run_profile

    window = Window(start_ms=T0 + 2000, end_ms=T0 + 5000)
    profile = run_profile(spark, kafka_broker.bootstrap, [topic], window, weight_metric="messages")
    counts = {p.partition: p.measured["messages"] for p in profile.partitions}
    assert counts == {0: 3, 1: 3, 2: 0}
    assert profile.meta["window"]["seconds"] == pytest.approx(3.0)
    assert {p.partition: p.weight for p in profile.partitions} == {0: 3.0, 1: 3.0, 2: 0.0}


def test_published_profile_is_one_compacted_message_per_partition(
    spark: Any, kafka_broker: Any, topic: str, unique_name: Callable[[str], str]
) -> None:
    """Key topic:partition, value the partition's JSON entry, on a compacted topic."""
    from kafka import KafkaConsumer
    from kafka.admin import ConfigResource, ConfigResourceType

    from kafka_assignors.embedded.admin import delete_topic
    from kafka_assignors.pipeline.kafka_io import admin, publish
    from kafka_assignors.pipeline.profile import Window, run_profile

    profile = run_profile(spark, kafka_broker.bootstrap, [topic], Window())
    target = unique_name("profiles")
    try:
        assert publish(profile, kafka_broker.bootstrap, target) == 3
        entries = {f"{e['topic']}:{e['partition']}": e for e in profile.to_json()["partitions"]}
        want = json.loads(json.dumps(entries))
        consumer = KafkaConsumer(
            target, bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="earliest")
        # read until every published entry is in, bounded: a quiet spell is no end (on a busy
        # machine the first fetch of the new topic came after a 10 s consumer_timeout_ms)
        got: dict[str, Any] = {}
        deadline = time.monotonic() + 90
        while len(got) < len(want) and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                got.update((m.key.decode(), json.loads(m.value)) for m in records)
        consumer.close()
        assert got == want
        with admin(kafka_broker.bootstrap) as client:
            described = client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, target)])
        # {"topic": {name: {config key: {"value": ..., "config_source": ...}}}}
        assert described["topic"][target]["cleanup.policy"]["value"] == "compact"
    finally:
        delete_topic(kafka_broker.bootstrap, target)


def test_top10_keys_share_sums_the_ten_hottest_keys(
    spark: Any, kafka_broker: Any, make_topic: Callable[..., str], tmp_path: Path
) -> None:
    """12 keys with 12, 11, ..., 1 messages plus 2 keyless: the 10 hottest carry 12+...+3 = 75
    of 80 messages; the column is in the JSON and the Parquet file."""
    from kafka_assignors.pipeline.profile import Window, run_profile, write_profile

    name = make_topic(1)
    records = [
        (0, f"k{k:02d}".encode(), b"v", T0 + i)
        for k in range(12)
        for i in range(12 - k)
    ] + [(0, None, b"v", T0), (0, None, b"v", T0 + 1)]
    produce(kafka_broker.bootstrap, name, records)
    profile = run_profile(spark, kafka_broker.bootstrap, [name], Window())
    (only,) = profile.partitions
    m = only.measured
    assert (m["messages"], m["distinct_keys"], m["hot_key"], m["hot_key_messages"]) == (
        80, 12, "k00", 12
    )
    assert (m["top10_keys_messages"], m["top10_keys_share"]) == (75, pytest.approx(75 / 80))
    json_path, parquet_path = write_profile(profile, tmp_path)
    (entry,) = json.loads(json_path.read_text())["partitions"]
    (row,) = pq.read_table(parquet_path).to_pylist()
    assert entry["top10_keys_share"] == row["top10_keys_share"] == pytest.approx(75 / 80)
    assert row["top10_keys_messages"] == 75
