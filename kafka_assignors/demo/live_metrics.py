"""The demo's rebalance figures, from the members' own metrics (``metrics`` events).

Each member process reports ``kafka_assignors.metrics.metrics_of(consumer).values()``
(Java's ``consumer-coordinator-metrics`` and our assignment-quality group) when a figure
changes; this folds one group's members into the numbers the live view, the summary and
the report show.  Members that left or were killed keep their last report, so counts
cover the whole phase.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

COORDINATOR = "consumer-coordinator-metrics"
QUALITY = "kafka-assignors-assignment-metrics"

Values = Mapping[str, Mapping[str, float | None]]


@dataclass
class GroupFigures:
    """Rebalance figures of one group, over its members' metrics."""

    #: members that reported metrics (members of kafka-python's own strategies have none)
    members: int
    #: most successful rebalances one member took part in (``rebalance-total``)
    rebalances: int
    #: failed JoinGroup/SyncGroup round trips, all members (``failed-rebalance-total``)
    failed: int
    #: mean and worst rebalance latency over every member's rebalances (ms)
    latency_avg_ms: float | None
    latency_max_ms: float | None
    #: assignments computed by the leaders, and partitions they moved (summed)
    assignments: int
    moved: int
    #: the newest assignment's figures (the last leader's ``-last`` gauges)
    withheld_last: int | None
    count_spread_last: int | None
    topic_spread_last: int | None
    #: slowest assignor run (ms) and longest pause of a kept partition (s), any member
    assignment_ms_max: float | None
    kept_pause_max_s: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _num(values: Values, group: str, name: str) -> float | None:
    value = values.get(group, {}).get(name)
    return None if value is None else float(value)


def _max(xs: Iterable[float | None]) -> float | None:
    present = [x for x in xs if x is not None]
    return max(present) if present else None


def _int(x: float | None) -> int | None:
    return None if x is None else round(x)


def group_figures(reports: Iterable[tuple[float, Values]]) -> GroupFigures | None:
    """Fold members' last ``metrics`` reports, ``(time, values)`` each, into one group's
    figures; None when no member reported any."""
    members = [(at, v) for at, v in reports if v]
    if not members:
        return None
    rebalances = [_num(v, COORDINATOR, "rebalance-total") or 0.0 for _, v in members]
    latency_total = sum(_num(v, COORDINATOR, "rebalance-latency-total") or 0.0
                        for _, v in members)
    # the newest assignment's gauges: the member that computed one most recently
    leaders = [(at, v) for at, v in members if (_num(v, QUALITY, "assignments-total") or 0) > 0]
    newest = max(leaders, key=lambda item: item[0])[1] if leaders else {}
    seconds = _max(_max((_num(v, QUALITY, "assignment-seconds-max"),
                         _num(v, QUALITY, "assignment-seconds-last"))) for _, v in members)
    return GroupFigures(
        members=len(members),
        rebalances=round(max(rebalances)),
        failed=round(sum(_num(v, COORDINATOR, "failed-rebalance-total") or 0.0
                         for _, v in members)),
        latency_avg_ms=latency_total / sum(rebalances) if sum(rebalances) else None,
        latency_max_ms=_max(_num(v, COORDINATOR, "rebalance-latency-max") for _, v in members),
        assignments=round(sum(_num(v, QUALITY, "assignments-total") or 0.0 for _, v in members)),
        moved=round(sum(_num(v, QUALITY, "partitions-moved-total") or 0.0 for _, v in members)),
        withheld_last=_int(_num(newest, QUALITY, "partitions-withheld-last")),
        count_spread_last=_int(_num(newest, QUALITY, "count-spread-last")),
        topic_spread_last=_int(_num(newest, QUALITY, "topic-spread-last")),
        assignment_ms_max=None if seconds is None else seconds * 1000,
        kept_pause_max_s=_max(
            _max((_num(v, QUALITY, "kept-partition-pause-seconds-max"),
                  _num(v, QUALITY, "kept-partition-pause-seconds-last"))) for _, v in members
        ),
    )


def member_reports(views: Iterable[Any]) -> list[tuple[float, Values]]:
    """``(time of the last metrics event, its values)`` of every member view that has one."""
    out = []
    for view in views:
        metrics = getattr(view, "metrics", None)
        if not metrics:
            continue
        at = max((float(e.get("mono", 0.0)) for e in view.events
                  if e.get("event") == "metrics"), default=0.0)
        out.append((at, metrics))
    return out


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _opt(value: object) -> str:
    return "-" if value is None else str(value)


def render_line(f: GroupFigures | None) -> str:
    """One line of the live view."""
    if f is None:
        return ("  metrics: none reported yet (members of kafka-python's own strategies have "
                "none)")
    pause = "-" if f.kept_pause_max_s is None else f"{f.kept_pause_max_s:.2f}s"
    return (
        f"  metrics: rebalances={f.rebalances} failed={f.failed} "
        f"latency avg/max={_ms(f.latency_avg_ms)}/{_ms(f.latency_max_ms)}ms "
        f"moved={f.moved} withheld={_opt(f.withheld_last)} spread={_opt(f.count_spread_last)} "
        f"topic-spread={_opt(f.topic_spread_last)} kept-pause max={pause}"
    )
