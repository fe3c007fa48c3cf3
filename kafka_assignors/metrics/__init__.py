"""Rebalance metrics with the Java consumer's names, and assignment quality, per consumer.

One :class:`GroupMetrics` per consumer holds them in a kafka-python ``kafka.metrics.Metrics``
registry: the consumer's own on kafka-python (so ``consumer.metrics()`` and any
``metric_reporters`` see them), a private one for the confluent bridge and aiokafka.
Adapters attach it to the consumer object users hold; :func:`metrics_of` finds it.

* ``consumer-coordinator-metrics`` (:data:`COORDINATOR_GROUP`): Java's KAFKA-8609 names and
  meanings (:mod:`.rebalance`): ``rebalance-latency-avg/max/total``, ``rebalance-total``,
  ``rebalance-rate-per-hour``, ``failed-rebalance-total``, ``failed-rebalance-rate-per-hour``,
  ``last-rebalance-seconds-ago``, ``partition-revoked/assigned/lost-latency-avg/max``.
* ``kafka-assignors-assignment-metrics`` (:data:`QUALITY_GROUP`): what the leader computed
  and how long each member's kept partitions paused (:mod:`.quality`).

Imports only kafka-python (2.x or 3.x), never Spark, Docker or an exporter library.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from kafka.metrics import MetricConfig, Metrics

from . import _registry
from ._registry import Binding, register
from .quality import LeaderFigures, QualitySensors
from .rebalance import ListenerKind, RebalanceSensors

#: Java's group for the rebalance metrics (kafka-python's ``<prefix>-coordinator-metrics``).
COORDINATOR_GROUP = "consumer-coordinator-metrics"
#: Our own documented group for assignment quality.
QUALITY_GROUP = "kafka-assignors-assignment-metrics"
#: The attribute every client binding sets on the consumer object users hold.
ATTRIBUTE = "_kafka_assignors_metrics"

_serial = itertools.count(1)


class GroupMetrics:
    """Every metric of one consumer, held in a kafka-python ``kafka.metrics.Metrics`` registry.

    Stats are kafka-python's port of Java's (Avg/Max over the sample window, Rate per hour,
    cumulative totals), so meanings match Java's. ``clock`` (seconds) times the events and
    dates every sample and reading; latencies are recorded in milliseconds as Java does.
    Thread-safe: kafka-python completes joins on its network thread.
    """

    def __init__(self, registry: Metrics | None = None, *,
                 tags: Mapping[str, str] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 coordinator_group: str = COORDINATOR_GROUP,
                 quality_group: str = QUALITY_GROUP) -> None:
        if registry is None:
            registry = Metrics(MetricConfig(tags=dict(tags or {})))
        self.registry: Metrics = registry
        self.clock = clock
        self.coordinator_group = coordinator_group
        self.quality_group = quality_group
        # sensor names are per registry: ours must not meet kafka-python's or another's
        prefix = f"kafka-assignors-{next(_serial)}."
        own_tags = dict(tags or {})
        self._rebalance = RebalanceSensors(registry, coordinator_group, own_tags, clock, prefix)
        self._quality = QualitySensors(registry, quality_group, own_tags, self._now_ms, prefix)

    def _now_ms(self) -> float:
        return self.clock() * 1000.0

    # --- Java's events --------------------------------------------------------------

    @property
    def rebalance_in_progress(self) -> bool:
        """A rebalance started and has not succeeded yet (failed round trips included)."""
        return self._rebalance.in_progress

    def rebalance_started(self) -> None:
        """A JoinGroup round trip starts (PREPARING_REBALANCE); a no-op if one is in progress."""
        self._rebalance.started()

    def rebalance_succeeded(self) -> None:
        """SyncGroup succeeded: latency since the start, +1 rebalance, last-rebalance time."""
        self._rebalance.succeeded()

    def rebalance_failed(self) -> None:
        """A JoinGroup/SyncGroup round trip failed: failed-rebalance-total +1 (the rebalance
        stays in progress, as Java keeps its start time for the retry)."""
        self._rebalance.failed()

    def listener(self, kind: ListenerKind) -> AbstractContextManager[None]:
        """Time one rebalance-listener call; recorded only if it returns normally."""
        return self._rebalance.listener(kind)

    # --- assignment quality ---------------------------------------------------------

    def record_leader(self, report: LeaderFigures) -> None:
        """The leader computed an assignment (call after each ``assign()``)."""
        self._quality.leader(report)

    def record_kept_pause(self, seconds: float) -> None:
        """Member: the longest pause of a partition it kept, for one rebalance."""
        self._quality.kept_pause(seconds)

    # --- reading ----------------------------------------------------------------------

    @property
    def metric_names(self) -> list[Any]:
        """The ``kafka.metrics.MetricName`` of every metric this object registered."""
        return self._rebalance.names + self._quality.names

    def values(self) -> dict[str, dict[str, float]]:
        """``{group: {name: value}}`` of this object's metrics, as ``KafkaConsumer.metrics()``."""
        out: dict[str, dict[str, float]] = {}
        metrics = self.registry.metrics
        for name in self.metric_names:
            metric = metrics.get(name)
            if metric is not None:
                out.setdefault(name.group, {})[name.name] = metric.value()
        return out


def metrics_of(consumer: object) -> GroupMetrics | None:
    """The :class:`GroupMetrics` a client binding attached to ``consumer`` (None if none).

    A kafka-python ``KafkaConsumer`` is also looked up through its coordinator.
    """
    found = getattr(consumer, ATTRIBUTE, None)
    if found is None:
        found = getattr(getattr(consumer, "_coordinator", None), ATTRIBUTE, None)
    return found if isinstance(found, GroupMetrics) else None


def attach(consumer: object, metrics: GroupMetrics) -> bool:
    """Attach ``metrics`` to ``consumer`` for :func:`metrics_of`; False if it cannot hold it."""
    try:
        setattr(consumer, ATTRIBUTE, metrics)
    except (AttributeError, TypeError):
        return False
    return True


def instrument(consumer: Any) -> GroupMetrics | None:
    """The rebalance metrics on ``consumer``, and nothing else of the runtime.

    For a plain ``kafka.KafkaConsumer`` (kafka-python 3) that should keep kafka-python's own
    rebalance behaviour: records Java's rebalance metrics and ours in the consumer's own
    registry (``consumer.metrics()``, ``metric_reporters``; ``metrics_of(consumer)``) by
    timing kafka-python's coordinator methods, which still run unchanged (the coordinator
    gets the runtime's class with the metrics feature alone; with ``patch_rejoin_hang``, in
    either order, the same class as the two in one). Also takes an
    ``aiokafka.AIOKafkaConsumer`` or ``kafka_assignors.aiokafka.AIOKafkaConsumer`` (before or
    after ``start()``). Idempotent; None when the consumer was built with
    ``metrics_enabled=False``. Raises ``RuntimeError`` naming what is missing if the client
    lacks a name the metrics rely on, and ``TypeError`` for another object.
    ``kafka_assignors.kafka_python.KafkaConsumer`` does this itself.

    Each client binding registers what it offers (:mod:`._registry`): this layer names no
    client.
    """
    binding = _registry.binding_for(consumer)
    if binding is None:
        raise TypeError(f"instrument() takes {_registry.described()}, "
                        f"not {type(consumer).__name__}")
    return binding.instrument(consumer)


__all__ = ["ATTRIBUTE", "COORDINATOR_GROUP", "QUALITY_GROUP", "Binding", "GroupMetrics",
           "LeaderFigures", "attach", "instrument", "metrics_of", "register"]
