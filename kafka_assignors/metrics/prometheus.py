"""Prometheus export of a consumer's rebalance and assignment metrics (extra ``prometheus``).

One call::

    from kafka_assignors.metrics import prometheus
    prometheus.register(consumer)          # kafka-python, aiokafka, the bridge, or GroupMetrics
    prometheus_client.start_http_server(9102)

A custom collector reads the consumer's metrics registry at scrape time: nothing is
copied between scrapes.  Names follow what the Prometheus JMX exporter gives the Java
consumer's MBeans under the usual rules (Confluent's ``jmx-monitoring-stacks``:
``kafka.consumer<type=(.+), client-id=(.+)><>(.+)`` -> ``kafka_consumer_$1_$3``,
lower-cased, ``-`` -> ``_``), so a dashboard built on Java consumers reads ours too:
``kafka_consumer_consumer_coordinator_metrics_rebalance_latency_avg{client_id="..."}``.
Tags become labels the same way (``client-id`` -> ``client_id``).  ``*-total`` metrics
(Java's cumulative sums and counts) are counters, the rest gauges.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry

from . import GroupMetrics
from ._export import (
    Members,
    finite_or_nan,
    first_line,
    group_metrics,
    read,
    snake,
)

__all__ = ["PREFIX", "KafkaAssignorsCollector", "metric_name", "register", "unregister"]

log = logging.getLogger(__name__)

#: What the JMX exporter's rules put before a consumer MBean's type.
PREFIX = "kafka_consumer"


def metric_name(group: str, name: str, prefix: str = PREFIX) -> str:
    """The Prometheus name of a metric: ``kafka_consumer_<group>_<name>``, snake-cased."""
    return f"{prefix}_{snake(group)}_{snake(name)}"


class KafkaAssignorsCollector(Collector):
    """Reads every registered consumer's metrics at each scrape (one collector per
    registry; consumers are held weakly)."""

    def __init__(self, prefix: str = PREFIX) -> None:
        self.prefix = prefix
        self.members = Members()
        self._warned: set[tuple[str, tuple[tuple[str, str], ...]]] = set()

    def describe(self) -> Iterable[Metric]:
        # The names depend on the consumers registered later: no names claimed up front.
        return []

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        for metrics in self.members:
            for r in read(metrics):
                base = metric_name(r.group, r.name, self.prefix)
                labels = tuple((snake(k), v) for k, v in r.tags)
                if (base, labels) in seen:
                    # two consumers with the same tags (kafka-python's default client_id is
                    # the same for every consumer): one series, and a warning once
                    if (base, labels) not in self._warned:
                        self._warned.add((base, labels))
                        log.warning("two registered consumers export %s%s: give each its own "
                                    "client_id; showing the first", base, dict(labels))
                    continue
                seen.add((base, labels))
                if r.cumulative:
                    family_name = base.removesuffix("_total")
                    family = families.get(family_name)
                    if family is None:
                        family = Metric(family_name, first_line(r.description, r.name),
                                        "counter")
                        families[family_name] = family
                    family.add_sample(f"{family_name}_total", dict(labels), r.value)
                else:
                    family = families.get(base)
                    if family is None:
                        family = Metric(base, first_line(r.description, r.name), "gauge")
                        families[base] = family
                    family.add_sample(base, dict(labels), finite_or_nan(r.value))
        yield from families.values()


_COLLECTORS: dict[int, tuple[CollectorRegistry, KafkaAssignorsCollector]] = {}
_LOCK = threading.Lock()


def register(
    target: object, registry: CollectorRegistry | None = None, *, prefix: str = PREFIX
) -> KafkaAssignorsCollector:
    """Export ``target``'s metrics (a kafka-python or aiokafka consumer with our assignors, a
    ``kafka_assignors.confluent.Consumer``, or a :class:`GroupMetrics`) from ``registry``
    (prometheus_client's default one if None).  Returns the registry's collector; calling
    it again for another consumer adds that consumer to the same collector."""
    metrics = group_metrics(target)
    registry = REGISTRY if registry is None else registry
    with _LOCK:
        entry = _COLLECTORS.get(id(registry))
        if entry is None or entry[0] is not registry:
            collector = KafkaAssignorsCollector(prefix)
            registry.register(collector)
            entry = _COLLECTORS[id(registry)] = (registry, collector)
        collector = entry[1]
    if collector.prefix != prefix:
        raise ValueError(f"this registry already exports with prefix {collector.prefix!r}")
    collector.members.add(metrics)
    return collector


def unregister(target: object, registry: CollectorRegistry | None = None) -> bool:
    """Stop exporting ``target``'s metrics; True when it was exported.  (A consumer that is
    garbage-collected stops being exported by itself.)"""
    metrics: GroupMetrics = group_metrics(target)
    registry = REGISTRY if registry is None else registry
    with _LOCK:
        entry = _COLLECTORS.get(id(registry))
    return entry is not None and entry[0] is registry and entry[1].members.remove(metrics)
