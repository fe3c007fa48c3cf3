"""``profile``: measure the load of every partition with Spark's Kafka source.

Reads the topics over an offset range or a time window, and per partition
counts messages, bytes (key + value), rates over the window, distinct keys, the
hottest key's share and the share of the 10 hottest keys; with a group, adds
committed offsets and lag.  The result is a
:class:`~kafka_assignors.load.profile.LoadProfile` written as JSON and Parquet
with the same columns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..load.profile import LoadProfile, PartitionLoad
from .kafka_io import Security, group_lag, partition_counts, spark_options

WEIGHT_METRICS = ("bytes_per_s", "messages_per_s", "lag", "bytes", "messages")
#: Columns of every entry (JSON and Parquet), in this order.
COLUMNS = (
    "topic",
    "partition",
    "weight",
    "messages",
    "bytes",
    "messages_per_s",
    "bytes_per_s",
    "distinct_keys",
    "hot_key",
    "hot_key_messages",
    "hot_key_share",
    "top10_keys_messages",
    "top10_keys_share",
    "first_offset",
    "last_offset",
    "committed",
    "lag",
)
HOT_KEY_CHARS = 80
#: How many of the hottest keys ``top10_keys_*`` sums.
TOP_KEYS = 10


@dataclass(frozen=True, slots=True)
class Window:
    """What to read: offsets (Spark's JSON or earliest/latest) or times (ms since epoch)."""

    starting_offsets: str = "earliest"
    ending_offsets: str = "latest"
    start_ms: int | None = None
    end_ms: int | None = None

    def options(self) -> dict[str, str]:
        opts = {"startingOffsets": self.starting_offsets, "endingOffsets": self.ending_offsets}
        if self.start_ms is not None:
            del opts["startingOffsets"]
            opts["startingTimestamp"] = str(self.start_ms)
            # a partition with nothing newer than the start is read from its end (not an error)
            opts["startingOffsetsByTimestampStrategy"] = "latest"
        if self.end_ms is not None:
            del opts["endingOffsets"]
            opts["endingTimestamp"] = str(self.end_ms)
        return opts


def read_partition_stats(
    spark: Any,
    bootstrap: str,
    topics: Sequence[str],
    window: Window,
    kafka_options: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One row per partition that had messages in the window (computed by Spark)."""
    from pyspark.sql import Window as W
    from pyspark.sql import functions as F

    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", ",".join(topics))
    )
    for key, value in {**window.options(), **(kafka_options or {})}.items():
        reader = reader.option(key, value)
    records = reader.load().select(
        "topic",
        "partition",
        "offset",
        F.unix_millis("timestamp").alias("ts"),
        F.col("key").cast("string").alias("k"),
        (F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))).alias(
            "size"
        ),
    )
    per_key = records.groupBy("topic", "partition", "k").agg(
        F.count("*").alias("n"),
        F.sum("size").alias("size"),
        F.min("offset").alias("first"),
        F.max("offset").alias("last"),
        F.min("ts").alias("t0"),
        F.max("ts").alias("t1"),
    )
    keyed = F.col("k").isNotNull()
    # rank keys by messages within their partition (keyless records last, never ranked)
    hottest_first = W.partitionBy("topic", "partition").orderBy(
        F.col("k").isNull(), F.col("n").desc(), F.col("k")
    )
    per_key = per_key.withColumn("rank", F.when(keyed, F.row_number().over(hottest_first)))
    per_partition = per_key.groupBy("topic", "partition").agg(
        F.sum("n").alias("messages"),
        F.sum("size").alias("bytes"),
        F.count(F.when(keyed, 1)).alias("distinct_keys"),
        F.max(F.when(keyed, F.col("n"))).alias("hot_key_messages"),
        F.max_by(F.when(keyed, F.col("k")), F.when(keyed, F.col("n"))).alias("hot_key"),
        F.sum(F.when(F.col("rank") <= TOP_KEYS, F.col("n"))).alias("top10_keys_messages"),
        F.min("first").alias("first_offset"),
        F.max("last").alias("last_offset"),
        F.min("t0").alias("t0"),
        F.max("t1").alias("t1"),
    )
    return [r.asDict() for r in per_partition.collect()]


def build_profile(
    rows: Sequence[dict[str, Any]],
    counts: dict[str, int],
    window: Window,
    *,
    weight_metric: str = "bytes_per_s",
    group: str | None = None,
    lag: dict[tuple[str, int], tuple[int | None, int]] | None = None,
    now_ms: int | None = None,
) -> LoadProfile:
    """Turn Spark's per-partition rows into a profile; partitions without messages weigh 0."""
    if weight_metric not in WEIGHT_METRICS:
        raise ValueError(f"weight metric must be one of {WEIGHT_METRICS}")
    if weight_metric == "lag" and lag is None:
        raise ValueError("weighting by lag needs a group")
    seen = [r for r in rows if r.get("messages")]
    start_ms = window.start_ms
    end_ms = window.end_ms
    if start_ms is None:
        start_ms = min((_ms(r["t0"]) for r in seen), default=0)
    if end_ms is None:
        end_ms = (
            now_ms
            if window.start_ms is not None and now_ms is not None
            else max((_ms(r["t1"]) for r in seen), default=start_ms)
        )
    seconds = max(1.0, (end_ms - start_ms) / 1000.0)
    by_tp = {(r["topic"], r["partition"]): r for r in seen}
    parts = []
    for topic in sorted(counts):
        for p in range(counts[topic]):
            r = by_tp.get((topic, p), {})
            messages = int(r.get("messages") or 0)
            size = int(r.get("bytes") or 0)
            hot_n = int(r.get("hot_key_messages") or 0)
            hot_key = r.get("hot_key")
            top_n = int(r.get("top10_keys_messages") or 0)
            m: dict[str, Any] = {
                "messages": messages,
                "bytes": size,
                "messages_per_s": messages / seconds,
                "bytes_per_s": size / seconds,
                "distinct_keys": int(r.get("distinct_keys") or 0),
                "hot_key": None if hot_key is None else str(hot_key)[:HOT_KEY_CHARS],
                "hot_key_messages": hot_n,
                "hot_key_share": hot_n / messages if messages else 0.0,
                "top10_keys_messages": top_n,
                "top10_keys_share": top_n / messages if messages else 0.0,
                "first_offset": r.get("first_offset"),
                "last_offset": r.get("last_offset"),
                "committed": None,
                "lag": None,
            }
            if lag is not None:
                m["committed"], m["lag"] = lag.get((topic, p), (None, 0))
            parts.append(PartitionLoad(topic, p, float(m[weight_metric] or 0), m))
    meta: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "window": {"start": _iso(start_ms), "end": _iso(end_ms), "seconds": seconds},
    }
    if group:
        meta["group"] = group
    return LoadProfile(tuple(parts), weight_metric, meta)


def run_profile(
    spark: Any,
    bootstrap: str,
    topics: Sequence[str],
    window: Window,
    *,
    group: str | None = None,
    weight_metric: str = "bytes_per_s",
    kafka_options: dict[str, str] | None = None,
    security: Security | None = None,
) -> LoadProfile:
    """Measure ``topics``; ``security`` (kafka-python keywords) is used by the kafka-python
    calls and, as ``kafka.*`` options, by Spark's source (``kafka_options`` override them).

    ``spark``: a :class:`~kafka_assignors.pipeline.session.Session` or a SparkSession."""
    spark = getattr(spark, "spark", spark)
    counts = partition_counts(bootstrap, topics, security)
    options = {**spark_options(security), **(kafka_options or {})}
    rows = read_partition_stats(spark, bootstrap, topics, window, options)
    lag = group_lag(bootstrap, group, counts, security) if group else None
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    return build_profile(
        rows, counts, window, weight_metric=weight_metric, group=group, lag=lag, now_ms=now_ms
    )


def write_profile(profile: LoadProfile, out_dir: str | Path) -> tuple[Path, Path]:
    """``profile.json`` (the load profile format) and ``profile.parquet`` (same columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, parquet_path = out / "profile.json", out / "profile.parquet"
    profile.write(json_path)
    entries = json.loads(json_path.read_text())["partitions"]
    columns = list(COLUMNS) + sorted({k for e in entries for k in e} - set(COLUMNS))
    table = pa.Table.from_pydict({c: [e.get(c) for e in entries] for c in columns})
    pq.write_table(table, parquet_path)
    return json_path, parquet_path


def parse_time(text: str, now_ms: int) -> int:
    """Milliseconds since the epoch from ISO 8601, epoch ms, or a relative '-15m' / '-2h'."""
    text = text.strip()
    units = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    if text.startswith("-") and text[-1:] in units:
        return now_ms - int(float(text[1:-1]) * units[text[-1]])
    if text.isdigit():
        return int(text)
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def _ms(value: Any) -> int:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp() * 1000)
    return int(value)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")
