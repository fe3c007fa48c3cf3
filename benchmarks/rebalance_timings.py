"""How long a rebalance takes in a live group, and how long members stop consuming: eager
(balanced-sticky) against cooperative (cooperative-balanced-sticky), for groups of 3, 10 and
30 consumers on a real broker. Printed, not asserted.

    python -m benchmarks.rebalance_timings                      # starts a broker in Docker
    python -m benchmarks.rebalance_timings --bootstrap 127.0.0.1:9092 --sizes 3,10
    python -m benchmarks.rebalance_timings --repeats 3 --json /tmp/timings.json
    python -m benchmarks.rebalance_timings --json benchmarks/results/rebalance_timings.json \
        --markdown benchmarks/results/rebalance_timings.md   # the committed results

For each group size and protocol: N members (one process each) consume a topic with 2N
partitions (at least 12) that a producer writes continuously; once every member consumes,
one more member joins. Measured from the members' own event streams (CLOCK_MONOTONIC):

* join -> stable: from the joiner having subscribed (consumer created, about to send
  JoinGroup) until every member reports STABLE on the final generation (both rounds of a
  cooperative rebalance included);
* longest pause: the longest gap between two records processed by any member that was
  already there, around the join; the same gap measured over the seconds before the join
  (baseline) shows the noise floor of the producer rate.

``--revoke-delay-ms`` makes every revocation callback take that long, as an application that
commits or flushes on revocation would. Note that kafka-python 3.0.12 returns no records
from ``poll()`` while a rebalance is in progress, cooperative or not.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kafka import KafkaProducer

from kafka_assignors.embedded import GroupRunner, KafkaCluster, start_single_broker
from kafka_assignors.embedded.admin import create_topic, delete_topic

PROTOCOLS = {
    "eager": "kafka_assignors:BalancedStickyAssignor",
    "cooperative": "kafka_assignors:CooperativeBalancedStickyAssignor",
}
BASELINE_S = 5.0
AFTER_S = 3.0


@dataclass
class Cell:
    size: int
    protocol: str
    partitions: int
    join_to_stable_s: float
    longest_pause_s: float
    median_pause_s: float
    baseline_gap_s: float
    generations: int
    moved_in_join: int


class Producer:
    """Writes to every partition in turn at ``rate`` messages/s from a thread."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float) -> None:
        import threading

        self._producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), linger_ms=5)
        self._topic, self._partitions, self._rate = topic, partitions, rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start, n = time.monotonic(), 0
        while not self._stop.is_set():
            delay = start + n / self._rate - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                break
            self._producer.send(self._topic, value=b"x", partition=n % self._partitions)
            n += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._producer.close(timeout=10)


def _records_by_member(group: GroupRunner) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for e in group.events():
        if e.get("event") == "record":
            out.setdefault(str(e["member"]), []).append(float(e["mono"]))
    return out


def _longest_gap(times: Sequence[float], start: float, end: float) -> float:
    """Longest stretch inside [start, end] without a record."""
    points = [start, *(t for t in times if start < t < end), end]
    return max(b - a for a, b in itertools.pairwise(points))


def measure(bootstrap: str, size: int, protocol: str, rate: float, timeout: float,
            revoke_delay_ms: int = 0) -> Cell:
    partitions = max(12, 2 * size)
    topic = f"timings-{size}-{protocol}-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic, partitions)
    producer = Producer(bootstrap, topic, partitions, rate)
    try:
        with GroupRunner(bootstrap, f"g-{topic}", [topic], [PROTOCOLS[protocol]],
                         report_records=True, session_timeout_ms=10_000,
                         heartbeat_interval_ms=1_000, revoke_delay_ms=revoke_delay_ms) as group:
            for _ in range(size):
                group.add_member()
            group.wait_stable(timeout=timeout, settle=2.0)
            group.wait_for(
                lambda vs: all(v.records > 0 for v in vs if v.alive and v.assignment),
                timeout=timeout, what="every member to consume")
            time.sleep(BASELINE_S)
            before = group.assignments()
            generation = max(v.generation for v in group.members())
            joiner = group.add_member(name="joiner")
            state = group.wait_stable(timeout=timeout, settle=2.0)
            final = max(v.generation for v in group.members() if v.alive)
            views = [v for v in group.members() if v.alive]
            subscribed = next(float(e["mono"]) for e in group.events(joiner)
                              if e.get("event") == "subscribed")
            stable_at = max(
                min(float(e["mono"]) for e in v.events
                    if e.get("generation") == final and e.get("state") == "STABLE")
                for v in views
            )
            time.sleep(AFTER_S)
            records = _records_by_member(group)
            old = [v.name for v in views if v.name != "joiner"]
            pauses = [_longest_gap(records.get(n, []), subscribed, stable_at + AFTER_S)
                      for n in old]
            baseline = max(_longest_gap(records.get(n, []), subscribed - BASELINE_S, subscribed)
                           for n in old)
            moved = sum(len(before[n] - state[n]) for n in before if n in state)
            return Cell(size, protocol, partitions, stable_at - subscribed, max(pauses),
                        statistics.median(pauses), baseline, final - generation, moved)
    finally:
        producer.close()
        delete_topic(bootstrap, topic)


@contextlib.contextmanager
def broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    cluster: KafkaCluster = start_single_broker()
    try:
        yield cluster.bootstrap
    finally:
        cluster.close()


def _table(cells: Sequence[Cell]) -> str:
    lines = [
        "| consumers | protocol | join -> stable (s) | longest pause (s) | median pause (s) "
        "| baseline gap (s) | generations | moved |",
        "|--:|---|--:|--:|--:|--:|--:|--:|",
    ]
    for c in cells:
        lines.append(
            f"| {c.size} | {c.protocol} | {c.join_to_stable_s:.2f} | {c.longest_pause_s:.2f} | "
            f"{c.median_pause_s:.2f} | {c.baseline_gap_s:.2f} | {c.generations} | "
            f"{c.moved_in_join} |"
        )
    return "\n".join(lines)


def _median_cell(cells: Sequence[Cell]) -> Cell:
    mid = sorted(cells, key=lambda c: c.join_to_stable_s)[len(cells) // 2]
    return Cell(mid.size, mid.protocol, mid.partitions,
                statistics.median(c.join_to_stable_s for c in cells),
                statistics.median(c.longest_pause_s for c in cells),
                statistics.median(c.median_pause_s for c in cells),
                statistics.median(c.baseline_gap_s for c in cells),
                mid.generations, mid.moved_in_join)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=os.environ.get("BOOTSTRAP_SERVERS"),
                        help="existing cluster (default: start one broker in Docker)")
    parser.add_argument("--sizes", default="3,10,30", help="group sizes (default 3,10,30)")
    parser.add_argument("--protocols", default="eager,cooperative")
    parser.add_argument("--rate", type=float, default=300.0, help="messages/s (default 300)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per cell (median shown)")
    parser.add_argument("--timeout", type=float, default=300.0, help="bound on each wait (s)")
    parser.add_argument("--revoke-delay-ms", type=int, default=0,
                        help="time each member spends in its revocation callback, as one "
                        "that commits or flushes would (default 0)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--markdown", help="also write the table, the command and the "
                        "machine (cores, load averages at start and end) to this file")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.rebalance_timings " + " ".join(
        sys.argv[1:] if argv is None else argv)
    started_at, load_start = _now(), os.getloadavg()
    sizes = [int(s) for s in args.sizes.split(",")]
    protocols = [p for p in args.protocols.split(",") if p]
    rows: list[Cell] = []
    raw: list[dict[str, Any]] = []
    with broker(args.bootstrap) as bootstrap:
        for size in sizes:
            for protocol in protocols:
                runs = []
                for repeat in range(args.repeats):
                    cell = measure(bootstrap, size, protocol, args.rate, args.timeout,
                                   args.revoke_delay_ms)
                    print(f"  {size:>3} {protocol:<11} run {repeat + 1}: "
                          f"join->stable {cell.join_to_stable_s:.2f} s, longest pause "
                          f"{cell.longest_pause_s:.2f} s", file=sys.stderr, flush=True)
                    runs.append(cell)
                    raw.append(asdict(cell))
                rows.append(_median_cell(runs))
    load = os.getloadavg()
    machine = _machine()
    note = (f"{machine}; load average (1/5/15 min) {_fmt_load(load_start)} at the start, "
            f"{_fmt_load(load)} at the end; {args.rate:.0f} msg/s; revocation callbacks take "
            f"{args.revoke_delay_ms} ms; {args.repeats} run(s) per cell (median).")
    print(_table(rows))
    print(f"\n{note}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"command": command, "started": started_at, "ended": _now(),
                       "machine": machine, "load_start": load_start, "load": load,
                       "rate": args.rate, "revoke_delay_ms": args.revoke_delay_ms,
                       "repeats": args.repeats, "cells": raw}, fh, indent=2)
            fh.write("\n")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(_markdown(command, started_at, _now(), note, rows))
    return 0


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _fmt_load(load: Sequence[float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)


def _machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as fh:
        cpu = next((line.split(":", 1)[1].strip() for line in fh
                    if line.startswith("model name")), cpu)
    import platform

    import kafka

    return (f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}, "
            f"CPython {platform.python_version()}, kafka-python {kafka.__version__}")


def _markdown(command: str, started: str, ended: str, note: str, rows: Sequence[Cell]) -> str:
    return f"""# Rebalance timings: eager against cooperative, live

`{command}` ({started} to {ended}).

{note} One broker (Apache Kafka 4.4.0, KRaft, in Docker) on the same machine; every member
is a kafka-python process with `session_timeout_ms=10000`, `heartbeat_interval_ms=1000`.
The load averages include the benchmark's own member processes and broker
(31 consumer processes on 2 cores in the largest cell).

Each row: N members consume a topic of max(12, 2N) partitions that the producer writes
continuously; once every member consumes, one more member joins.

* **join -> stable**: from the joiner's consumer subscribing until every member reports
  STABLE on the final generation (the joiner's own start-up, coordinator lookup and
  JoinGroup included; both rounds of a cooperative rebalance included).
* **longest / median pause**: over the members that were already there, the longest gap
  between two records each processed from the join until 3 s after the group is stable
  (longest of all members / median of the members' longest).
* **baseline gap**: the same longest gap over the 5 s before the join: the noise floor.
* **generations**: rebalances the join caused; **moved**: partitions that changed owner.

{_table(rows)}

kafka-python 3.0.12 returns no records from `poll()` while any rebalance of its member is
in progress, cooperative ones included, and a cooperative join takes two rounds; the
members learn of each round at their next heartbeat (up to `heartbeat_interval_ms`).
"""


if __name__ == "__main__":
    sys.exit(main())
