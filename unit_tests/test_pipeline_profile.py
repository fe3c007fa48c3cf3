"""Turning Spark's per-partition rows into a load profile, without Spark."""

from __future__ import annotations

import pytest

from kafka_assignors.pipeline.profile import Window, build_profile, parse_time

NOW = 1_800_000_000_000


def row(p: int, messages: int, size: int, t0: int, t1: int, **extra: object) -> dict[str, object]:
    return {
        "topic": "t",
        "partition": p,
        "messages": messages,
        "bytes": size,
        "t0": t0,
        "t1": t1,
        "distinct_keys": extra.get("keys", 1),
        "hot_key": extra.get("hot", "k"),
        "hot_key_messages": extra.get("hot_n", messages),
        "top10_keys_messages": extra.get("top_n", messages),
        "first_offset": 0,
        "last_offset": messages - 1,
    }


def test_rates_over_the_span_of_the_messages_and_idle_partitions_weigh_zero() -> None:
    """Offsets mode: the window is first to last timestamp read, over all partitions."""
    rows = [
        row(0, 100, 5000, NOW, NOW + 10_000, hot_n=40, keys=7, top_n=90),
        row(1, 10, 100, NOW + 2000, NOW + 4000),
    ]
    profile = build_profile(rows, {"t": 3}, Window())
    p0, p1, p2 = profile.partitions
    assert profile.meta["window"]["seconds"] == 10.0
    assert (p0.weight, p0.measured["messages_per_s"]) == (500.0, 10.0)
    assert (p0.measured["distinct_keys"], p0.measured["hot_key_share"]) == (7, 0.4)
    assert (p0.measured["top10_keys_messages"], p0.measured["top10_keys_share"]) == (90, 0.9)
    assert p1.weight == 10.0
    assert (p2.weight, p2.measured["messages"], p2.measured["hot_key"]) == (0.0, 0, None)
    assert p2.measured["top10_keys_share"] == 0.0


def test_time_window_without_an_end_runs_to_now_and_weights_can_be_lag() -> None:
    """--since without --until: the window ends now; --weight lag uses the group's lag."""
    rows = [row(0, 60, 600, NOW - 50_000, NOW - 1000)]
    lag = {("t", 0): (55, 5), ("t", 1): (None, 12)}
    profile = build_profile(
        rows,
        {"t": 2},
        Window(start_ms=NOW - 60_000),
        weight_metric="lag",
        group="g",
        lag=lag,
        now_ms=NOW,
    )
    assert profile.meta["window"]["seconds"] == 60.0 and profile.meta["group"] == "g"
    assert [p.weight for p in profile.partitions] == [5.0, 12.0]
    assert profile.partitions[0].measured["messages_per_s"] == 1.0
    assert profile.partitions[1].measured["committed"] is None
    with pytest.raises(ValueError, match="needs a group"):
        build_profile(rows, {"t": 1}, Window(), weight_metric="lag")


def test_window_options_for_spark() -> None:
    """Offsets by default; timestamps replace them, reading quiet partitions from their end."""
    assert Window().options() == {"startingOffsets": "earliest", "endingOffsets": "latest"}
    opts = Window(start_ms=1, end_ms=2).options()
    assert opts == {
        "startingTimestamp": "1",
        "endingTimestamp": "2",
        "startingOffsetsByTimestampStrategy": "latest",
    }


def test_parse_time_forms() -> None:
    """Relative, epoch milliseconds and ISO 8601 (UTC when no zone is given)."""
    assert parse_time("-15m", NOW) == NOW - 15 * 60_000
    assert parse_time("-2h", NOW) == NOW - 7_200_000
    assert parse_time("1700000000000", NOW) == 1_700_000_000_000
    assert parse_time("2023-11-14T22:13:20", NOW) == 1_700_000_000_000
    assert parse_time("2023-11-14T23:13:20+01:00", NOW) == 1_700_000_000_000


def test_kafka_io_and_run_profile_pass_the_security_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The admin client gets the kafka-python keywords; Spark's reader gets kafka.* options,
    which --kafka-option entries override."""
    import kafka.admin

    from kafka_assignors.pipeline import kafka_io, profile

    security = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
                "sasl_plain_username": "u", "sasl_plain_password": "p"}
    made: list[dict[str, object]] = []

    class FakeAdmin:
        def __init__(self, **kwargs: object) -> None:
            made.append(kwargs)

        def describe_topics(self, topics: list[str]) -> list[dict[str, object]]:
            return [{"name": t, "partitions": [0, 1]} for t in topics]

        def close(self) -> None:
            pass

    monkeypatch.setattr(kafka.admin, "KafkaAdminClient", FakeAdmin)
    seen: dict[str, object] = {}

    def fake_read(spark: object, bootstrap: str, topics: object, window: object,
                  options: dict[str, str] | None = None) -> list[dict[str, object]]:
        seen.update(options or {})
        return []

    monkeypatch.setattr(profile, "read_partition_stats", fake_read)
    result = profile.run_profile(
        None, "b1:9092,b2:9092", ["t"], Window(), security=security,
        kafka_options={"kafka.sasl.mechanism": "SCRAM-SHA-256"},
    )
    assert [p.partition for p in result.partitions] == [0, 1]
    assert made == [{"bootstrap_servers": ["b1:9092", "b2:9092"],
                     "client_id": "kafka-assignors-pipeline", **security}]
    assert seen == {
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-256",  # the explicit --kafka-option wins
        "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
        'required username="u" password="p";',
    }
    assert kafka_io.spark_options(None) == {}
