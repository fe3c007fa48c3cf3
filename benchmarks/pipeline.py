"""Scale benchmark of ``evaluate``: scenario steps per second, locally, on a cluster, on Connect.

    python -m benchmarks.pipeline                      # 10,000 steps x 3 assignors, local[2]
                                                       # then local[1] (about 15 minutes)
    python -m benchmarks.pipeline --steps 2000 --masters 'local[2]'
    python -m benchmarks.pipeline --masters 'local[2],standalone,connect'
    python -m benchmarks.pipeline --assignors range,sticky,balanced-sticky

``--masters`` takes Spark masters (``local[N]``, ``spark://host:port``), Spark Connect
addresses (``sc://host:port``), and two words: ``standalone`` starts a master and a
2-core worker from the PySpark install on 127.0.0.1, ``connect`` a Spark Connect server
(``local[2]``), each for its run only (the test suite's servers,
integration_tests/spark_servers.py).  The runs end with one table.

A scenario is 1,000 partitions (10 topics x 100) and 50 consumers with zipf
weights and 19 random churn events (joins, leaves, crashes, scale-outs,
partition increases), so 20 rebalances; 500 of them make 10,000 scenario
steps.  Every step runs under every assignor, each with the full wire round
trip.  The goal: local[2] in under 10 minutes.  Results go to
reports/bench/pipeline-<master>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kafka_assignors.simulator import expand_grid

GOAL_SECONDS = 600


def grid(steps: int, partitions: int, topics: int, consumers: int) -> dict[str, object]:
    per_scenario = 20
    return {
        "clusters": [{"name": "bench", "topic_count": topics, "partitions": partitions // topics}],
        "consumers": [consumers],
        "weights": ["zipf:1.0"],
        "seeds": list(range(max(1, steps // per_scenario))),
        "churn": {"random": [f"random {per_scenario - 1}"]},
    }


def cores(master: str) -> int:
    if not master.startswith("local"):
        return 2  # the servers started here have 2 cores (a given address: assumed)
    inside = master.partition("[")[2].rstrip("]")
    return (os.cpu_count() or 1) if inside in ("*", "") else int(inside)


@contextmanager
def where(master: str) -> Iterator[dict[str, str | None]]:
    """Session.start arguments for ``master``, starting a server for it when asked."""
    if master not in ("standalone", "connect"):
        remote = master if master.startswith("sc://") else None
        yield {"master": None if remote else master, "remote": remote}
        return
    from integration_tests.spark_servers import start_connect, start_standalone
    from kafka_assignors.pipeline.kafka_package import kafka_conf

    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        if master == "standalone":
            cluster = start_standalone(Path(tmp))
            os.environ["PYSPARK_PYTHON"] = sys.executable  # the worker's Python
            try:
                yield {"master": cluster.url, "remote": None}
            finally:
                cluster.stop()
        else:
            server = start_connect(Path(tmp), kafka_conf())
            try:
                yield {"master": None, "remote": server.url}
            finally:
                server.stop()


def run(master: str, scenarios: list[Any], assignors: list[str], out: Path) -> dict[str, Any]:
    from kafka_assignors.pipeline.evaluate import evaluate
    from kafka_assignors.pipeline.session import Session

    with where(master) as address:
        started = time.perf_counter()
        session = Session.start(
            master=address["master"],
            remote=address["remote"],
            app_name=f"kafka-assignors bench {master}",
        )
        ready = time.perf_counter() - started
        load_before = os.getloadavg()[0]
        try:
            summary = evaluate(session, scenarios, assignors, out.resolve())
        finally:
            session.stop()
    steps = sum(s.steps for s in scenarios)
    return {
        "master": master,
        "mode": session.mode,
        "assignors": assignors,
        "scenarios": len(scenarios),
        "scenario_steps": steps,
        "simulated_rebalances": summary.steps,
        "failed": summary.errors,
        "session_start_s": round(ready, 1),
        "evaluate_s": round(summary.seconds, 1),
        "simulation_cpu_s": round(summary.cpu_seconds, 1),
        # what the same work takes with the machine to itself: CPU time over the cores used
        "idle_estimate_s": round(summary.cpu_seconds / cores(master), 1),
        "scenario_steps_per_s": round(steps / summary.seconds, 1),
        "rebalances_per_s": round(summary.steps / summary.seconds, 1),
        "within_goal": summary.seconds + ready < GOAL_SECONDS,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| master | mode | steps | wall (evaluate) | session start | scenario steps/s "
        "| simulated rebalances/s | worker CPU | load average (before, after) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| `{r['master']}` | {r['mode']} | {r['scenario_steps']:,} | {r['evaluate_s']} s "
            f"| {r['session_start_s']} s | {r['scenario_steps_per_s']} | {r['rebalances_per_s']} "
            f"| {r['simulation_cpu_s']} s "
            f"| {r['load_average_before']:.1f}, {r['load_average_after']:.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=10_000, help="scenario steps (default 10,000)")
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--consumers", type=int, default=50)
    p.add_argument("--assignors", default="range,roundrobin,balanced-sticky")
    p.add_argument(
        "--masters",
        default="local[2],local[1]",
        help="comma-separated: local[N], spark://..., sc://..., standalone, connect",
    )
    p.add_argument("--out", type=Path, default=Path("reports/bench"))
    args = p.parse_args()
    scenarios = expand_grid(grid(args.steps, args.partitions, args.topics, args.consumers))
    assignors = [a.strip() for a in args.assignors.split(",") if a.strip()]
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        f"{len(scenarios)} scenarios, {sum(s.steps for s in scenarios):,} steps, "
        f"{args.partitions} partitions x {args.consumers} consumers, assignors "
        f"{', '.join(assignors)}",
        flush=True,
    )
    results = []
    masters = [m.strip() for m in args.masters.split(",") if m.strip()]
    # a Connect client marks the process as Connect for good (PySpark's own switch): last
    masters.sort(key=lambda m: m == "connect" or m.startswith("sc://"))
    for master in masters:
        tag = "".join(c if c.isalnum() else "-" for c in master.replace("*", "all")).strip("-")
        result = run(master, scenarios, assignors, args.out / f"steps-{tag}.parquet")
        (args.out / f"pipeline-{tag}.json").write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result), flush=True)
        print(
            f"{master}: {result['scenario_steps']:,} scenario steps x {len(assignors)} "
            f"assignors in {result['evaluate_s']} s = {result['scenario_steps_per_s']} "
            f"scenario steps/s ({result['rebalances_per_s']} simulated rebalances/s)",
            flush=True,
        )
        results.append(result)
    print(table(results), flush=True)
    (args.out / "pipeline-table.md").write_text(table(results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
