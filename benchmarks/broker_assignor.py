"""balanced-sticky on the broker (broker-assignor/, Java) beside Kafka's ``uniform``: time per
assignment and the quality of the same assignments, every group shape fresh and after each
event, in one command.

    python -m benchmarks.broker_assignor             # writes results/broker_assignor.{md,json}
    python -m benchmarks.broker_assignor --quick     # 200 ms per row instead of 1 s
    python -m benchmarks.broker_assignor --out DIR --scenario few-5000

Builds the bench profile (``mvn -Pbench test-compile``: Kafka's group coordinator on the test
classpath only, the jar is unchanged) and runs ``SideBySide`` (broker-assignor/src/bench) in
one JVM (``-Xmx2g``) after another (``--forks``, 3): in each, per row both assignors are called
in turn on the same group (the order alternating each round), medians of each; then the
quality of each result (total spread, worst per-topic spread, sum of squared loads,
partitions moved after the event beside the fewest the same balance needs), which of
balanced-sticky's paths ran, and a read floor (every owned set's size read, nothing else,
timed in the same rounds). A row is the median over the JVMs (one JVM's ratio on a row that
allocates much, a new group, was seen anywhere from 0.66x to 1.69x). About 4 minutes;
docs/benchmarks.md renders its table from the JSON this writes. Needs Maven and JDK 17.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "broker-assignor"
MAIN = "io.github.kafkaassignors.broker.bench.SideBySide"
SCENARIOS = ["homogeneous-1000x10000", "homogeneous-5000x50000", "homogeneous-10000x100000",
             "random-1000x10000", "random-5000x50000", "few-1000", "few-5000", "few-10000"]
ASSIGNORS = ("balanced-sticky", "uniform")


def label(scenario: str) -> str:
    """A scenario's name as the table shows it (Scenario.java builds the groups)."""
    kind, size = scenario.split("-", 1)
    if kind == "few":
        return f"1-5 of 50 topics, {int(size):,} members"
    members, partitions = (int(x) for x in size.split("x"))
    what = "identical" if kind == "homogeneous" else "random halves"
    return f"{what}, {members:,} x {partitions:,} (100 topics)"


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, text=True, **kw)


def _classpath() -> str:
    cp_file = PROJECT / "target" / "bench-cp.txt"
    _run(["mvn", "-q", "-f", str(PROJECT / "pom.xml"), "-Pbench", "-Drevision=0", "test-compile",
          "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"])
    return os.pathsep.join([str(PROJECT / "target" / "classes"),
                            str(PROJECT / "target" / "test-classes"), cp_file.read_text().strip()])


def _side_by_side(cp: str, budget_ms: int, scenarios: list[str]) -> list[dict[str, Any]]:
    """One JVM's rows (a fork)."""
    proc = subprocess.Popen(["java", "-Xms2g", "-Xmx2g", "-cp", cp, MAIN, str(budget_ms),
                             *scenarios], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    rows = []
    for line in proc.stdout:
        if line.startswith("{"):
            row = json.loads(line)
            _ratios(row)
            rows.append(row)
            print(_line(row), file=sys.stderr, flush=True)
    if proc.wait() != 0:
        raise SystemExit(f"SideBySide failed (exit {proc.returncode})")
    return rows


def _ratios(row: dict[str, Any]) -> None:
    row["group"] = label(row["scenario"])
    row["ratio"] = row["balanced-sticky"]["ms"] / row["uniform"]["ms"]
    row["cpu_ratio"] = row["balanced-sticky"]["cpu_ms"] / row["uniform"]["cpu_ms"]
    row["floor_ratio"] = row["read_floor_ms"] / row["uniform"]["ms"]


#: what a row's quality is: the same in every fork (the assignors are deterministic)
QUALITY = ("spread", "topic_spread", "load_squares", "moved", "fewest_moves")


def combine(forks: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The forks' rows as one: per assignor the median over forks of each fork's median time
    (a JVM compiles the same code differently from run to run: one fork's ratio can be off by
    half, the median of three rarely), the quality (checked equal in every fork), and each
    fork's ratio."""
    rows = []
    for same in zip(*forks, strict=True):
        first = same[0]
        row = json.loads(json.dumps(first))
        for other in same[1:]:
            if (other["scenario"], other["event"]) != (first["scenario"], first["event"]):
                raise SystemExit("the forks measured different rows")
            for side in ASSIGNORS:
                for key in QUALITY:
                    if other[side][key] != first[side][key]:
                        raise SystemExit(f"{side} gave another {key} in another fork: "
                                         f"{first['scenario']} {first['event']}")
        for side in ASSIGNORS:
            for key in ("ms", "cpu_ms"):
                row[side][key] = statistics.median(r[side][key] for r in same)
            row[side]["rounds"] = sum(r[side]["rounds"] for r in same)
        row["read_floor_ms"] = statistics.median(r["read_floor_ms"] for r in same)
        _ratios(row)
        row["fork_ratios"] = [round(r["balanced-sticky"]["ms"] / r["uniform"]["ms"], 3)
                              for r in same]
        rows.append(row)
    return rows


def _fmt_ms(ms: float) -> str:
    return f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def _line(c: dict[str, Any]) -> str:
    o, u = c["balanced-sticky"], c["uniform"]
    sq = ("same" if o["load_squares"] == u["load_squares"]
          else f"{o['load_squares']:,} / {u['load_squares']:,}")
    moved = (f"{o['moved']} / {u['moved']} ({o['fewest_moves']})" if c["event"] != "fresh"
             else "")
    forks = c.get("fork_ratios", [c["ratio"]])
    return (f"| {label(c['scenario'])} | {c['event']} | {_fmt_ms(o['ms'])} | {_fmt_ms(u['ms'])} "
            f"| {c['ratio']:.2f}x | {min(forks):.2f}-{max(forks):.2f}x "
            f"| {c['cpu_ratio']:.2f}x | {c['floor_ratio']:.2f}x "
            f"| {o['spread']} / {u['spread']} "
            f"| {o['topic_spread']} / {u['topic_spread']} | {sq} | {moved} | {c['path']} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--quick", action="store_true", help="200 ms per row instead of 1 s")
    ap.add_argument("--forks", type=int, default=3,
                    help="JVMs run one after the other; each row is the median over them")
    ap.add_argument("--scenario", action="append", choices=SCENARIOS,
                    help="only these groups (repeatable; the results then hold only them)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    budget_ms = 200 if args.quick else 1000
    scenarios = args.scenario or SCENARIOS
    load_before = os.getloadavg()
    cp = _classpath()
    if args.forks < 1:
        ap.error("--forks must be at least 1")
    cases = combine([_side_by_side(cp, budget_ms, scenarios) for _ in range(args.forks)])
    load_after = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip()
    java = subprocess.run(["java", "-version"], text=True,
                          capture_output=True).stderr.splitlines()[0]
    when = datetime.now(UTC).isoformat(timespec="seconds")
    command = ("python -m benchmarks.broker_assignor" + (" --quick" if args.quick else "")
               + (f" --forks {args.forks}" if args.forks != 3 else ""))
    meta = {"date": when, "commit": commit, "command": command,
            "machine": f"{os.cpu_count()} CPUs, {platform.machine()}", "java": java,
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "timing": f"{args.forks} JVMs (-Xmx2g) one after the other, in each per row "
                      f"{budget_ms} ms measured after {budget_ms // 3} ms of warm-up, at least "
                      f"7 rounds, medians; per row the median over the JVMs"}
    (args.out / "broker_assignor.json").write_text(json.dumps({"meta": meta, "cases": cases},
                                                              indent=2) + "\n")
    worst = max(cases, key=lambda c: c["ratio"])
    lines = [
        "# balanced-sticky on the broker vs Kafka's uniform",
        "",
        f"`{command}` — {when}, commit {commit}, {java}, {meta['machine']}; 1-minute load "
        f"average {load_before[0]:.2f} before, {load_after[0]:.2f} after (on a shared machine "
        "absolute times vary: read the ratios, both assignors timed in turn in one run).",
        "",
        f"Timing: {meta['timing']}. *fresh*: a new group; then the same group after one event, "
        "each member owning what the same assignor gave it fresh: *leave* (the first member "
        "leaves), *join* (a member joins with the first one's subscription), *resubscribe* (the "
        "first member swaps one topic for another, or drops one when it has them all), *grow* "
        "(the first topic gains a tenth more partitions). Spread: most minus least loaded "
        "member; topic spread: the worst over topics of the most minus the fewest of its "
        "partitions held by a subscriber; Σload²: sum of squared member loads (what total "
        "balance minimizes; lower is better); moved: partitions taken from a member that stayed "
        "(ours / uniform's) and in brackets the fewest balanced-sticky's balance needs after "
        "that event (its exact min-cost flow from nothing, not the timed path); path: which of "
        "balanced-sticky's paths computed the row. ms: median wall time per assignment (the "
        "median over the JVMs of each JVM's median); each JVM: the lowest and highest "
        "ours/uniform of a single JVM; CPU "
        "ratio: the same ratio on the medians of the calling thread's CPU time (steadier on a "
        "busy machine, but blind to the garbage collector's threads: the wall ratio is the "
        "goal); read floor: reading each member's current assignment and the size of every set "
        "it owns in balanced-sticky's group, and nothing else, against uniform's whole "
        "assignment (timed in the same rounds: what no path that checks the current "
        "assignment can go below; after balanced-sticky each member owns many small sets, "
        "after uniform one or two). Groups are Kafka's own `GroupSpecImpl` with plain owned "
        "sets, as the broker rebuilds a target assignment from its records.",
        "",
        f"Slowest row against uniform: {label(worst['scenario'])}, {worst['event']}, "
        f"{worst['ratio']:.2f}x; rows above 1.0x: "
        f"{sum(c['ratio'] > 1.0 for c in cases)} of {len(cases)} "
        f"(CPU time: {sum(c['cpu_ratio'] > 1.0 for c in cases)}).",
        "",
        "| group | event | balanced-sticky ms | uniform ms | ours/uniform | each JVM | CPU ratio "
        "| read floor | spread (ours / uniform) | topic spread | Σload² | moved (fewest) | path |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
        *(_line(c) for c in cases),
    ]
    (args.out / "broker_assignor.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
