"""The demo's pure parts: partitions moved between stable points, lag from positions, the view."""

from __future__ import annotations

from types import SimpleNamespace

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
