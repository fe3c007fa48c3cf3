"""What starting usage-matrix members costs, with and without the fork server (zygote.py).

Starts N members of a member script the way a matrix does (``workload.Side.start``), each
with ``hold`` (load everything, print ``ready``, build nothing: no broker needed), all at
once; measures the wall time until every one is ready and the CPU seconds of every process
involved (members, and the fork server with its start-up), then stops them. Printed, not
asserted::

    python -m integration_tests.usage_matrix.start_cost --members 20
    python -m integration_tests.usage_matrix.start_cost --script confluent_member.py \\
        --strategy bridge:balanced-sticky
    python -m integration_tests.usage_matrix.start_cost --python "$(python -m \\
        integration_tests.client_venvs python 2.3.3)"
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Sequence
from pathlib import Path

from . import zygote
from .workload import Side


def children_cpu() -> float:
    """CPU seconds of this process's ended and reaped descendants (a fork server's members
    count once the server is reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_members(script: Path, strategy: str, members: int, python: str | None,
                  fork_server: bool) -> tuple[float, float]:
    """(wall s until all are ready, CPU s of everything started)."""
    os.environ[zygote.ENV] = "1" if fork_server else "0"
    cpu = children_cpu()
    side = Side("127.0.0.1:9", script, "start-cost", strategy, {"usage": "poll"}, python)
    started = time.monotonic()
    names = [f"m{i}" for i in range(members)]
    for name in names:
        side.start(name, hold=True)
    missing = [name for name in names if side.first(name, "ready", 300) is None]
    wall = time.monotonic() - started
    side.finish(timeout=30)
    side.close_logs()
    zygote.close_all()
    if missing:
        raise SystemExit(f"not ready: {missing}\n{side.log_tail()}")
    return wall, children_cpu() - cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m integration_tests.usage_matrix.start_cost")
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--script", default="kafka_python_member.py")
    parser.add_argument("--strategy", default="kafka_assignors:BalancedStickyAssignor")
    parser.add_argument("--python", help="another venv's interpreter (default: this one)")
    parser.add_argument("--rounds", type=int, default=1, help="each way, alternating")
    args = parser.parse_args(argv)
    script = Path(__file__).with_name(args.script)
    for _ in range(args.rounds):
        for fork_server in (False, True):
            wall, cpu = start_members(script, args.strategy, args.members, args.python,
                                      fork_server)
            how = "fork server   " if fork_server else "fresh process "
            print(f"{how} {args.members} x {args.script}: {wall:6.1f} s wall until all "
                  f"ready, {cpu:6.1f} CPU-s ({cpu / args.members:.3f} per member); "
                  f"1-min load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
