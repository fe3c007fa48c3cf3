"""One demo phase: a consumer group under one strategy, scaled up, scaled down, one member killed.

Members 0 and 2 subscribe to both topics, members 1 and 3 to ``orders`` only
(unequal subscriptions).  Each member consumes at a bounded pace
(``max_poll_records`` per poll plus a processing pause), so a member given the
hot partitions falls behind and its lag shows it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from .live_metrics import GroupFigures, group_figures, member_reports
from .traffic import DemoTopics
from .watch import LiveView, Partition

log = logging.getLogger(__name__)

#: (label shown, strategy given to the member processes)
STRATEGIES: dict[str, str] = {
    "range": "range",
    "cooperative-balanced-sticky": "kafka_assignors:CooperativeBalancedStickyAssignor",
    "cooperative-load-aware": "kafka_assignors:CooperativeLoadAwareAssignor",
}
MEMBER_OPTIONS: dict[str, Any] = {
    "report_records": True,
    # the members' own rebalance metrics (kafka_assignors.metrics), for the view and report
    "report_metrics": True,
    "session_timeout_ms": 6_000,
    "heartbeat_interval_ms": 1_000,
    # the rebalance timeout: how long the broker waits for members to rejoin
    "max_poll_interval_ms": 15_000,
    "auto_offset_reset": "latest",
    "processing_delay_ms": 100,
    "consumer_config": {"max_poll_records": 15, "auto_commit_interval_ms": 1_000},
}


class DeadlineReached(Exception):
    """The demo's overall deadline came before the phase could finish."""


@dataclass
class PhaseResult:
    label: str
    group_id: str = ""
    strategy: str | None = None
    rebalances: int = 0
    moved: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the members' own rebalance metrics over the phase (None: none reported)
    metrics: GroupFigures | None = None


def _moves(before: Mapping[str, frozenset[Partition]], after: Mapping[str, Any]) -> int:
    owner = {tp: m for m, tps in before.items() for tp in tps}
    now = {tp: m for m, tps in after.items() for tp in tps}
    return sum(1 for tp, m in owner.items() if tp in now and now[tp] != m)


def run_phase(
    label: str,
    bootstrap: str,
    topics: DemoTopics,
    view: LiveView,
    baseline: Mapping[Partition, int],
    *,
    dwell: float,
    stable_timeout: float,
    out: TextIO,
    deadline: float | None = None,
) -> PhaseResult:
    """Run the whole phase; problems are recorded, not raised (the demo goes on).

    ``deadline`` (``time.monotonic()`` value) caps every wait; when it comes, the phase
    stops where it is and records why.
    """
    from ..embedded import GroupRunner
    from ..embedded.groups import GroupRunnerError

    result = PhaseResult(label)
    started = time.monotonic()
    group_id = f"demo-{label}-{uuid.uuid4().hex[:6]}"
    result.group_id = group_id

    def left() -> float:
        return float("inf") if deadline is None else deadline - time.monotonic()
    both, orders_only = tuple(topics.names), (topics.orders,)
    with GroupRunner(
        bootstrap,
        group_id,
        both,
        [STRATEGIES.get(label, label)],
        on_event=view.stats.on_event,
        **MEMBER_OPTIONS,
    ) as group:
        view.watch(label, group, baseline)
        previous: dict[str, frozenset[Partition]] = {}

        def settle(what: str) -> None:
            nonlocal previous
            if left() < 1.0:
                raise DeadlineReached(what)
            try:
                current = group.wait_stable(timeout=min(stable_timeout, left()))
            except (TimeoutError, GroupRunnerError) as exc:
                problem = f"{what}: {str(exc).splitlines()[0]}"
                result.problems.append(problem)
                view.step(f"warning: {problem}")
                current = group.assignments()
            result.rebalances += 1
            moved = _moves(previous, current)
            result.moved += moved
            result.strategy = group.protocol() or result.strategy
            counts = sorted(len(tps) for tps in current.values())
            view.step(f"{what}: stable, partitions per member {counts}, {moved} moved")
            previous = dict(current)
            time.sleep(max(0.0, min(dwell, left())))

        try:
            view.step(f"group {group_id}: 3 members (m0, m2 on both topics, m1 on orders only)")
            group.add_member(topics=both)
            group.add_member(topics=orders_only)
            group.add_member(topics=both)
            settle("start")
            view.step("scale up: m3 joins (orders only)")
            group.add_member(topics=orders_only)
            settle("scale up")
            view.step("scale down: m1 leaves cleanly")
            group.stop_member(1, timeout=max(1.0, min(20.0, left())))
            settle("scale down")
            view.step(
                "failure: m0 is killed (SIGKILL; the broker notices after the session timeout)"
            )
            group.kill_member(0)
            settle("kill")
        except DeadlineReached as exc:
            problem = f"{exc}: the demo's deadline (--max-time) came first; phase cut short"
            result.problems.append(problem)
            view.step(f"warning: {problem}")
        # (members report a changed figure within a second; settle() dwelt longer than that)
        result.metrics = group_figures(member_reports(group.members()))
        view.unwatch()
    result.seconds = time.monotonic() - started
    out.flush()
    return result


def summary_lines(results: list[PhaseResult], view: LiveView) -> list[str]:
    """The side-by-side table at the end of the demo."""
    head = (
        f"{'assignor':<30} {'rebalances':>10} {'moved':>6} {'spread avg':>10} "
        f"{'spread max':>10} {'msg/s imb.':>10} {'peak lag':>9}"
    )
    lines = ["", "summary (per assignor, over its whole phase)", head, "-" * len(head)]
    for r in results:
        f = view.figures.get(r.label)
        spreads = f.spreads if f else []
        imbs = f.rate_imbalances if f else []
        avg = f"{sum(spreads) / len(spreads):.2f}" if spreads else "-"
        top = str(max(spreads)) if spreads else "-"
        imb = f"{sum(imbs) / len(imbs):.2f}" if imbs else "-"
        lines.append(
            f"{r.strategy or r.label:<30} {r.rebalances:>10} {r.moved:>6} {avg:>10} {top:>10} "
            f"{imb:>10} {(f.peak_lag if f else 0):>9}"
        )
    lines.append(
        "spread = most minus fewest partitions per member; msg/s imb. = busiest member's "
        "rate / mean; moved = partitions that changed owner at the rebalances"
    )
    lines += metrics_lines(results)
    for r in results:
        for p in r.problems:
            lines.append(f"note [{r.label}]: {p}")
    return lines


def metrics_lines(results: list[PhaseResult]) -> list[str]:
    """The second table: what the consumers' own metrics (kafka_assignors.metrics) said."""
    head = (
        f"{'assignor':<30} {'rebalances':>10} {'failed':>6} {'lat. avg':>8} {'lat. max':>8} "
        f"{'moved':>6} {'spread':>6} {'topic':>6} {'assign ms':>9} {'kept pause':>10}"
    )
    lines = ["", "rebalance metrics (the consumers' own: consumer.metrics(), the exports)", head,
             "-" * len(head)]
    for r in results:
        f = r.metrics
        name = r.strategy or r.label
        if f is None:
            lines.append(f"{name:<30} {'none: this assignor reports no kafka-assignors metrics':>}")
            continue
        lines.append(
            f"{name:<30} {f.rebalances:>10} {f.failed:>6} {_fmt(f.latency_avg_ms):>8} "
            f"{_fmt(f.latency_max_ms):>8} {f.moved:>6} {_fmt(f.count_spread_last):>6} "
            f"{_fmt(f.topic_spread_last):>6} {_fmt(f.assignment_ms_max, 1):>9} "
            f"{_fmt(f.kept_pause_max_s, 2):>10}"
        )
    lines.append(
        "rebalances = most one member took part in; lat. = rebalance latency (ms, JoinGroup to "
        "SyncGroup); moved = partitions the leaders moved; spread/topic = the last "
        "assignment's; kept pause = longest a kept partition went unread (s)"
    )
    return lines


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
