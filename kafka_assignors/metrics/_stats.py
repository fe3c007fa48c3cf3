"""Small additions to kafka-python's ``kafka.metrics`` stats (present in 2.x and 3.x).

kafka-python's sensors and metrics read their own clock when none is passed (wall time in
2.x, ``time.monotonic`` in 3.x); ours record and measure on the clock a
:class:`~kafka_assignors.metrics.GroupMetrics` was given, so windows, rates and
"seconds ago" stay consistent whichever kafka-python runs (and tests can use a fake clock).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kafka.metrics.measurable import AbstractMeasurable
from kafka.metrics.measurable_stat import AbstractMeasurableStat


class OwnClock(AbstractMeasurableStat):  # type: ignore[misc]
    """A kafka-python stat measured at our clock's ``now``, whatever time the caller passes."""

    def __init__(self, stat: Any, clock_ms: Callable[[], float]) -> None:
        self._stat = stat
        self._clock_ms = clock_ms

    def record(self, config: Any, value: float, time_ms: float) -> None:
        self._stat.record(config, value, time_ms)

    def measure(self, config: Any, now: float) -> float:
        return float(self._stat.measure(config, self._clock_ms()))


class CumulativeCount(AbstractMeasurableStat):  # type: ignore[misc]
    """How many values were ever recorded (Java's ``CumulativeCount``; kafka-python's
    ``Count`` is windowed)."""

    def __init__(self) -> None:
        self._count = 0.0

    def record(self, config: Any, value: float, time_ms: float) -> None:
        self._count += 1.0

    def measure(self, config: Any, now: float) -> float:
        return self._count


class Last(AbstractMeasurableStat):  # type: ignore[misc]
    """The last value recorded; NaN before any (a gauge of the last rebalance)."""

    def __init__(self) -> None:
        self._value = math.nan

    def record(self, config: Any, value: float, time_ms: float) -> None:
        self._value = float(value)

    def measure(self, config: Any, now: float) -> float:
        return self._value


class Measured(AbstractMeasurable):  # type: ignore[misc]
    """A value computed when read, at our clock's ``now`` (milliseconds)."""

    def __init__(self, fn: Callable[[float], float], clock_ms: Callable[[], float]) -> None:
        self._fn = fn
        self._clock_ms = clock_ms

    def measure(self, config: Any, now: float) -> float:
        return float(self._fn(self._clock_ms()))
