"""Figures per assignor from evaluate's rows, and the plain-language recommendation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Two assignors whose mean load imbalance (busiest / mean) is within this fraction of each
#: other balance equally well: below it, which partitions happen to be hot decides, not the
#: assignor, and fewer partitions moved is worth more.
BALANCE_TIE = 0.05


@dataclass(frozen=True, slots=True)
class AssignorFigures:
    assignor: str
    scenarios: int
    steps: int
    failures: int
    first_error: str | None
    load_imbalance: float
    worst_load_imbalance: float
    count_imbalance: float
    moved: float
    moved_from_stayers: float
    rounds: float
    rack_locality: float | None
    copartition_violations: float
    idle_members: float
    assign_ms: float
    #: mean and worst per-topic spread (most minus fewest of one topic per subscriber)
    topic_spread: float = float("nan")
    worst_topic_spread: float = float("nan")


def per_assignor(steps: Any) -> list[AssignorFigures]:
    """Summaries from a pandas DataFrame of evaluate rows (movement over rebalances after
    the first, since the first assignment moves nothing)."""
    out = []
    for name, rows in steps.groupby("assignor", sort=True):
        ok = rows[rows["error"].isna()]
        later = ok[ok["step"] > 0]
        errors = rows["error"].dropna()
        racks = ok["rack_locality"].dropna()
        out.append(
            AssignorFigures(
                assignor=str(name),
                scenarios=int(rows["scenario"].nunique()),
                steps=len(rows),
                failures=len(errors),
                first_error=str(errors.iloc[0]) if len(errors) else None,
                load_imbalance=_mean(ok["load_imbalance"]),
                worst_load_imbalance=float(ok["load_imbalance"].max()) if len(ok) else float("nan"),
                count_imbalance=_mean(ok["count_imbalance"]),
                moved=_mean(later["moved"]),
                moved_from_stayers=_mean(later["moved_from_stayers"]),
                rounds=_mean(later["rounds"]),
                rack_locality=float(racks.mean()) if len(racks) else None,
                copartition_violations=_mean(ok["copartition_violations"]),
                idle_members=_mean(ok["idle_members"]),
                assign_ms=_mean(ok["seconds"]) * 1000,
                topic_spread=_mean(ok["topic_spread"]) if "topic_spread" in ok else float("nan"),
                worst_topic_spread=(
                    float(ok["topic_spread"].max())
                    if "topic_spread" in ok and len(ok)
                    else float("nan")
                ),
            )
        )
    return out


def _mean(series: Any) -> float:
    return float(series.mean()) if len(series) else float("nan")


def recommend(figures: list[AssignorFigures]) -> tuple[str | None, list[str]]:
    """The assignor to use and the sentences that explain why."""
    usable = [f for f in figures if f.failures == 0]
    lines: list[str] = []
    for f in figures:
        if f.failures:
            lines.append(
                f"{f.assignor} failed in {f.failures} of {f.steps} rebalances "
                f"({f.first_error}); a group using it would not get an assignment there."
            )
    if not usable:
        return None, [*lines, "Every assignor failed somewhere; see the table."]
    best_balance = min(f.load_imbalance for f in usable)
    balanced = [f for f in usable if f.load_imbalance <= best_balance * (1 + BALANCE_TIE)]
    # among equals, a cooperative assignor wins: partitions that stay are never revoked
    pick = min(
        balanced,
        key=lambda f: (
            round(f.moved_from_stayers, 1),
            round(f.moved, 1),
            f.rounds <= 1.0,
            f.load_imbalance,
        ),
    )
    lines.insert(
        0,
        (
            f"Use {pick.assignor}. Across {pick.scenarios} scenarios its busiest consumer carried "
            f"on average {pick.load_imbalance:.2f}x the mean load, and a rebalance moved "
            f"{pick.moved:.1f} partitions on average, {pick.moved_from_stayers:.1f} of them away "
            "from consumers that stayed in the group."
        ),
    )
    for f in usable:
        if f is pick:
            continue
        worse = []
        if f.load_imbalance > pick.load_imbalance * (1 + BALANCE_TIE):
            worse.append(f"a busiest consumer at {f.load_imbalance:.2f}x the mean")
        if f.moved_from_stayers > pick.moved_from_stayers + max(0.5, pick.moved_from_stayers / 10):
            worse.append(
                f"{f.moved_from_stayers - pick.moved_from_stayers:.1f} more partitions "
                "taken from consumers that stayed, per rebalance"
            )
        if f.idle_members > pick.idle_members + 0.1:
            worse.append(f"{f.idle_members:.1f} idle consumers on average")
        if worse:
            lines.append(f"{f.assignor}: " + ", ".join(worse) + ".")
    if pick.rounds > 1.0:
        lines.append(
            f"{pick.assignor} is cooperative: a rebalance never revokes the partitions that "
            "stay (no re-read from the last commit, no rebuilt local state), and moved "
            "partitions change hands in a second round."
        )
    coop = [f for f in usable if f.rounds > 1.0 and f.assignor.endswith(pick.assignor)]
    if pick.rounds <= 1.0 and coop:
        lines.append(
            f"Consumers that must not give up the partitions they keep should take "
            f"{coop[0].assignor}: the same assignment, handed over in two cooperative rounds."
        )
    if pick.copartition_violations > 0:
        keeps = [f.assignor for f in usable if f.copartition_violations == 0]
        if keeps:
            lines.append(
                f"If you join co-partitioned topics, note that {pick.assignor} splits partition "
                f"numbers across consumers; {', '.join(keeps)} keeps them together."
            )
    return pick.assignor, lines
