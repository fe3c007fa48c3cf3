"""What each side of a cell did (from its events), and whether ours was worse than alone.

"Worse", precisely (the same rule for every cell and client):

* exceptions, expulsions, losses: counts compared exactly. Ours is worse if it raised more
  exceptions of any one type to the application than alone did (so also any type alone did
  not raise), expelled more members, lost more records, or left more members hung at the end.
  A record is lost when the group committed past it and no member processed it: the group
  will never deliver it. Its count does not depend on timing; records nobody had read yet
  when the side ended (the wait for them is bounded) but below which nothing was committed
  are "unread at the end", recorded, not judged (a producer acknowledgement that comes late,
  or a drain cut short on a loaded machine, is not a loss). Without the committed offsets
  (the broker could not be asked) every unread record counts as lost;
* records read twice (only where every rebalance was clean: a clean cell, and no member of
  either side ended by an exception or expelled, those being judged as such): where alone
  read none twice, exactly (ours must read none twice either); where alone read some twice
  too, the usage itself has a race in kafka-python (a commit still in flight when the
  partition moves) whose size depends on timing, so ours is worse only beyond twice that;
* times: ours is worse if a change never settled within its bound where alone's did, or if
  the cell's total time to settle (over the changes both settled) exceeds
  ``1.5 x alone + 1 s + slack x changes + stall``. Both sides run at the same moment on the
  same broker and machine; the factor and the second absorb what rebalances vary by, and
  the sum over the cell's changes evens out single draws. ``slack`` is the cell's phase
  allowance per change: a member learns of a rebalance at its next heartbeat (up to
  ``heartbeat_interval_ms`` later, a uniform draw per side) and an application sees its
  assignment only when it has processed the current batch (the cell's batch time), so one
  side can be that much later by chance alone. A cooperative change that moves partitions
  takes two rounds (the follow-up round hands the revoked partitions over), and each round
  can wait for a heartbeat of the members that did not start it: twice the slack there
  (:func:`phase_allowance`; a cooperative group formed by two members that did not join in
  one round settled 5.9 s later than one whose members did, on either side). ``stall`` is
  the scheduling noise measured in ours' own change windows (:mod:`.noise`: how long the
  machine kept a ready process waiting then): on a loaded machine one side's members can
  wait seconds for a CPU while the other's run (ours at 1.8 x alone over a cell of
  kafka-python 2.3.3, where the two sides differ only in the assignor, at load 57 on 2
  cores), and that wait is the machine's, not the assignor's. On an idle machine it is
  about zero: the strict rule. Waiting on purpose (a heartbeat, a timeout, a held
  JoinGroup) is never in it, so a regression that makes ours wait still fails.

Where kafka-python alone is wrong (it did not settle, raised, expelled or lost, read twice on
a clean rebalance, paused kept partitions during a cooperative rebalance), that is recorded
as a note on the cell, not held against ours.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

TIME_FACTOR = 1.5
TIME_PLUS_S = 1.0
#: a kept partition that goes this long without a record during a cooperative rebalance (and
#: at least three times its noise floor) was paused
PAUSED_S = 1.0

Events = Mapping[str, list[dict[str, Any]]]


@dataclass
class SideResult:
    strategy: str
    group_id: str
    exceptions: dict[str, int] = field(default_factory=dict)
    exception_samples: list[str] = field(default_factory=list)
    fatal: int = 0  # members an exception ended
    expelled: list[str] = field(default_factory=list)
    produced: int = 0
    read: int = 0
    lost: int = 0
    unread: int = 0  # acknowledged, never read, nothing committed past it: not lost
    duplicates: int = 0
    settle: dict[str, float | None] = field(default_factory=dict)
    bounds: dict[str, float] = field(default_factory=dict)
    pause_s: float | None = None
    floor_s: float | None = None
    longest_call_s: float = 0.0
    #: change -> seconds the machine kept a ready process waiting during it (noise.py)
    stall: dict[str, float] = field(default_factory=dict)
    async_commit_failures: int = 0
    #: error type -> count of those failures (what a failed cell needs to be read)
    async_commit_errors: dict[str, int] = field(default_factory=dict)
    #: the broker answered NOT_COORDINATOR to a member that had joined (its fault, not ours)
    broker_faults: int = 0
    killed: list[str] = field(default_factory=list)
    #: members the client's own join defect left REBALANCING (kafka_python_member.py's witness)
    client_defect: list[str] = field(default_factory=list)
    #: members whose commit kafka-python refused after a heartbeat answered
    #: REBALANCE_IN_PROGRESS marked the coordinator dead (3.0.0 to 3.0.2, upstream.md §5)
    commit_defect: list[str] = field(default_factory=list)
    #: members whose close() sent no LeaveGroup because a heartbeat's REBALANCE_IN_PROGRESS
    #: had just marked the coordinator dead (the same defect, upstream.md §5)
    leave_defect: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def side_result(strategy: str, group_id: str, events: Events, acked: set[tuple[str, int, int]],
                changes: list[dict[str, Any]], cooperative: bool,
                committed: Mapping[tuple[str, int], int] | None = None) -> SideResult:
    """What one side did; ``committed``: the group's final committed offsets (None: unknown,
    every unread record counts as lost)."""
    result = SideResult(strategy, group_id)
    reads: Counter[tuple[str, int, int]] = Counter()
    for name, evs in events.items():
        for e in evs:
            kind = e["event"]
            if kind == "records":
                reads.update((r[0], r[1], r[2]) for r in e["r"])
            elif kind == "exception":
                result.exceptions[e["type"]] = result.exceptions.get(e["type"], 0) + 1
                result.fatal += bool(e.get("fatal"))
                if len(result.exception_samples) < 3:
                    result.exception_samples.append(f"{name} {e['where']}: {e['type']}: "
                                                    f"{e['message'][:160]}")
            elif kind in ("expelled", "lost") and name not in result.expelled:
                result.expelled.append(name)
            elif kind == "closing":
                result.longest_call_s = max(result.longest_call_s, float(e["longest_call"]))
            elif kind == "async-commit-failed":
                result.async_commit_failures += 1
                error = str(e.get("type", "?"))
                result.async_commit_errors[error] = result.async_commit_errors.get(error, 0) + 1
            elif kind == "killed":
                result.killed.append(name)
            elif kind == "broker-fault":
                result.broker_faults += 1
            elif kind == "client-defect" and e.get("defect") == "commit":
                if name not in result.commit_defect:
                    result.commit_defect.append(name)
            elif kind == "client-defect" and e.get("defect") == "leave":
                if name not in result.leave_defect:
                    result.leave_defect.append(name)
            elif kind == "client-defect" and name not in result.client_defect:
                result.client_defect.append(name)
    result.produced = len(acked)
    result.read = len(reads)
    missing = acked - set(reads)
    result.lost = len(missing) if committed is None else sum(
        1 for t, p, offset in missing if offset < committed.get((t, p), 0))
    result.unread = len(missing) - result.lost
    result.duplicates = sum(n - 1 for n in reads.values())
    for change in changes:
        result.settle[change["label"]] = change["settled"]
        result.bounds[change["label"]] = change["bound"]
        for key, value in change.items():
            if key not in ("label", "start", "settled", "bound"):
                result.extra[f"{change['label']}: {key}"] = value
    join = next((c for c in changes if c["label"] == "join"), None)
    if cooperative and join is not None and join["settled"] is not None:
        result.pause_s, result.floor_s = kept_pause(events, join["start"],
                                                    join["start"] + join["settled"])
    return result


def _held_at(evs: list[dict[str, Any]], when: float) -> set[tuple[str, int]]:
    held: set[tuple[str, int]] = set()
    for e in evs:
        if float(e["mono"]) > when:
            break
        if e["event"] == "assignment":
            held = {(str(t), int(p)) for t, p in e["held"]}
    return held


def _longest_gap(times: list[float], start: float, end: float) -> float:
    before = [t for t in times if t < start]
    inside = sorted(t for t in times if start <= t <= end)
    points = before[-1:] + inside + [end]
    return max((b - a for a, b in itertools.pairwise(points)), default=0.0)


def kept_pause(events: Events, start: float, settled: float) -> tuple[float, float]:
    """Longest gap in the records of partitions a member kept through the rebalance, and the
    same in the 3 s before it (the noise floor), over the members that kept any."""
    pause = floor = 0.0
    for evs in events.values():
        kept = _held_at(evs, start) & _held_at(evs, settled)
        if not kept:
            continue
        times = sorted(float(r[3]) for e in evs if e["event"] == "records"
                       for r in e["r"] if (r[0], r[1]) in kept)
        pause = max(pause, _longest_gap(times, start, settled + 1.0))
        floor = max(floor, _longest_gap(times, start - 3.0, start))
    return round(pause, 3), round(floor, 3)


BROKER_REMOVED = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d+)\].*Member (\S+) in group (\S+) has failed")


def broker_expelled(log: str, group_id: str, until_wall: float | None) -> list[str]:
    """Members the coordinator logged as failed (session or rebalance timeout) in this group,
    before ``until_wall`` (the side's end: static members are never told to leave)."""
    out = []
    for line in log.splitlines():
        m = BROKER_REMOVED.match(line)
        if not m or m.group(4).rstrip(".,") != group_id:
            continue
        stamp = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        if until_wall is not None and stamp.timestamp() + int(m.group(2)) / 1000 > until_wall:
            continue
        out.append(m.group(3).rsplit("-", 5)[0])  # member id = client id + "-" + uuid
    return out


def phase_allowance(slack: float, protocol: str) -> float:
    """The per-change phase allowance: ``slack`` per round, two rounds in a cooperative
    change (its follow-up round, each a heartbeat the other members may wait for)."""
    return slack * (2 if protocol == "cooperative" else 1)


def time_allowed(alone: float, slack: float) -> float:
    return TIME_FACTOR * alone + TIME_PLUS_S + slack


def clean_run(cell_clean: bool, *sides: SideResult) -> bool:
    """Re-reads are judged only where every rebalance was clean: a clean cell in which no
    member of either side was ended by an exception or expelled (those are judged as such)."""
    return cell_clean and not any(s.fatal or s.expelled for s in sides)


def worse(ours: SideResult, alone: SideResult, clean: bool, slack: float) -> list[str]:
    """Every way ours did worse than alone in this cell (empty: never worse)."""
    out = []
    clean = clean_run(clean, ours, alone)
    for kind, n in sorted(ours.exceptions.items()):
        if n > alone.exceptions.get(kind, 0):
            out.append(f"{n} x {kind} raised (alone {alone.exceptions.get(kind, 0)})")
    for what, a, b in (("members expelled", len(ours.expelled), len(alone.expelled)),
                       ("records lost", ours.lost, alone.lost),
                       ("members killed at the end (hung)", len(ours.killed), len(alone.killed))):
        if a > b:
            out.append(f"{what}: {a} (alone {b})")
    if clean and ours.duplicates > (2 * alone.duplicates if alone.duplicates else 0):
        out.append(f"records read twice: {ours.duplicates} (alone {alone.duplicates})")
    both = [label for label, t in alone.settle.items() if t is not None]
    for label in both:
        if ours.settle.get(label) is None:
            out.append(f"{label}: never settled within {ours.bounds.get(label, 0):.0f} s "
                       f"(alone {alone.settle[label]:.1f} s)")
    both = [label for label in both if ours.settle.get(label) is not None]
    if both:
        mine = sum(ours.settle[label] or 0.0 for label in both)
        theirs = sum(alone.settle[label] or 0.0 for label in both)
        stall = sum(ours.stall.get(label, 0.0) for label in both)
        allowed = time_allowed(theirs, slack * len(both)) + stall
        if mine > allowed:
            out.append(f"{mine:.1f} s to settle over {', '.join(both)} > {allowed:.1f} s "
                       f"allowed (alone {theirs:.1f} s, machine stall {stall:.1f} s)")
    return out


#: what a member the client's own join defect left REBALANCING does to a side: it is expelled
#: and its change does not settle (or settles late); the assignor has no part in it
DEFECT_EFFECTS = ("members expelled", "never settled", "to settle over")


#: what kafka-python's refused commit (upstream.md §5) does to a side: the partition's next
#: owner re-reads what the commit covered
COMMIT_DEFECT_EFFECTS = ("records read twice",)


def split_client_defect(plain: SideResult, found: list[str]) -> tuple[list[str], list[str]]:
    """The plain one line differs from alone only in the assignor: where kafka-python's own
    join defect hit it (a draw either side can lose), or a close() that sent no LeaveGroup
    after a heartbeat marked the coordinator dead, its expulsions and settle times are the
    client's; where its refused-commit defect hit it, its re-reads are. Those are recorded as
    a note rather than judged. Everything else stays judged."""
    effects = ((DEFECT_EFFECTS if plain.client_defect or plain.leave_defect else ())
               + (COMMIT_DEFECT_EFFECTS if plain.commit_defect else ()))
    if not effects:
        return found, []
    kept = [w for w in found if not any(e in w for e in effects)]
    noted = [w for w in found if w not in kept]
    return kept, noted


def alone_wrong(alone: SideResult, clean: bool, cooperative: bool) -> list[str]:
    """What kafka-python alone got wrong in this cell (recorded, not held against ours)."""
    out = [f"never settled after {label} within {alone.bounds[label]:.0f} s"
           for label, t in alone.settle.items() if t is None]
    if alone.exceptions:
        out.append("raised " + ", ".join(f"{n} x {k}" for k, n in alone.exceptions.items()))
    if alone.expelled:
        out.append(f"expelled {len(alone.expelled)}")
    if alone.client_defect:
        out.append(f"kafka-python's join defect left {len(alone.client_defect)} member(s) "
                   "REBALANCING")
    if alone.commit_defect:
        out.append(f"kafka-python refused a commit of {len(alone.commit_defect)} member(s) "
                   "after marking the coordinator dead on REBALANCE_IN_PROGRESS")
    if alone.leave_defect:
        out.append(f"kafka-python's close sent no LeaveGroup for {len(alone.leave_defect)} "
                   "member(s) after marking the coordinator dead on REBALANCE_IN_PROGRESS")
    if alone.lost:
        out.append(f"lost {alone.lost} records")
    if clean_run(clean, alone) and alone.duplicates:
        out.append(f"read {alone.duplicates} records twice on a clean rebalance")
    if (cooperative and alone.pause_s is not None and alone.floor_s is not None
            and alone.pause_s >= max(PAUSED_S, 3 * alone.floor_s)):
        out.append(f"paused kept partitions {alone.pause_s:.1f} s (floor {alone.floor_s:.2f} s)")
    return out
