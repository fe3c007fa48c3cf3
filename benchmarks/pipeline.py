"""Scale benchmark of ``evaluate``: scenario steps per second on Spark local[1] and local[2].

    python -m benchmarks.pipeline                      # 10,000 steps x 3 assignors, local[2]
                                                       # then local[1] (about 15 minutes)
    python -m benchmarks.pipeline --steps 2000 --masters 'local[2]'
    python -m benchmarks.pipeline --assignors range,sticky,balanced-sticky

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
import time
from pathlib import Path

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
    inside = master.partition("[")[2].rstrip("]")
    return (os.cpu_count() or 1) if inside in ("*", "") else int(inside)


def run(master: str, scenarios: list, assignors: list[str], out: Path) -> dict[str, object]:
    from kafka_assignors.pipeline.evaluate import evaluate
    from kafka_assignors.pipeline.session import build_session

    started = time.perf_counter()
    spark = build_session(master, f"kafka-assignors bench {master}")
    ready = time.perf_counter() - started
    try:
        summary = evaluate(spark, scenarios, assignors, out)
    finally:
        spark.stop()
    steps = sum(s.steps for s in scenarios)
    return {
        "master": master,
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
        "load_average_before": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=10_000, help="scenario steps (default 10,000)")
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--consumers", type=int, default=50)
    p.add_argument("--assignors", default="range,roundrobin,balanced-sticky")
    p.add_argument("--masters", default="local[2],local[1]", help="comma-separated")
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
    for master in [m.strip() for m in args.masters.split(",") if m.strip()]:
        tag = master.replace("[", "-").replace("]", "").replace("*", "all")
        result = run(master, scenarios, assignors, args.out / f"steps-{tag}.parquet")
        (args.out / f"pipeline-{tag}.json").write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result), flush=True)
        print(
            f"{master}: {result['scenario_steps']:,} scenario steps x {len(assignors)} "
            f"assignors in {result['evaluate_s']} s = {result['scenario_steps_per_s']} "
            f"scenario steps/s ({result['rebalances_per_s']} simulated rebalances/s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
