"""The load profile: measured load per partition, the contract between pipeline and assignors.

The PySpark pipeline writes it (``kafka-assignors profile``); ``LoadAwareAssignor``
reads it.  JSON, one object::

    {
      "format": "kafka-assignors/load-profile",
      "version": 1,
      "generated_at": "2026-11-21T12:00:00+00:00",
      "weight_metric": "bytes_per_s",          # which field "weight" was taken from
      "window": {"start": "...", "end": "...", "seconds": 300.0},   # optional
      "group": "orders-processor",              # optional
      "partitions": [
        {"topic": "orders", "partition": 0, "weight": 1234.5,
         "messages": 1000, "bytes": 123450, "messages_per_s": 3.3, "bytes_per_s": 411.5,
         "distinct_keys": 17, "hot_key_share": 0.42, "committed": 990, "lag": 10},
        ...
      ]
    }

Only ``topic``, ``partition`` and ``weight`` are required in each entry; the
other fields are what the pipeline measured and are kept for reports.  The same
JSON, one entry per message keyed ``topic:partition``, is what the pipeline
publishes to a compacted topic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.model import TopicPartition

FORMAT = "kafka-assignors/load-profile"
VERSION = 1


class LoadProfileError(ValueError):
    """A load profile that cannot be used, with the reason."""


@dataclass(frozen=True, slots=True)
class PartitionLoad:
    topic: str
    partition: int
    weight: float
    #: Whatever else was measured (messages, bytes, rates, keys, lag ...).
    measured: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class LoadProfile:
    partitions: tuple[PartitionLoad, ...]
    weight_metric: str = "weight"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def weights(self) -> dict[TopicPartition, float]:
        return {p.tp: p.weight for p in self.partitions}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            **dict(self.meta),
            "weight_metric": self.weight_metric,
            "partitions": [
                {**dict(p.measured), "topic": p.topic, "partition": p.partition,
                 "weight": p.weight}
                for p in sorted(self.partitions, key=lambda p: (p.topic, p.partition))
            ],
        }

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n")


def parse_entries(entries: Iterable[Mapping[str, Any]]) -> tuple[PartitionLoad, ...]:
    """Validate partition entries; raise :class:`LoadProfileError` naming the bad one."""
    out = []
    for n, e in enumerate(entries):
        try:
            topic, partition, weight = e["topic"], e["partition"], e["weight"]
        except (KeyError, TypeError) as exc:
            raise LoadProfileError(f"entry {n} lacks topic/partition/weight: {e!r}") from exc
        if not isinstance(topic, str) or not isinstance(partition, int) or partition < 0:
            raise LoadProfileError(f"entry {n} has a bad topic or partition: {e!r}")
        if not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise LoadProfileError(f"entry {n} has a weight that is not a finite number >= 0")
        measured = {k: v for k, v in e.items() if k not in ("topic", "partition", "weight")}
        out.append(PartitionLoad(topic, partition, float(weight), measured))
    return tuple(out)


def load_profile(data: Mapping[str, Any]) -> LoadProfile:
    if data.get("format") != FORMAT:
        raise LoadProfileError(f"not a load profile (format is {data.get('format')!r})")
    if data.get("version") != VERSION:
        raise LoadProfileError(f"unsupported load profile version {data.get('version')!r}")
    entries = data.get("partitions")
    if not isinstance(entries, list):
        raise LoadProfileError("load profile has no 'partitions' list")
    meta = {k: v for k, v in data.items()
            if k not in ("format", "version", "partitions", "weight_metric")}
    return LoadProfile(parse_entries(entries), str(data.get("weight_metric", "weight")), meta)


def read_profile(path: str | Path) -> LoadProfile:
    """Read a profile file; errors name the file and the problem."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise LoadProfileError(f"cannot read load profile {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise LoadProfileError(f"load profile {path} is not a JSON object")
    try:
        return load_profile(data)
    except LoadProfileError as exc:
        raise LoadProfileError(f"{path}: {exc}") from exc
