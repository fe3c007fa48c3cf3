"""Assignment quality, per rebalance: what the leader computed and what each member kept.

Our own group (``kafka-assignors-assignment-metrics``). ``-last`` metrics are gauges of the
last rebalance (NaN before the first); ``-total`` ones count since the consumer started;
``-max`` ones are Java-style windowed maxima (over ``metrics_num_samples`` windows of
``metrics_sample_window_ms``: -inf when nothing was recorded in them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kafka.metrics.stats import Max, Total

from ._stats import CumulativeCount, Last, OwnClock

DESCRIPTIONS = {
    # leader: recorded by the member that computed the assignment, after each assign()
    "assignments-total": "Assignments this member computed as the group's leader",
    "partitions-moved-last": "Partitions the last assignment gave to a member other than the "
                             "one that owned them",
    "partitions-moved-total": "Partitions moved to another owner, summed over the "
                              "assignments this member computed",
    "partitions-withheld-last": "Partitions the last (cooperative) assignment left "
                                "unassigned until their owner revoked them: the second "
                                "round hands them over",
    "count-spread-last": "Most minus fewest partitions per member in the last assignment's "
                         "target",
    "topic-spread-last": "Worst per-topic spread (most minus fewest of one topic's "
                         "partitions among its subscribers) in the last assignment's target",
    "assignment-seconds-last": "Seconds the assignor took for the last assignment",
    "assignment-seconds-max": "Longest assignor run in the sample window (seconds)",
    # member: recorded by every member after each rebalance in which it kept partitions
    "kept-partition-pause-seconds-last": "Longest time, in the last rebalance, that the "
                                         "partitions this member kept could not be read",
    "kept-partition-pause-seconds-max": "Longest kept-partition pause in the sample window "
                                        "(seconds)",
}


class LeaderFigures(Protocol):
    """What :meth:`QualitySensors.leader` reads (``protocol.leader.LeaderReport``)."""

    moved: int
    pending_second_round: int
    count_spread: int
    topic_spread: int
    seconds: float


class QualitySensors:
    """The sensors of the assignment-quality group."""

    def __init__(self, registry: Any, group: str, tags: dict[str, str],
                 clock_ms: Callable[[], float], sensor_prefix: str) -> None:
        self._clock_ms = clock_ms
        self.names: list[Any] = []

        def sensor(metric: str, *stats: tuple[str, Any]) -> Any:
            s = registry.sensor(sensor_prefix + metric)
            for metric_name, stat in stats:
                n = registry.metric_name(metric_name, group, DESCRIPTIONS[metric_name], tags)
                self.names.append(n)
                s.add(n, OwnClock(stat, clock_ms))
            return s

        self._assignments = sensor("assignments", ("assignments-total", CumulativeCount()))
        self._moved = sensor("partitions-moved", ("partitions-moved-last", Last()),
                             ("partitions-moved-total", Total()))
        self._withheld = sensor("partitions-withheld", ("partitions-withheld-last", Last()))
        self._count_spread = sensor("count-spread", ("count-spread-last", Last()))
        self._topic_spread = sensor("topic-spread", ("topic-spread-last", Last()))
        self._seconds = sensor("assignment-seconds", ("assignment-seconds-last", Last()),
                               ("assignment-seconds-max", Max()))
        self._pause = sensor("kept-partition-pause", ("kept-partition-pause-seconds-last", Last()),
                             ("kept-partition-pause-seconds-max", Max()))

    def leader(self, report: LeaderFigures) -> None:
        now = self._clock_ms()
        self._moved.record(float(report.moved), now)
        self._withheld.record(float(report.pending_second_round), now)
        self._count_spread.record(float(report.count_spread), now)
        self._topic_spread.record(float(report.topic_spread), now)
        self._seconds.record(float(report.seconds), now)
        self._assignments.record(1.0, now)  # last: a reader that sees the count sees the rest

    def kept_pause(self, seconds: float) -> None:
        self._pause.record(max(0.0, float(seconds)), self._clock_ms())
