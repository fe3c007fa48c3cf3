"""Side-by-side benchmark of our assignors and kafka-python's.

    python -m benchmarks.assignors              # the full run (about 10 minutes)
    python -m benchmarks.assignors --quick      # small shapes, under a minute
    python -m benchmarks.assignors --only 10k uniform roundrobin balanced-sticky
    python -m benchmarks.assignors --report-only   # redo the tables and plot from the JSON
    python -m benchmarks.assignors --suite new     # the special-purpose assignors, 10k x 1k

Every cell (shape, subscription mode, event, assignor) runs in a process of its
own, so its peak memory is its own and a slow cell can be stopped.  See
``benchmarks/README.md`` for what is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from ._workload import (
    ASSIGNORS,
    EVENTS,
    JOIN_SHAPE_ASSIGNORS,
    MODES,
    NEW_SUITE_ASSIGNORS,
    NEW_SUITE_FRESH_ONLY,
    NEW_SUITE_QUICK_SHAPES,
    NEW_SUITE_SHAPES,
    QUICK_SHAPES,
    SHAPES,
    SLOW,
    SUITES,
    CellSpec,
    Shape,
    run_cell,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SCRATCH = Path(tempfile.gettempdir()) / "kafka-assignors-bench"
MARKER = "CELL-RESULT "

DEFAULT_TIMEOUT = 60.0
QUICK_TIMEOUT = 30.0
#: Keep repeating a cell until this much time went into timed calls (or max repeats).
BUDGET = 8.0
MAX_REPEATS = 9
QUICK_BUDGET = 0.5
QUICK_REPEATS = 5
#: Extra wall time a cell process gets for its setup before the parent kills it.
SETUP_ALLOWANCE = 600.0


def _cell_main(raw: str) -> int:
    data = json.loads(raw)
    data["shape"] = Shape(**data["shape"])
    result = run_cell(CellSpec(**data))
    out = dataclasses.asdict(result)
    out["best"], out["median"] = result.best, result.median
    out["cpu_median"] = result.cpu_median
    print(MARKER + json.dumps(out), flush=True)
    return 0


# --- running the cells -----------------------------------------------------------------


def _select(
    tokens: Sequence[str],
    shapes: Sequence[Shape],
    assignors: Sequence[str] = tuple(ASSIGNORS),
    modes: Sequence[str] = MODES,
) -> tuple[list[Shape], list[str], list[str], list[str]]:
    """``--only`` tokens name shapes, modes, events or assignors; unnamed kinds keep all.

    ``modes`` are the modes kept when no token names one.
    """
    kinds: dict[str, list[str]] = {"shape": [], "mode": [], "event": [], "assignor": []}
    for token in tokens:
        if token in {s.name for s in shapes}:
            kinds["shape"].append(token)
        elif token in MODES:
            kinds["mode"].append(token)
        elif token in EVENTS:
            kinds["event"].append(token)
        elif token in assignors:
            kinds["assignor"].append(token)
        else:
            known = [s.name for s in shapes] + list(MODES) + list(EVENTS) + list(assignors)
            raise SystemExit(f"--only: unknown {token!r}; choose from {', '.join(known)}")
    if "leave" in kinds["event"] and "fresh" not in kinds["event"]:
        kinds["event"].append("fresh")  # a leave cell starts from the fresh cell's result
    return (
        [s for s in shapes if not kinds["shape"] or s.name in kinds["shape"]],
        [m for m in MODES if m in (kinds["mode"] or modes)],
        [e for e in EVENTS if not kinds["event"] or e in kinds["event"]],
        [a for a in assignors if not kinds["assignor"] or a in kinds["assignor"]],
    )


def _spawn(spec: CellSpec) -> dict[str, Any]:
    payload = dataclasses.asdict(spec)
    cmd = [sys.executable, "-m", "benchmarks.assignors", "--cell", json.dumps(payload)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    limit = spec.timeout + spec.budget + SETUP_ALLOWANCE
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=limit, check=False
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout (process killed after {limit:g} s)"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARKER):
            result: dict[str, Any] = json.loads(line[len(MARKER) :])
            return result
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"status": f"error: cell process exited {proc.returncode}: {tail[:80]}"}


def _skip_reason(
    done: dict[tuple[str, str, str, str], dict[str, Any]],
    shapes: Sequence[Shape],
    shape: Shape,
    mode: str,
    event: str,
    assignor: str,
    timeout: float,
    suite: str = "default",
) -> str | None:
    if suite == "new" and event == "leave" and assignor in NEW_SUITE_FRESH_ONLY:
        return "skipped: a reference on the fresh group only (--suite new)"
    if event == "leave":
        fresh = done.get((shape.name, mode, "fresh", assignor))
        if fresh is None or fresh["status"] != "ok":
            # (say why: an error, a timeout and a skip read differently in the report)
            why = "was not run" if fresh is None else fresh["status"].split(":", 1)[0]
            return f"skipped: the fresh cell it starts from has no result ({why})"
    if assignor not in SLOW:
        return None
    earlier = [s for s in shapes if s.partitions < shape.partitions]
    for prev in reversed(earlier):
        cell = done.get((prev.name, mode, event, assignor))
        if cell is None:
            continue
        if cell["status"] != "ok":
            return f"skipped: did not finish at {prev.label}"
        seconds = cell["median"]
        # Its work grows at least linearly with partitions x consumers.
        factor = shape.partitions / prev.partitions
        if seconds * factor > timeout:
            return (
                f"skipped: {seconds:.0f} s at {prev.label}, so at least "
                f"{seconds * factor:.0f} s here (limit {timeout:g} s)"
            )
        return None
    return None


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = None
    try:
        with open("/proc/meminfo") as f:
            mem_gib = round(int(f.readline().split()[1]) / 1024**2, 1)
    except (OSError, ValueError, IndexError):
        pass
    commit = None
    with contextlib.suppress(OSError):
        commit = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            or None
        )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "kafka_python": importlib_metadata.version("kafka-python"),
        "kafka_assignors": importlib_metadata.version("kafka-assignors"),
        "git_commit": commit,
    }


def run(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    if args.suite == "new":
        all_shapes = NEW_SUITE_QUICK_SHAPES if args.quick else NEW_SUITE_SHAPES
        shapes, modes, events, assignors = _select(
            args.only, all_shapes, NEW_SUITE_ASSIGNORS, ("uniform",)
        )
    else:
        all_shapes = QUICK_SHAPES if args.quick else SHAPES
        shapes, modes, events, assignors = _select(args.only, all_shapes)
    budget = QUICK_BUDGET if args.quick else BUDGET
    repeats = args.repeats or (QUICK_REPEATS if args.quick else MAX_REPEATS)
    scratch = Path(tempfile.mkdtemp(prefix="handoff-", dir=_scratch()))
    started = dt.datetime.now(dt.UTC)
    load_start = _load()
    report: dict[str, Any] = {
        "schema": 1,
        "command": "python -m benchmarks.assignors " + " ".join(args.argv),
        "machine": _machine(),
        "started": started.isoformat(timespec="seconds"),
        "settings": {
            "suite": args.suite,
            "quick": args.quick,
            "timeout_s": args.timeout,
            "repeat_budget_s": budget,
            "max_repeats": repeats,
            "shapes": [dataclasses.asdict(s) | {"partitions": s.partitions} for s in shapes],
            "modes": modes,
            "events": events,
            "assignors": assignors,
            "leaving_member": "the middle one: consumer-{i:05d}, i = consumers // 2",
        },
        "cells": [],
    }
    done: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    loads: list[float] = []
    waited = 0.0
    grid = [
        (shape, mode, event, assignor)
        for shape, mode, event, assignor in itertools.product(shapes, modes, events, assignors)
        if not (shape.name.endswith("-join") and assignor not in JOIN_SHAPE_ASSIGNORS)
    ]
    try:
        for count, (shape, mode, event, assignor) in enumerate(grid, 1):
            waited += _wait_for_load(args.max_load, args.max_wait - waited)
            load = _load()
            loads.append(load[0])
            key = (shape.name, mode, event, assignor)
            handoff = scratch / f"{shape.name}-{mode}-{assignor}.pickle"
            profile = str(out / "profiles" / f"{'-'.join(key)}.prof") if args.profile else None
            spec = CellSpec(
                shape,
                mode,
                event,
                assignor,
                args.timeout,
                budget,
                repeats,
                str(handoff),
                profile,
                args.suite,
            )
            t0 = time.perf_counter()
            reason = _skip_reason(
                done, shapes, shape, mode, event, assignor, args.timeout, args.suite
            )
            cell = {"status": reason} if reason else _spawn(spec)
            wall = time.perf_counter() - t0
            if event == "leave" or "leave" not in events:
                handoff.unlink(missing_ok=True)
            cell = {
                "shape": shape.name,
                "partitions": shape.partitions,
                "consumers": shape.consumers,
                "topics": shape.topics,
                "mode": mode,
                "event": event,
                "assignor": assignor,
                **cell,
                "wall_seconds": round(wall, 2),
                "load_1min": load[0],
            }
            done[key] = cell
            report["cells"].append(cell)
            print(f"[{count:3d}/{len(grid)}] {_one_line(cell)}", flush=True)
            if profile and Path(profile).exists():
                _print_profile(profile)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    report["load"] = {
        "start": load_start,
        "end": _load(),
        "max_1min_at_cell_start": max(loads, default=None),
        "mean_1min_at_cell_start": round(sum(loads) / len(loads), 2) if loads else None,
        "max_load_gate": args.max_load,
        "waited_for_load_s": round(waited),
    }
    return report


def _print_profile(path: str, top: int = 25) -> None:
    import pstats

    print(f"    profile of one more call: {path}")
    pstats.Stats(path, stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def _wait_for_load(limit: float | None, allowance: float) -> float:
    """Sleep until the 1-minute load average is below ``limit``; the seconds slept."""
    if limit is None or allowance <= 0:
        return 0.0
    t0 = time.monotonic()
    while os.getloadavg()[0] >= limit and time.monotonic() - t0 < allowance:
        time.sleep(5)
    return time.monotonic() - t0


def _scratch() -> Path:
    SCRATCH.mkdir(parents=True, exist_ok=True)
    return SCRATCH


def _one_line(cell: dict[str, Any]) -> str:
    head = (
        f"{cell['partitions']:>9,} x {cell['consumers']:<5,} {cell['mode']:<7} "
        f"{cell['event']:<5} {cell['assignor']:<27}"
    )
    if cell["status"] != "ok":
        return f"{head} {cell['status']}"
    moved = "" if cell.get("moved") is None else f" moved {cell['moved']:,}"
    valid = "" if cell.get("valid") else f" INVALID {cell.get('problems')}"
    q = cell.get("quality")
    quality = (
        ""
        if not q
        else f" load {q['load_max']:.3f} (bound {q['load_bound']:.3f}) local "
        f"{q['local_pct']:.1f}% pins {q['pins_kept_pct']:.1f}% co-located {q['colocated_pct']:.0f}%"
    )
    return (
        f"{head} {cell['median']:9.4f} s (best {cell['best']:.4f}, "
        f"cpu {cell['cpu_median']:.4f}, n={len(cell['seconds'])})"
        f" {cell['memory_mib']:7.1f} MiB spread {cell['spread']}{moved}{valid}{quality}"
    )


# --- command line ----------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.assignors",
        description="Time our assignors against kafka-python's, side by side.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small shapes and few repeats: a smoke check in under a minute",
    )
    parser.add_argument(
        "--suite",
        choices=SUITES,
        default="default",
        help="default: balanced-sticky against kafka-python's assignors at four sizes; "
        "new: load-aware, rack-aware, co-partitioned, pinned and broadcast (eager and "
        "cooperative), each configured as in production, beside range, roundrobin and "
        "one sticky run, at 10,000 x 1,000 (results in new_assignors.json/.md)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=[],
        metavar="NAME",
        help="run only these shapes, modes (uniform, unequal), events "
        "(fresh, leave) and/or assignors",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"limit for one assign() call, seconds (default {DEFAULT_TIMEOUT:g}; "
        f"{QUICK_TIMEOUT:g} with --quick)",
    )
    parser.add_argument(
        "--max-load",
        type=float,
        default=None,
        metavar="L",
        help="before each cell, wait until the 1-minute load average is below L",
    )
    parser.add_argument(
        "--max-wait",
        type=float,
        default=1800.0,
        metavar="S",
        help="wait at most S seconds in all for --max-load (default 1800)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=0,
        help="most timed runs per cell (default: until the repeat budget)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write assignors.json/.md/_time.png (new_assignors.json/.md/.png "
        "with --suite new; default: "
        "benchmarks/results for a full run, a temporary folder otherwise)",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rebuild the tables and the plot from the existing JSON",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="after timing each cell, run it once more under cProfile; print the top "
        "functions and keep the stats in OUT/profiles/",
    )
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.argv = argv
    if args.timeout is None:
        args.timeout = QUICK_TIMEOUT if args.quick else DEFAULT_TIMEOUT

    if args.cell:
        return _cell_main(args.cell)

    from ._report import write_outputs  # matplotlib only when a report is written

    full = not (args.quick or args.only)
    out: Path = args.out or (RESULTS if full or args.report_only else _scratch())
    stem = "new_assignors" if args.suite == "new" else "assignors"
    json_path = out / f"{stem}.json"
    if args.report_only:
        report = json.loads(json_path.read_text())
    else:
        out.mkdir(parents=True, exist_ok=True)
        if args.profile:
            (out / "profiles").mkdir(exist_ok=True)
        report = run(args, out)
        json_path.write_text(json.dumps(report, indent=1) + "\n")
    readme = (
        HERE / "README.md"
        if out.resolve() == RESULTS.resolve() and report["settings"].get("suite") != "new"
        else None
    )
    for path in write_outputs(report, out, readme):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
