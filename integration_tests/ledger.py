"""Ownership ledger from member events, and the figures the live tests assert on.

Each member process reports its full assignment with a CLOCK_MONOTONIC timestamp
(shared by all processes) on every rebalance callback; from those we rebuild who
held which partition when, and check that no two members ever held one at once.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kafka_assignors.embedded import GroupRunner

TP = tuple[str, int]


@dataclass(frozen=True)
class Holding:
    member: str
    partition: TP
    start: float
    end: float


class Reporting(Protocol):
    """A member that reported events: a MemberView, or a ChildMember of another client."""

    @property
    def name(self) -> str: ...

    @property
    def events(self) -> Sequence[dict[str, Any]]: ...


def holdings(members: GroupRunner | Iterable[Reporting],
             ended: Mapping[str, float] | None = None) -> list[Holding]:
    """Every interval a member held a partition; ``ended`` gives kill times by member name."""
    ended = dict(ended or {})
    out: list[Holding] = []
    now = time.monotonic()
    views = members.members() if isinstance(members, GroupRunner) else members
    for view in views:
        current: dict[TP, float] = {}
        end_of_life = ended.get(view.name)
        for event in view.events:
            kind = event.get("event")
            if kind == "closing" and end_of_life is None:
                end_of_life = float(event["mono"])  # stops processing from here on
            if kind == "released":
                # the revoke callback returned: that is when the member let go
                for t, p in event.get("partitions", []):
                    for h in reversed(out):
                        if h.member == view.name and h.partition == (t, p):
                            out[out.index(h)] = Holding(h.member, h.partition, h.start,
                                                        float(event["mono"]))
                            break
                continue
            if "assignment" not in event or kind not in ("assigned", "revoked", "lost", "state"):
                continue
            mono = float(event["mono"])
            snapshot = {(str(t), int(p)) for t, p in event["assignment"]}
            if kind in ("revoked", "lost"):
                # eager revocation is a notice: the partitions are still in the snapshot,
                # but the member stops processing them here
                snapshot -= {(str(t), int(p)) for t, p in event.get("partitions", [])}
            elif kind == "assigned" or event.get("state") == "STABLE":
                for tp in snapshot - current.keys():
                    current[tp] = mono
            else:
                snapshot |= current.keys()  # mid-rebalance snapshots start nothing
            for tp in list(current.keys() - snapshot):
                out.append(Holding(view.name, tp, current.pop(tp), mono))
        stop = end_of_life if end_of_life is not None else now
        for tp, start in current.items():
            out.append(Holding(view.name, tp, start, max(stop, start)))
    return out


def overlaps(ledger: Iterable[Holding]) -> list[str]:
    """Partitions held by two members at the same time (empty if none)."""
    by_partition: dict[TP, list[Holding]] = {}
    for h in ledger:
        by_partition.setdefault(h.partition, []).append(h)
    problems = []
    for tp, hs in by_partition.items():
        hs.sort(key=lambda h: h.start)
        for a, b in itertools.pairwise(hs):
            if a.member != b.member and b.start < a.end:
                problems.append(
                    f"{tp[0]}-{tp[1]}: {a.member} held it until {a.end:.3f}, "
                    f"{b.member} from {b.start:.3f}"
                )
    return problems


def ownership_story(members: GroupRunner | Iterable[Reporting], problems: Sequence[str],
                    limit: int = 2) -> str:
    """For the first ``limit`` overlaps: every event of the two members that says what they
    held of that partition (what a failed no-double-ownership check needs to be read)."""
    views = list(members.members() if isinstance(members, GroupRunner) else members)
    out = []
    for problem in problems[:limit]:
        head, _, rest = problem.partition(": ")
        topic, _, partition = head.rpartition("-")
        names = {rest.split(" held it")[0], rest.rsplit(", ", 1)[-1].split(" from")[0]}
        out.append(f"== {problem}")
        for view in views:
            if view.name not in names:
                continue
            for e in view.events:
                kind = e.get("event")
                tps = e.get("assignment", []) + e.get("partitions", [])
                if kind in ("closing", "killed", "expelled", "error") or any(
                        t == topic and str(p) == partition for t, p in tps):
                    keep = {k: v for k, v in e.items() if k in (
                        "event", "mono", "state", "generation", "partitions", "rejoin_pending")}
                    held = [t == topic and str(p) == partition for t, p in e.get("assignment", [])]
                    out.append(f"  {view.name}: {keep} holds={any(held)}")
    return "\n".join(out)


def moved(before: Mapping[str, frozenset[TP]], after: Mapping[str, frozenset[TP]]) -> int:
    """Partitions that a member present in both pictures had before and lost."""
    return sum(len(before[m] - after[m]) for m in before if m in after)


def minimal_moves(before: Mapping[str, frozenset[TP]], after_members: Iterable[str],
                  partitions: int) -> int:
    """Fewest partitions the surviving members must give up (identical subscriptions)."""
    members = list(after_members)
    base, extra = divmod(partitions, len(members))
    owned = sorted((len(before.get(m, frozenset())) for m in members), reverse=True)
    kept = sum(min(n, base + 1 if i < extra else base) for i, n in enumerate(owned))
    return sum(owned) - kept


def spread(assignments: Mapping[str, frozenset[TP]]) -> int:
    counts = [len(v) for v in assignments.values()]
    return max(counts) - min(counts)
