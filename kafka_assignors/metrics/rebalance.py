"""The Java consumer's rebalance metrics (KAFKA-8609), on kafka-python's ``kafka.metrics``.

Apache Kafka's ``AbstractCoordinator`` / ``ConsumerCoordinator`` (2.4 to 4.x, classic
protocol) measure, and these record on the same events:

* a rebalance starts when a JoinGroup round trip is started (``initiateJoinGroup``:
  PREPARING_REBALANCE) and none is in progress: a round trip that failed leaves the start
  where it was, so the retries count towards the same rebalance's latency. The
  ``on_partitions_revoked`` step before the JoinGroup is not part of it.
* it succeeds when SyncGroup succeeds: ``rebalance-latency`` records the milliseconds
  since its start (avg/max over the sample window, total, count, rate per hour), and the
  end time feeds ``last-rebalance-seconds-ago`` (whole seconds, -1 before the first).
* every JoinGroup/SyncGroup round trip that fails (an error response, a lost connection,
  the leader's assignor raising) counts once in ``failed-rebalance-total`` and its rate.
* ``partition-revoked/assigned/lost-latency`` time each call of the application's
  rebalance listener and record it when the listener returns normally (not when it raises).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from kafka.metrics.stats import Avg, Count, Max, Rate, Total
from kafka.metrics.stats.rate import TimeUnit

from ._stats import CumulativeCount, Measured, OwnClock

ListenerKind = Literal["revoked", "assigned", "lost"]
LISTENER_KINDS: tuple[ListenerKind, ...] = ("revoked", "assigned", "lost")

#: name -> (description) of every metric this module registers, in Java's words.
DESCRIPTIONS = {
    "rebalance-latency-avg": "The average time taken for a group to complete a successful "
                             "rebalance, which may be composed of several failed re-trials "
                             "until it succeeded (ms)",
    "rebalance-latency-max": "The max time taken for a group to complete a successful "
                             "rebalance, which may be composed of several failed re-trials "
                             "until it succeeded (ms)",
    "rebalance-latency-total": "The total number of milliseconds this consumer has spent in "
                               "successful rebalances since creation",
    "rebalance-total": "The total number of successful rebalance events, each event is "
                       "composed of several failed re-trials until it succeeded",
    "rebalance-rate-per-hour": "The number of successful rebalance events per hour, each "
                               "event is composed of several failed re-trials until it "
                               "succeeded",
    "failed-rebalance-total": "The total number of failed rebalance events",
    "failed-rebalance-rate-per-hour": "The number of failed rebalance events per hour",
    "last-rebalance-seconds-ago": "The number of seconds since the last successful rebalance "
                                  "event (-1 before the first)",
    **{f"partition-{kind}-latency-{stat}":
       f"The {'average' if stat == 'avg' else 'max'} time taken for a "
       f"partition-{kind} rebalance listener callback (ms)"
       for kind in LISTENER_KINDS for stat in ("avg", "max")},
}


class RebalanceSensors:
    """The sensors of ``consumer-coordinator-metrics`` and the rebalance state they need."""

    def __init__(self, registry: Any, group: str, tags: dict[str, str],
                 clock: Callable[[], float], sensor_prefix: str) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._start_ms: float | None = None
        self._end_ms: float | None = None
        self.names: list[Any] = []

        def name(metric: str) -> Any:
            n = registry.metric_name(metric, group, DESCRIPTIONS[metric], tags)
            self.names.append(n)
            return n

        def own(stat: Any) -> OwnClock:
            return OwnClock(stat, self._now_ms)

        self._rebalance = registry.sensor(sensor_prefix + "rebalance-latency")
        self._rebalance.add(name("rebalance-latency-avg"), own(Avg()))
        self._rebalance.add(name("rebalance-latency-max"), own(Max()))
        self._rebalance.add(name("rebalance-latency-total"), own(Total()))
        self._rebalance.add(name("rebalance-total"), own(CumulativeCount()))
        self._rebalance.add(name("rebalance-rate-per-hour"),
                            own(Rate(TimeUnit.HOURS, Count())))
        self._failed = registry.sensor(sensor_prefix + "failed-rebalance")
        self._failed.add(name("failed-rebalance-total"), own(Total()))
        self._failed.add(name("failed-rebalance-rate-per-hour"),
                         own(Rate(TimeUnit.HOURS, Count())))
        registry.add_metric(name("last-rebalance-seconds-ago"),
                            Measured(self._seconds_ago, self._now_ms))
        self._listeners = {}
        for kind in LISTENER_KINDS:
            sensor = registry.sensor(f"{sensor_prefix}partition-{kind}-latency")
            sensor.add(name(f"partition-{kind}-latency-avg"), own(Avg()))
            sensor.add(name(f"partition-{kind}-latency-max"), own(Max()))
            self._listeners[kind] = sensor

    def _now_ms(self) -> float:
        return self._clock() * 1000.0

    def _seconds_ago(self, now_ms: float) -> float:
        end = self._end_ms
        if end is None:
            return -1.0
        return float(int((now_ms - end) // 1000))  # Java: TimeUnit.SECONDS.convert truncates

    @property
    def in_progress(self) -> bool:
        return self._start_ms is not None

    def started(self) -> None:
        with self._lock:
            if self._start_ms is None:
                self._start_ms = self._now_ms()

    def succeeded(self) -> None:
        with self._lock:
            now = self._now_ms()
            start = self._start_ms if self._start_ms is not None else now
            self._start_ms = None
            self._end_ms = now
            self._rebalance.record(max(0.0, now - start), now)

    def failed(self) -> None:
        now = self._now_ms()
        self._failed.record(1.0, now)

    @contextmanager
    def listener(self, kind: ListenerKind) -> Iterator[None]:
        sensor = self._listeners[kind]
        start = self._now_ms()
        yield  # an exception skips the record, as Java's invokePartitions* do
        now = self._now_ms()
        sensor.record(max(0.0, now - start), now)
