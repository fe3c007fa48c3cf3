"""What the Prometheus and OpenTelemetry exports share: finding a consumer's metrics and
reading them, with their tags, at collection time.

Imports only kafka-python and the metrics core, so each export module adds one library.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import COORDINATOR_GROUP, QUALITY_GROUP, GroupMetrics, _registry, metrics_of


@dataclass(frozen=True, slots=True)
class Reading:
    """One metric's value, read now."""

    #: the group as the exports name it: COORDINATOR_GROUP or QUALITY_GROUP for a
    #: GroupMetrics' own two groups (whatever its registry calls them), else the group
    group: str
    name: str
    description: str
    tags: tuple[tuple[str, str], ...]
    value: float

    @property
    def cumulative(self) -> bool:
        """A running total (Java's CumulativeSum/CumulativeCount: ``*-total``): a counter."""
        return self.name.endswith("-total")


def group_metrics(target: object) -> GroupMetrics:
    """The :class:`GroupMetrics` of ``target`` (a consumer of any supported client, or the
    ``GroupMetrics`` itself); TypeError naming what is missing otherwise."""
    if isinstance(target, GroupMetrics):
        return target
    found = metrics_of(target)
    if found is None:
        # a client whose consumers get their metrics attached when first asked for them
        binding = _registry.binding_for(target)
        if binding is not None and binding.find is not None:
            found = binding.find(target)
    if found is None:
        raise TypeError(
            f"{type(target).__name__} carries no kafka-assignors metrics: pass a kafka-python "
            "KafkaConsumer or an aiokafka consumer with one of our assignors, a "
            "kafka_assignors.confluent.Consumer, or a GroupMetrics"
        )
    return found


def read(metrics: GroupMetrics) -> Iterator[Reading]:
    """Every metric of the two groups in ``metrics``' registry, measured now: Java's rebalance
    metrics (with kafka-python's own join, sync and heartbeat timings, which the Java
    consumer has in the same group) and our assignment quality."""
    groups = {metrics.coordinator_group: COORDINATOR_GROUP, metrics.quality_group: QUALITY_GROUP}
    # (dict.copy(): the registry is written by the client's threads; kafka-python's own
    # KafkaConsumer.metrics() copies it the same way)
    for metric_name, metric in metrics.registry.metrics.copy().items():
        group = groups.get(metric_name.group)
        if group is None:
            continue
        try:
            value = float(metric.value())
        except Exception:  # (one metric that cannot be read must not fail a whole scrape)
            continue
        yield Reading(
            group,
            metric_name.name,
            metric_name.description or "",
            tuple(sorted((str(k), str(v)) for k, v in (metric_name.tags or {}).items())),
            value,
        )


def finite_or_nan(value: float) -> float:
    """kafka-python's Max over no samples is -inf (Java's is NaN): exported as NaN."""
    return value if math.isfinite(value) else math.nan


_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]")


def snake(text: str) -> str:
    """``consumer-coordinator-metrics`` -> ``consumer_coordinator_metrics`` (as the JMX
    exporter with ``lowercaseOutputName`` turns MBean types and attributes into names)."""
    out = _NOT_NAME.sub("_", text.lower())
    return f"_{out}" if out[:1].isdigit() else out


class Members:
    """The GroupMetrics an exporter reads: held weakly, so a consumer that is dropped stops
    being exported without an unregister call."""

    def __init__(self) -> None:
        self._refs: dict[int, Callable[[], GroupMetrics | None]] = {}

    def add(self, metrics: GroupMetrics) -> None:
        key = id(metrics)
        try:
            self._refs[key] = weakref.ref(metrics, lambda _: self._refs.pop(key, None))
        except TypeError:  # (a class without __weakref__: held until removed)
            self._refs[key] = lambda: metrics

    def remove(self, metrics: GroupMetrics) -> bool:
        return self._refs.pop(id(metrics), None) is not None

    def __iter__(self) -> Iterator[GroupMetrics]:
        for ref in self._snapshot():
            metrics = ref()
            if metrics is not None:
                yield metrics

    def _snapshot(self) -> list[Callable[[], GroupMetrics | None]]:
        # a weakref callback (a collection while copying) can drop an entry mid-copy
        while True:
            try:
                return list(self._refs.values())
            except RuntimeError:
                continue

    def __len__(self) -> int:
        return sum(1 for _ in self)


def first_line(text: str, default: Any) -> str:
    """A help text: the description's first line, else ``default``."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line or str(default)
