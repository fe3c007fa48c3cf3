"""OpenTelemetry export of a consumer's rebalance and assignment metrics (extra ``otel``).

One call::

    from kafka_assignors.metrics import otel
    otel.register(consumer)                 # the global MeterProvider, or meter_provider=...

Observable instruments whose callbacks read the consumer's metrics registry at each
collection: nothing is recorded twice.  Names follow the OpenTelemetry JMX metric
gatherer's for the Java consumer (``kafka.consumer.<attribute>``, label ``client-id``):
``kafka.consumer.rebalance-latency-avg``; our assignment-quality group is
``kafka.consumer.assignment.<name>``.  ``*-total`` metrics are observable counters
(cumulative), the rest observable gauges; a metric with no sample yet (a max over no
rebalance, a ``-last`` before the first) is not observed.  Needs only
``opentelemetry-api``; an SDK (or any other implementation) configured by the application
does the exporting.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from typing import Any

from opentelemetry import metrics as otel_metrics
from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

from . import COORDINATOR_GROUP, QUALITY_GROUP, GroupMetrics
from ._export import Members, first_line, group_metrics, read

__all__ = ["METER_NAME", "OtelExport", "instrument_name", "register", "unregister"]

#: The instrumentation scope of every instrument.
METER_NAME = "kafka-assignors"


def instrument_name(group: str, name: str) -> str:
    """``kafka.consumer.<name>`` for Java's group, ``kafka.consumer.assignment.<name>`` for
    ours, ``kafka.consumer.<group>.<name>`` for any other."""
    if group == COORDINATOR_GROUP:
        return f"kafka.consumer.{name}"
    if group == QUALITY_GROUP:
        return f"kafka.consumer.assignment.{name}"
    return f"kafka.consumer.{group}.{name}"


def _unit(name: str) -> str:
    # Java's rebalance/listener latencies and kafka-python's join/sync timings are in ms
    if "seconds" in name:
        return "s"
    if "latency" in name or "-time-" in name:
        return "ms"
    return ""


class OtelExport:
    """The instruments of one meter provider and the consumers they read (held weakly)."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.members = Members()
        self._instruments: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def add(self, metrics: GroupMetrics) -> None:
        """Read ``metrics`` from now on; instruments for the names it has that are new."""
        self.members.add(metrics)
        with self._lock:
            for r in read(metrics):
                key = (r.group, r.name)
                if key in self._instruments:
                    continue
                create = (
                    self.meter.create_observable_counter
                    if r.cumulative
                    else self.meter.create_observable_gauge
                )
                self._instruments[key] = create(
                    instrument_name(r.group, r.name),
                    callbacks=[self._callback(r.group, r.name)],
                    unit=_unit(r.name),
                    description=first_line(r.description, r.name),
                )

    def _callback(self, group: str, name: str) -> Any:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            out: list[Observation] = []
            seen: set[tuple[tuple[str, str], ...]] = set()
            for metrics in self.members:
                for r in read(metrics):
                    if r.name != name or r.group != group or r.tags in seen:
                        continue  # (same tags on two consumers: the first one)
                    seen.add(r.tags)
                    if math.isfinite(r.value):  # (no sample yet: no observation, no point)
                        out.append(Observation(r.value, dict(r.tags)))
            return out

        return observe


_EXPORTS: dict[int, tuple[object, OtelExport]] = {}
_LOCK = threading.Lock()


def register(target: object, meter_provider: MeterProvider | None = None) -> OtelExport:
    """Export ``target``'s metrics (a kafka-python or aiokafka consumer with our assignors, a
    ``kafka_assignors.confluent.Consumer``, or a :class:`GroupMetrics`) through
    ``meter_provider`` (the global one if None).  Returns that provider's export; calling
    it again for another consumer adds that consumer to the same instruments."""
    metrics = group_metrics(target)
    provider = otel_metrics.get_meter_provider() if meter_provider is None else meter_provider
    with _LOCK:
        entry = _EXPORTS.get(id(provider))
        if entry is None or entry[0] is not provider:
            from .._version import __version__

            entry = _EXPORTS[id(provider)] = (
                provider, OtelExport(provider.get_meter(METER_NAME, __version__))
            )
    export = entry[1]
    export.add(metrics)
    return export


def unregister(target: object, meter_provider: MeterProvider | None = None) -> bool:
    """Stop exporting ``target``'s metrics; True when it was exported."""
    metrics = group_metrics(target)
    provider = otel_metrics.get_meter_provider() if meter_provider is None else meter_provider
    with _LOCK:
        entry = _EXPORTS.get(id(provider))
    return entry is not None and entry[0] is provider and entry[1].members.remove(metrics)
