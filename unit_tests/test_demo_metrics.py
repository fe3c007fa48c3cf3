"""The demo's rebalance metrics: members' reports folded per group, the view line, the
summary table, the report's section, and what a member process emits."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kafka_assignors.demo.live_metrics import group_figures, member_reports, render_line
from kafka_assignors.demo.phases import PhaseResult, metrics_lines
from kafka_assignors.embedded._member import MetricsReporter
from kafka_assignors.embedded.events import MemberConfig, MemberView
from kafka_assignors.metrics import GroupMetrics, attach
from kafka_assignors.pipeline.report_live import section_live

C, Q = "consumer-coordinator-metrics", "kafka-assignors-assignment-metrics"


def _values(rebalances: float, latency_total: float, latency_max: float, *,
            assignments: float = 0, moved: float = 0, spread: float | None = None,
            pause: float | None = None) -> dict[str, dict[str, float | None]]:
    return {
        C: {"rebalance-total": rebalances, "rebalance-latency-total": latency_total,
            "rebalance-latency-max": latency_max, "failed-rebalance-total": 1.0},
        Q: {"assignments-total": assignments, "partitions-moved-total": moved,
            "count-spread-last": spread, "topic-spread-last": spread,
            "partitions-withheld-last": 0.0 if spread is not None else None,
            "assignment-seconds-max": 0.002 if assignments else None,
            "kept-partition-pause-seconds-max": pause},
    }


def test_members_fold_into_group_figures() -> None:
    """Rebalances are the most one member saw, latency the mean over all members'
    rebalances, moved the leaders' sum, spreads the newest leader's, pause the worst."""
    figures = group_figures([
        (10.0, _values(4, 400, 150, assignments=3, moved=5, spread=2, pause=0.0)),
        (20.0, _values(2, 100, 60, assignments=1, moved=1, spread=0, pause=0.25)),
        (15.0, _values(1, 50, 50)),
    ])
    assert figures is not None
    assert (figures.members, figures.rebalances, figures.failed) == (3, 4, 3)
    assert figures.latency_avg_ms == 550 / 7 and figures.latency_max_ms == 150
    assert (figures.assignments, figures.moved) == (4, 6)
    assert (figures.count_spread_last, figures.topic_spread_last) == (0, 0)  # newest leader
    assert figures.kept_pause_max_s == 0.25 and figures.assignment_ms_max == 2.0
    assert "rebalances=4 failed=3" in render_line(figures)
    assert "kept-pause max=0.25s" in render_line(figures)
    assert group_figures([]) is None and "none reported" in render_line(None)


def test_member_views_keep_their_last_metrics_event() -> None:
    """A view applies `metrics` events; member_reports pairs each with its time."""
    cfg = MemberConfig("m0", "b:9092", "g", ("t",))
    view = MemberView(0, "m0", cfg)
    view.apply({"event": "metrics", "mono": 3.0, "values": _values(1, 10, 10)})
    view.apply({"event": "metrics", "mono": 5.0, "values": _values(2, 30, 20)})
    silent = MemberView(1, "m1", cfg)
    reports = member_reports([view, silent])
    assert reports == [(5.0, _values(2, 30, 20))]


def test_summary_and_report_show_the_figures_or_say_why_not(tmp_path: Path) -> None:
    """The demo's second table and the report's section list each phase; a phase whose
    assignor reports nothing says so."""
    ours = PhaseResult("cooperative-balanced-sticky", strategy="cooperative-balanced-sticky")
    ours.metrics = group_figures([(1.0, _values(3, 300, 120, assignments=3, moved=4,
                                                spread=1, pause=0.0))])
    theirs = PhaseResult("range", strategy="range")
    lines = metrics_lines([theirs, ours])
    assert "none: this assignor reports no kafka-assignors metrics" in lines[4]
    assert lines[5].split()[:4] == ["cooperative-balanced-sticky", "3", "1", "100"]
    data = {"source": "test", "groups": [
        {"label": "range", "strategy": "range", "metrics": None},
        {"label": "c", "strategy": "cooperative-balanced-sticky",
         "metrics": ours.metrics.to_json() if ours.metrics else None},
    ]}
    page = section_live(json.loads(json.dumps(data)))
    assert "this assignor is not ours" in page and "<td>100</td>" in page


def test_the_report_has_a_live_section_when_given_the_file(tmp_path: Path) -> None:
    """build_report with a live metrics file adds the section and names it in the contents."""
    from kafka_assignors.pipeline.report import build_report

    live = tmp_path / "live_metrics.json"
    live.write_text(json.dumps({"source": "test", "groups": [
        {"label": "x", "strategy": "balanced-sticky",
         "metrics": group_figures([(1.0, _values(2, 20, 15))]).to_json()}]}))  # type: ignore[union-attr]
    report = build_report(tmp_path / "out", live_path=live)
    assert ("live", "Live groups: the consumers' own rebalance metrics") in report.sections
    page = report.html.read_text()
    assert '<a href="#live">' in page and '<section id="live">' in page


class _Emitter:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> None:
        self.events.append({"event": event, **fields})


def test_a_member_emits_its_metrics_when_a_rebalance_figure_changes() -> None:
    """The first report goes out; an unchanged one does not; a new rebalance does; values
    that are not finite travel as null; a consumer without metrics emits nothing."""
    now = [100.0]
    gm = GroupMetrics(tags={"client-id": "m0"}, clock=lambda: now[0])
    consumer = SimpleNamespace()
    attach(consumer, gm)
    emitter = _Emitter()
    reporter = MetricsReporter(consumer, emitter, every=0.0)  # type: ignore[arg-type]
    reporter.maybe_emit()
    reporter.maybe_emit()
    assert len(emitter.events) == 1
    first = emitter.events[0]["values"]
    assert first[C]["rebalance-total"] == 0 and first[C]["rebalance-latency-max"] is None
    json.dumps(first, allow_nan=False)
    gm.rebalance_started()
    now[0] += 0.5
    gm.rebalance_succeeded()
    reporter.maybe_emit()
    assert emitter.events[-1]["values"][C]["rebalance-total"] == 1
    assert emitter.events[-1]["values"][C]["rebalance-latency-max"] == 500
    quiet = _Emitter()
    MetricsReporter(SimpleNamespace(), quiet).maybe_emit(force=True)  # type: ignore[arg-type]
    assert quiet.events == []
