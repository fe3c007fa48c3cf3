"""Run a client's cells: both sides of a pair at once, several pairs in parallel, one broker."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .judge import (
    SideResult,
    alone_wrong,
    broker_expelled,
    phase_allowance,
    side_result,
    split_client_defect,
    worse,
)
from .noise import StallProbe
from .plans import PLANS, Cell, Client
from .workload import Side
from .zygote import close_all as close_fork_servers

log = logging.getLogger(__name__)
DRAIN_S = 30.0


@dataclass
class PairResult:
    cell: Cell
    protocol: str
    ours: SideResult
    alone: SideResult
    worse: list[str] = field(default_factory=list)
    alone_wrong: list[str] = field(default_factory=list)
    seconds: float = 0.0
    logs: dict[str, str] = field(default_factory=dict)  # side -> member log tails, on failure
    #: ours as the plain one line (no runtime), where the client runs that third side
    plain: SideResult | None = None
    #: seconds the pair waited for CPU room before it started (Admission)
    admission_wait: float = 0.0


@dataclass
class _Run:
    side: Side
    error: str | None = None
    committed: dict[tuple[str, int], int] | None = None  # the group's, once members stopped


def _run_side(run: _Run, cell: Cell) -> None:
    side = run.side
    try:
        side.make_topics(cell.topics, cell.partitions)
        side.start_traffic()
        PLANS[cell.plan](side, cell)
        side.drain(DRAIN_S + cell.extra.get("batch_s", 0))
    except Exception:
        run.error = traceback.format_exc()
        log.exception("usage matrix: %s failed", side.prefix)
    finally:
        side.finish(timeout=40 + cell.extra.get("batch_s", 0))
        if side.producer is not None:
            with contextlib.suppress(Exception):
                side.producer.stop()
        run.committed = side.committed()


def run_pair(bootstrap: str, client: Client, cell: Cell, protocol: str,
             probe: StallProbe | None = None) -> PairResult:
    """Run ours and alone side by side on the same workload; judge them. ``probe``: the
    run's scheduling noise, summed over each change's window (``SideResult.stall``)."""
    started = time.monotonic()
    (ours_label, ours_spec), (alone_label, alone_spec) = client.strategies[protocol]
    base = {"usage": cell.usage, "options": {**client.base_options, **cell.options},
            **cell.extra}
    runs = {
        "ours": _Run(Side(bootstrap, client.script, f"{cell.key}-{protocol[:4]}-ours",
                          ours_spec, base, client.python)),
        "alone": _Run(Side(bootstrap, client.script, f"{cell.key}-{protocol[:4]}-alone",
                           alone_spec, base, client.python,
                           client.alone_host(bootstrap) if client.alone_host else None)),
    }
    if client.plain:  # the third side: ours without the runtime, as the plain one line
        runs["plain"] = _Run(Side(bootstrap, client.script, f"{cell.key}-{protocol[:4]}-plain",
                                  ours_spec, {**base, "runtime": False}, client.python))
    if client.prepare_ours is not None:
        for key in ("ours", "plain"):
            if key in runs:
                client.prepare_ours(bootstrap, runs[key].side.group_id, base["options"])
    threads = [threading.Thread(target=_run_side, args=(run, cell), daemon=True)
               for run in runs.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(900)  # every wait inside is bounded; this only guards against a bug
    cooperative = protocol == "cooperative"
    results = {}
    labels = {"ours": ours_label, "alone": alone_label, "plain": f"{ours_label} (plain)"}
    for key in runs:
        label = labels[key]
        side = runs[key].side
        acked = side.producer.snapshot() if side.producer is not None else set()
        results[key] = side_result(label, side.group_id, side.events(), acked, side.changes,
                                   cooperative, runs[key].committed)
        results[key].extra.update(side.marks)
        if probe is not None:
            results[key].stall = {
                c["label"]: probe.stall(c["start"], c["start"] + c["settled"])
                for c in side.changes if c["settled"] is not None}
        if runs[key].committed is None:
            results[key].extra["committed offsets"] = "unknown: every unread record counted lost"
        error = runs[key].error
        if error:
            results[key].exceptions["HarnessError"] = 1
            results[key].exception_samples.append(error[-600:])
        results[key].extra["stop_wall"] = side.stop_wall
    pair = PairResult(cell, protocol, results["ours"], results["alone"],
                      plain=results.get("plain"))
    pair.seconds = round(time.monotonic() - started, 1)
    pair.logs = {key: run.side.log_tail() for key, run in runs.items()}
    for run in runs.values():
        run.side.close_logs()
        with contextlib.suppress(Exception):
            run.side.delete_topics()
    return pair


def judge(pair: PairResult, broker_log: str | None, ours_plain: bool = False) -> None:
    """Add the broker's expulsions (if its log is readable), then compare the sides.
    ``ours_plain``: ours is the client with our assignor only (``Client.ours_plain``)."""
    if broker_log is not None:
        for result in (pair.ours, pair.alone, *([pair.plain] if pair.plain else [])):
            for name in broker_expelled(broker_log, result.group_id,
                                        result.extra.get("stop_wall")):
                if name not in result.expelled:
                    result.expelled.append(name)
    cooperative = pair.protocol == "cooperative"
    slack = phase_allowance(pair.cell.slack_s, pair.protocol)
    if not pair.cell.not_judged:
        pair.worse = worse(pair.ours, pair.alone, pair.cell.clean, slack)
        if ours_plain:
            pair.worse, noted = split_client_defect(pair.ours, pair.worse)
            if noted:
                pair.ours.extra["the client's own defects (not judged)"] = (
                    f"{_defects(pair.ours)}: {'; '.join(noted)}")
        if pair.plain is not None:
            judged, noted = split_client_defect(
                pair.plain, worse(pair.plain, pair.alone, pair.cell.clean, slack))
            pair.worse += [f"plain one line: {w}" for w in judged]
            if noted:
                pair.plain.extra["kafka-python's own defects (not judged)"] = (
                    f"{_defects(pair.plain)}: {'; '.join(noted)}")
    pair.alone_wrong = alone_wrong(pair.alone, pair.cell.clean, cooperative)
    if not pair.worse:
        pair.logs = {}


def _defects(side: SideResult) -> str:
    """The client's own defects its members' witnesses saw on a side, in words."""
    hit = ([f"its join defect left {', '.join(side.client_defect)} REBALANCING"]
           if side.client_defect else [])
    hit += ([f"it failed a commit of {', '.join(side.commit_defect)} before the partitions "
             "moved"] if side.commit_defect else [])
    hit += ([f"its close sent no LeaveGroup for {', '.join(side.leave_defect)} (coordinator "
             "marked dead)"] if side.leave_defect else [])
    return "; ".join(hit)


#: A new pair starts only while the machine has CPU to spare: the share of the last 10 s in
#: which a ready process waited for a CPU (Linux's /proc/pressure/cpu, "some avg10") below
#: this, or (without PSI) a 1-minute load below ``LOAD_PER_CPU`` x CPUs. Eight pairs at once
#: kept 2 cores waiting 96 % of the time (1-minute load 45-56): each side's members then wait
#: seconds for a CPU at random, which the judge's times cannot tell from the client's.
PRESSURE_LIMIT = 60.0
LOAD_PER_CPU = 4.0
#: Pairs start at least this far apart (the pressure of a pair just started shows later), and
#: a pair waits at most ``ADMIT_WAIT_S`` for room (the run always goes on).
ADMIT_GAP_S = 4.0
ADMIT_WAIT_S = 180.0


def cpu_pressure() -> float | None:
    """Linux's CPU pressure ("some avg10", percent), or None where the kernel has none."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as f:
            first = f.readline().split()
        return float(dict(kv.split("=") for kv in first[1:])["avg10"])
    except (OSError, KeyError, ValueError, IndexError):
        return None


def busy() -> bool:
    pressure = cpu_pressure()
    if pressure is not None:
        return pressure >= PRESSURE_LIMIT
    return os.getloadavg()[0] >= LOAD_PER_CPU * (os.cpu_count() or 1)


class Admission:
    """Starts pairs one at a time, ``ADMIT_GAP_S`` apart, each once the machine is not busy
    (or after ``ADMIT_WAIT_S``); records how long each waited."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0.0
        self.waited: list[float] = []

    def enter(self) -> float:
        """Wait for room; the seconds waited."""
        with self._lock:
            asked = time.monotonic()
            time.sleep(max(0.0, self._last + ADMIT_GAP_S - asked))
            while busy() and time.monotonic() - asked < ADMIT_WAIT_S:
                time.sleep(1.0)
            self._last = time.monotonic()
            self.waited.append(round(self._last - asked, 1))
            return self.waited[-1]


def run_matrix(bootstrap: str, client: Client, *, cells: Sequence[Cell] | None = None,
               protocols: Sequence[str] = ("eager", "cooperative"), parallel: int = 8,
               broker_log: Callable[[], str] | None = None) -> list[PairResult]:
    """Every (cell, protocol) pair of the client, long cells first, ``parallel`` at a time
    (and the fork servers its members started from are ended at its end)."""
    try:
        return _run_matrix(bootstrap, client, cells, protocols, parallel, broker_log)
    finally:
        close_fork_servers()


def _run_matrix(bootstrap: str, client: Client, cells: Sequence[Cell] | None,
                protocols: Sequence[str], parallel: int,
                broker_log: Callable[[], str] | None) -> list[PairResult]:
    chosen = list(cells if cells is not None else client.cells)
    work = [(cell, protocol) for cell in chosen for protocol in protocols]
    work.sort(key=lambda cp: not cp[0].slow)
    probe = StallProbe()
    admission = Admission()

    def run_one(cp: tuple[Cell, str]) -> PairResult:
        waited = admission.enter()
        pair = run_pair(bootstrap, client, *cp, probe)
        pair.admission_wait = waited
        return pair

    try:
        with ThreadPoolExecutor(max_workers=parallel) as pool:
            pairs = list(pool.map(run_one, work))
    finally:
        probe.close()
    log.info("usage matrix: %d pairs, each waited for room %s s (CPU pressure limit %.0f %%)",
             len(work), admission.waited, PRESSURE_LIMIT)
    text = None
    if broker_log is not None:
        try:
            text = broker_log()
        except Exception:
            log.exception("usage matrix: the broker's log could not be read")
    for pair in pairs:
        judge(pair, text, client.ours_plain)
    for i, pair in enumerate(pairs):
        if pair.worse and broker_fault(pair):
            pairs[i] = rerun(bootstrap, client, pair, broker_log)
    return pairs


def broker_fault(pair: PairResult) -> bool:
    """The broker answered NOT_COORDINATOR to a joined member of either side: with a single
    broker that is its coordinator not serving the group (seen at 1-minute load 90-140: a
    clean LeaveGroup refused, the leaver expelled a session later), not the client's doing."""
    return bool(pair.ours.broker_faults or pair.alone.broker_faults
                or (pair.plain is not None and pair.plain.broker_faults))


def rerun(bootstrap: str, client: Client, first: PairResult,
          broker_log: Callable[[], str] | None) -> PairResult:
    """Run a pair again, alone this time, after a broker fault in a run judged worse; the
    second run is judged as any other, and the results say that it is a second run and why."""
    log.warning("usage matrix: %s (%s) judged worse (%s) in a run in which the broker answered "
                "NOT_COORDINATOR (ours %d, alone %d times): running it again",
                first.cell.key, first.protocol, "; ".join(first.worse),
                first.ours.broker_faults, first.alone.broker_faults)
    probe = StallProbe()
    try:
        pair = run_pair(bootstrap, client, first.cell, first.protocol, probe)
    finally:
        probe.close()
    text = None
    if broker_log is not None:
        with contextlib.suppress(Exception):
            text = broker_log()
    judge(pair, text, client.ours_plain)
    note = (f"second run: the first was judged worse ({'; '.join(first.worse)}) while the "
            f"broker answered NOT_COORDINATOR (ours {first.ours.broker_faults}, alone "
            f"{first.alone.broker_faults} times)")
    pair.ours.extra["re-run"] = pair.alone.extra["re-run"] = note
    return pair


def summary(pairs: Sequence[PairResult]) -> dict[str, Any]:
    return {"pairs": len(pairs), "worse": sum(1 for p in pairs if p.worse),
            "alone wrong": sum(1 for p in pairs if p.alone_wrong),
            "waited for CPU room (s)": round(sum(p.admission_wait for p in pairs), 1)}
