"""balanced-sticky on the broker (broker-assignor/, Java) beside Kafka's ``uniform``: JMH time
per assignment and the quality of the same assignments, in one command.

    python -m benchmarks.broker_assignor                  # writes results/broker_assignor.{md,json}
    python -m benchmarks.broker_assignor --quick          # 1 warm-up, 1 measured iteration
    python -m benchmarks.broker_assignor --out DIR

Builds the bench profile (``mvn -Pbench test-compile``: JMH and Kafka's group coordinator on
the test classpath only, the jar is unchanged), runs JMH's ``AssignorBench`` (each case in a
fork of its own, ``-Xmx2g``; 5 x 1 s warm-up, 5 x 2 s measured unless --quick) and
``QualityReport`` (the same groups: total spread, worst per-topic spread, sum of squared
loads, partitions moved after the leave). Needs Maven and JDK 17.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "broker-assignor"
BENCH = "io.github.kafkaassignors.broker.bench.AssignorBench"
QUALITY = "io.github.kafkaassignors.broker.bench.QualityReport"
SCENARIOS = ["homogeneous-1000x10000", "homogeneous-5000x50000",
             "random-1000x10000", "random-5000x50000", "few-1000"]
LABELS = {
    "homogeneous-1000x10000": "identical, 1,000 members x 10,000 partitions (100 topics)",
    "homogeneous-5000x50000": "identical, 5,000 members x 50,000 partitions (100 topics)",
    "random-1000x10000": "random halves, 1,000 x 10,000 (100 topics)",
    "random-5000x50000": "random halves, 5,000 x 50,000 (100 topics)",
    "few-1000": "1-5 of 50 topics of 10-400 partitions, 1,000 members (10,548 partitions)",
}


class _Timing(TypedDict):
    ms: float
    error_ms: float | None  # None when JMH gives no error (a single measured iteration)


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, text=True, **kw)


def _classpath() -> str:
    cp_file = PROJECT / "target" / "bench-cp.txt"
    _run(["mvn", "-q", "-f", str(PROJECT / "pom.xml"), "-Pbench", "test-compile",
          "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"])
    return os.pathsep.join([str(PROJECT / "target" / "classes"),
                            str(PROJECT / "target" / "test-classes"), cp_file.read_text().strip()])


def _jmh(cp: str, quick: bool, out: Path) -> dict[tuple[str, str, str], _Timing]:
    args = ["java", "-cp", cp, "org.openjdk.jmh.Main", BENCH, "-rf", "json", "-rff", str(out),
            "-p", "scenario=" + ",".join(SCENARIOS)]
    if quick:
        args += ["-wi", "1", "-i", "1"]
    _run(args)
    times: dict[tuple[str, str, str], _Timing] = {}
    for row in json.loads(out.read_text()):
        p = row["params"]
        m = row["primaryMetric"]
        error = float(m["scoreError"])  # "NaN" with a single measured iteration
        times[(p["scenario"], p["assignor"], p["phase"])] = {
            "ms": float(m["score"]), "error_ms": None if error != error else error}
    return times


def _quality(cp: str) -> dict[tuple[str, str], dict[str, Any]]:
    res = _run(["java", "-cp", cp, QUALITY, *SCENARIOS], stdout=subprocess.PIPE,
               stderr=subprocess.DEVNULL)
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    return {(r["scenario"], r["assignor"]): r for r in rows}


def _fmt_ms(ms: float, error: float | None = None) -> str:
    text = f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"
    return text if error is None else f"{text} ± {_fmt_ms(error)}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    cp = _classpath()
    times = _jmh(cp, args.quick, PROJECT / "target" / "jmh.json")
    quality = _quality(cp)
    load_after = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip()
    java_version = subprocess.run(["java", "-version"], text=True, capture_output=True)
    java = java_version.stderr.splitlines()[0]
    cases = []
    for sc in SCENARIOS:
        for phase in ("fresh", "leave"):
            row: dict[str, Any] = {"scenario": sc, "phase": phase}
            for a in ("balanced-sticky", "uniform"):
                q = quality[(sc, a)]
                row[a] = {
                    "ms": times[(sc, a, phase)]["ms"],
                    "error_ms": times[(sc, a, phase)]["error_ms"],
                    "spread": q[f"{phase}_spread"], "topic_spread": q[f"{phase}_topic_spread"],
                    "load_squares": q[f"{phase}_load_squares"],
                    "moved": q["leave_moved"] if phase == "leave" else 0,
                    # the fewest moves this assignor's balance needs on its own leave group
                    "fewest_moves": q["leave_fewest_moves"] if phase == "leave" else 0,
                }
            row["ratio"] = row["balanced-sticky"]["ms"] / row["uniform"]["ms"]
            cases.append(row)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    command = "python -m benchmarks.broker_assignor" + (" --quick" if args.quick else "")
    meta = {"date": when, "commit": commit, "command": command,
            "machine": f"2 cores ({os.cpu_count()} "
            f"CPUs seen), {platform.machine()}", "java": java,
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "jmh": "forks 1, -Xmx2g, " + ("1 x 1 s warm-up, 1 x 2 s measured" if args.quick
                                          else "5 x 1 s warm-up, 5 x 2 s measured, average time")}
    (args.out / "broker_assignor.json").write_text(json.dumps({"meta": meta, "cases": cases},
                                                              indent=2) + "\n")
    lines = [
        "# balanced-sticky on the broker vs Kafka's uniform",
        "",
        f"`{command}` — {when}, commit {commit}, {java}, 2 cores; load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after (other jobs share the machine: "
        "absolute times vary, the ratio within one run is what to read).",
        "",
        f"JMH ({meta['jmh']}), each case in its own fork of one `java` run; quality from "
        "`QualityReport` on the same groups. *fresh*: a new group; *leave*: its first member "
        "leaves, the others own what the same assignor gave them. Spread: most minus least "
        "loaded member; topic spread: the worst over topics of the most minus the fewest of its "
        "partitions held by a subscriber; Σload²: sum of squared member loads (what total balance "
        "minimizes; lower is better); moved: partitions taken from a member that stayed (ours / "
        "uniform's), and in brackets the fewest that balanced-sticky's balance needs after that "
        "leave (its exact min-cost flow run from nothing, not the timed path). Ratios are from "
        "one run, both assignors side by side.",
        "",
        "| group | event | balanced-sticky ms/op | uniform ms/op | ours/uniform "
        "| spread (ours / uniform) | topic spread | Σload² | moved |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for c in cases:
        o, u = c["balanced-sticky"], c["uniform"]
        sq = ("same" if o["load_squares"] == u["load_squares"]
              else f"{o['load_squares']:,} / {u['load_squares']:,}")
        moved = (f"{o['moved']} / {u['moved']} (fewest {o['fewest_moves']})"
                 if c["phase"] == "leave" else "")
        lines.append(
            f"| {LABELS[c['scenario']]} | {c['phase']} | {_fmt_ms(o['ms'], o['error_ms'])} "
            f"| {_fmt_ms(u['ms'], u['error_ms'])} | {c['ratio']:.2f}x "
            f"| {o['spread']} / {u['spread']} | {o['topic_spread']} / {u['topic_spread']} "
            f"| {sq} | {moved} |")
    (args.out / "broker_assignor.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
