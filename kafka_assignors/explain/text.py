"""Text that the classic and the consumer-protocol reports write alike."""

from __future__ import annotations

from collections.abc import Callable

from .model import GroupReport, MemberReport

Write = Callable[[str], object]


def write_holdings(member: MemberReport, w: Write) -> None:
    """The member's partition count and lag, then each topic's partitions with their lag."""
    w(f"    partitions {member.partitions}, lag {member.total_lag}\n")
    for topic, ps in member.assignment.items():
        lags = " ".join(f"{p}:{_lag(member.lag.get(f'{topic}-{p}'))}" for p in ps)
        w(f"      {topic}  {lags}\n")


def write_balance(report: GroupReport, w: Write) -> None:
    """The imbalance section and the notes that end every report."""
    w("\nimbalance\n")
    w(f"  partitions per member: max - min = {report.count_imbalance}\n")
    ratio = "-" if report.lag_imbalance is None else f"{report.lag_imbalance:.2f}"
    w(f"  lag: heaviest member / mean = {ratio}\n")
    w(f"  idle members {report.idle_members}, total lag {report.total_lag}\n")
    if report.unassigned:
        w(f"  unassigned partitions: {', '.join(report.unassigned)}\n")
    for note in report.notes:
        w(f"note: {note}\n")


def _lag(value: int | None) -> str:
    return "-" if value is None else str(value)
