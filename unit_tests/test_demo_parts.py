"""The demo's pure parts: partitions moved between stable points, lag from positions, the view."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_assignors.demo.phases import _moves
from kafka_assignors.demo.watch import Snapshot, Stats, render


def test_moves_count_partitions_whose_owner_changed() -> None:
    """A partition counts once when its owner changes; a departed owner's partitions count too."""
    before = {"m0": frozenset({("t", 0), ("t", 1)}), "m1": frozenset({("t", 2)})}
    after = {"m0": frozenset({("t", 0)}), "m2": frozenset({("t", 1), ("t", 2)})}
    assert _moves(before, after) == 2
    assert _moves({}, after) == 0


def test_lag_uses_the_newest_position_or_the_phase_start() -> None:
    """Lag is end minus max(consumed position, baseline), never negative."""
    stats = Stats()
    view = SimpleNamespace(name="m0")
    stats.on_event(view, {"event": "record", "topic": "t", "partition": 0, "offset": 9})
    stats.on_event(view, {"event": "state"})
    lag = stats.lag({("t", 0): 15, ("t", 1): 7, ("t", 2): 3}, {("t", 1): 5, ("t", 2): 9})
    assert lag == {("t", 0): 5, ("t", 1): 2, ("t", 2): 0}
    assert stats.rate("m0") > 0 and stats.rate("nobody") == 0


def test_render_names_the_strategy_and_each_member() -> None:
    """The view's block: one group line with the figures, one line per member."""
    snap = Snapshot("range", "range", 4, [("m0", 3, 12.5, 7, "STABLE")], 1, 1.5, 7)
    lines = render(snap)
    assert lines[0].startswith("group [range] strategy=range generation=4")
    assert "spread=1" in lines[0] and "lag=7" in lines[0]
    assert lines[1].split() == ["member", "m0", "partitions=3", "msg/s=", "12.5", "lag=7",
                                "STABLE"]


class _Fake:
    """Stands in for the producer, the end offsets reader and the live view."""

    sent = 0
    figures: dict[str, object] = {}

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.stats = SimpleNamespace(on_event=None)

    def __getattr__(self, name: str) -> object:
        return lambda *a, **k: {}


def _run_demo_with(
    mp: pytest.MonkeyPatch, problems: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, list[str]]:
    """Run demo's body with the phases, broker and Kafka calls replaced; returns (exit code,
    stderr, groups asked to be deleted)."""
    import argparse
    import time

    from kafka_assignors.demo import _run_demo, phases, traffic, watch

    topics = traffic.DemoTopics("demo-orders-x", "demo-payments-x", {"demo-orders-x": 8})
    deleted: list[str] = []

    def run_phase(label: str, *args: object, **kwargs: object) -> phases.PhaseResult:
        result = phases.PhaseResult(label, group_id=f"demo-{label}-1")
        result.problems.extend(problems)
        return result

    def delete_demo_groups(bootstrap: str, g: list[str]) -> list[str]:
        deleted.extend(g)
        return []

    mp.setattr(phases, "run_phase", run_phase)
    mp.setattr(traffic, "create_demo_topics", lambda bootstrap: topics)
    mp.setattr(traffic, "delete_demo_topics", lambda bootstrap, t: None)
    mp.setattr(traffic, "delete_demo_groups", delete_demo_groups)
    mp.setattr(traffic, "Producer", _Fake)
    for name in ("EndOffsets", "LiveView", "Stats"):
        mp.setattr(watch, name, _Fake)
    args = argparse.Namespace(strategies=None, short=True, dwell=0.0, timeout=1.0, rate=1.0,
                              no_report=True, keep=False)
    code = _run_demo(args, "b:9092", time.monotonic() + 60)
    err = capsys.readouterr().err
    return code, err, deleted


def test_demo_fails_when_a_rebalance_did_not_settle(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A phase whose group never became stable makes the demo exit non-zero, saying which."""
    code, err, deleted = _run_demo_with(monkeypatch, ["scale up: timed out after 1 s"], capsys)
    assert code == 1
    assert "2 rebalance(s) did not reach a stable group" in err
    assert "[range] scale up: timed out" in err
    assert deleted == ["demo-range-1", "demo-cooperative-balanced-sticky-1"]


def test_demo_succeeds_and_deletes_its_groups(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without problems the exit code is 0 and every phase's group is deleted."""
    code, err, deleted = _run_demo_with(monkeypatch, [], capsys)
    assert code == 0 and "did not reach" not in err
    assert deleted == ["demo-range-1", "demo-cooperative-balanced-sticky-1"]
