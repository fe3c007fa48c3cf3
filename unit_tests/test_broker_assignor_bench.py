"""benchmarks/broker_assignor.py's forks: each row the median over the JVMs, the quality the
same in every JVM (the assignors are deterministic), and each JVM's ratio kept."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from benchmarks.broker_assignor import combine


def _row(ours_ms: float, uniform_ms: float, *, moved: int = 0) -> dict[str, Any]:
    def side(ms: float) -> dict[str, Any]:
        return {"ms": ms, "cpu_ms": ms, "rounds": 7, "spread": 1, "topic_spread": 1,
                "load_squares": 100, "moved": moved, "fewest_moves": 0}

    return {"scenario": "few-1000", "event": "fresh", "path": "p", "read_floor_ms": ours_ms / 10,
            "balanced-sticky": side(ours_ms), "uniform": side(uniform_ms)}


def test_each_row_is_the_median_over_the_forks() -> None:
    forks = [[_row(12.0, 7.0)], [_row(8.0, 12.0)], [_row(9.0, 10.0)]]
    (row,) = combine(forks)
    assert row["balanced-sticky"]["ms"] == 9.0
    assert row["uniform"]["ms"] == 10.0
    assert row["ratio"] == pytest.approx(0.9)
    assert row["balanced-sticky"]["rounds"] == 21
    assert row["fork_ratios"] == [round(12 / 7, 3), round(8 / 12, 3), 0.9]
    assert row["group"] == "1-5 of 50 topics, 1,000 members"


def test_a_fork_with_another_quality_is_an_error() -> None:
    other = _row(9.0, 10.0, moved=3)
    with pytest.raises(SystemExit, match="moved"):
        combine([[_row(9.0, 10.0)], [other]])


def test_forks_must_measure_the_same_rows() -> None:
    other = copy.deepcopy(_row(9.0, 10.0))
    other["event"] = "leave"
    with pytest.raises(SystemExit, match="different rows"):
        combine([[_row(9.0, 10.0)], [other]])
