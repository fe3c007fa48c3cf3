"""How long a rebalance takes in a live group, and how long members stop consuming: kafka-python
eager (balanced-sticky), cooperative as kafka-python alone runs it (our runtime opted out),
and cooperative with the kafka-assignors runtime (the default), side by side on one broker,
for groups of 3, 10 and 30 consumers. Printed, not asserted.

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
* pause of keepers: the longest gap between two records processed by a member that was
  already there and keeps all its partitions, from the join until 3 s after stable;
* pause of kept partitions: the same, for members that lose some partitions, counting only
  records of the partitions they keep;
* noise floor: each figure measured the same way over the 5 s before the join (the
  producer's own gaps).

``--revoke-delay-ms`` makes every revocation callback take that long, as an application that
commits or flushes on revocation would. Note that kafka-python 3.0.12 returns no records
from ``poll()`` while a rebalance is in progress, cooperative or not.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
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

from ._timing_clients import VARIANTS, ClientGroup

BASELINE_S = 5.0
AFTER_S = 3.0


@dataclass
class Cell:
    size: int
    protocol: str
    partitions: int
    join_to_stable_s: float
    #: longest pause of members that keep all their partitions (nan: none did)
    keepers_pause_s: float
    #: longest pause of the kept partitions of members that lose some (nan: none did)
    kept_pause_s: float
    keepers_floor_s: float
    kept_floor_s: float
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


def _records_by_member(group: GroupRunner) -> dict[str, list[tuple[float, tuple[str, int]]]]:
    out: dict[str, list[tuple[float, tuple[str, int]]]] = {}
    for e in group.events():
        if e.get("event") == "record":
            out.setdefault(str(e["member"]), []).append(
                (float(e["mono"]), (str(e["topic"]), int(e["partition"]))))
    return out


def _stable_since(events: Sequence[dict[str, Any]], generation: int,
                  assignment: frozenset[tuple[str, int]]) -> float:
    """When a member first reported STABLE on ``generation`` holding ``assignment``."""
    return min(float(e["mono"]) for e in events
               if e.get("generation") == generation and e.get("state") == "STABLE"
               and frozenset((str(t), int(p)) for t, p in e.get("assignment", [])) == assignment)


def _worst_gap(records: dict[str, list[tuple[float, tuple[str, int]]]],
               kept: dict[str, frozenset[tuple[str, int]]], start: float, end: float) -> float:
    """Longest gap in [start, end] between records of each member's ``kept`` partitions."""
    gaps = [_longest_gap([t for t, tp in records.get(name, []) if tp in parts], start, end)
            for name, parts in kept.items()]
    return max(gaps) if gaps else math.nan


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
        with ClientGroup(VARIANTS[protocol], bootstrap, f"g-{topic}", topic,
                         session_timeout_ms=10_000, heartbeat_interval_ms=1_000,
                         revoke_delay_ms=revoke_delay_ms) as group:
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
            stable_at = max(_stable_since(v.events, final, state[v.name]) for v in views)
            time.sleep(AFTER_S)
            records = _records_by_member(group)
            old = [v.name for v in views if v.name != "joiner"]
            keepers = {n: before[n] for n in old if before[n] <= state[n]}
            losers = {n: before[n] & state[n] for n in old if not before[n] <= state[n]}
            during = (subscribed, stable_at + AFTER_S)
            floor = (subscribed - BASELINE_S, subscribed)
            moved = sum(len(before[n] - state[n]) for n in before if n in state)
            return Cell(size, protocol, partitions, stable_at - subscribed,
                        _worst_gap(records, keepers, *during), _worst_gap(records, losers, *during),
                        _worst_gap(records, keepers, *floor), _worst_gap(records, losers, *floor),
                        final - generation, moved)
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


def _s(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.2f}"


def _table(cells: Sequence[Cell]) -> str:
    lines = [
        "| consumers | revoke (ms) | variant | join -> stable (s) | pause, keepers (s) "
        "| floor (s) | pause, kept partitions of losers (s) | floor (s) | generations | moved |",
        "|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for c, delay in cells_with_delay(cells):
        lines.append(
            f"| {c.size} | {delay} | {c.protocol} | {c.join_to_stable_s:.2f} | "
            f"{_s(c.keepers_pause_s)} | {_s(c.keepers_floor_s)} | {_s(c.kept_pause_s)} | "
            f"{_s(c.kept_floor_s)} | {c.generations} | {c.moved_in_join} |"
        )
    return "\n".join(lines)


#: revocation delay of each median cell (set by main, which measures per delay)
_DELAYS: dict[int, int] = {}


def cells_with_delay(cells: Sequence[Cell]) -> list[tuple[Cell, int]]:
    return [(c, _DELAYS.get(id(c), 0)) for c in cells]


def _median(values: Sequence[float]) -> float:
    real = [v for v in values if not math.isnan(v)]
    return statistics.median(real) if real else math.nan


def _median_cell(cells: Sequence[Cell]) -> Cell:
    mid = sorted(cells, key=lambda c: c.join_to_stable_s)[len(cells) // 2]
    return Cell(mid.size, mid.protocol, mid.partitions,
                _median([c.join_to_stable_s for c in cells]),
                _median([c.keepers_pause_s for c in cells]),
                _median([c.kept_pause_s for c in cells]),
                _median([c.keepers_floor_s for c in cells]),
                _median([c.kept_floor_s for c in cells]),
                mid.generations, mid.moved_in_join)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=os.environ.get("BOOTSTRAP_SERVERS"),
                        help="existing cluster (default: start one broker in Docker)")
    parser.add_argument("--sizes", default="3,10,30", help="group sizes (default 3,10,30)")
    parser.add_argument("--protocols", default=",".join(VARIANTS),
                        help=f"variants (default {','.join(VARIANTS)})")
    parser.add_argument("--rate", type=float, default=300.0, help="messages/s (default 300)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per cell (median shown)")
    parser.add_argument("--timeout", type=float, default=300.0, help="bound on each wait (s)")
    parser.add_argument("--revoke-delay-ms", default="0,200",
                        help="times (ms, comma-separated) each member spends in its revocation "
                        "callback, as one that commits or flushes would (default 0,200)")
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
    delays = [int(d) for d in str(args.revoke_delay_ms).split(",") if d]
    with broker(args.bootstrap) as bootstrap:
        for size in sizes:
            for delay in delays:
                # repeats interleave the variants, so drifting load hits every variant alike
                runs: dict[str, list[Cell]] = {p: [] for p in protocols}
                for repeat in range(args.repeats):
                    for protocol in protocols:
                        cell = measure(bootstrap, size, protocol, args.rate, args.timeout, delay)
                        print(f"  {size:>3} {delay:>4} ms {protocol:<18} run {repeat + 1}: "
                              f"join->stable {cell.join_to_stable_s:.2f} s, pause keepers "
                              f"{_s(cell.keepers_pause_s)} s, kept {_s(cell.kept_pause_s)} s",
                              file=sys.stderr, flush=True)
                        runs[protocol].append(cell)
                        raw.append({**asdict(cell), "revoke_delay_ms": delay})
                for protocol in protocols:
                    row = _median_cell(runs[protocol])
                    _DELAYS[id(row)] = delay
                    rows.append(row)
    load = os.getloadavg()
    machine = _machine()
    note = (f"{machine}; load average (1/5/15 min) {_fmt_load(load_start)} at the start, "
            f"{_fmt_load(load)} at the end; {args.rate:.0f} msg/s; {args.repeats} run(s) per "
            "cell (median), the variants interleaved.")
    print(_table(rows))
    print(f"\n{note}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"command": command, "started": started_at, "ended": _now(),
                       "machine": machine, "load_start": load_start, "load": load,
                       "rate": args.rate, "revoke_delay_ms": delays,
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
    return f"""# Rebalance timings: eager, cooperative plain, cooperative with the runtime

`{command}` ({started} to {ended}).

{note} One broker (Apache Kafka 4.4.0, KRaft, in Docker) on the same machine; every member
is a kafka-python process with `session_timeout_ms=10000`, `heartbeat_interval_ms=1000`.
The load averages include the benchmark's own member processes and broker
(31 consumer processes on 2 cores in the largest cell).

Each row: N members consume a topic of max(12, 2N) partitions that the producer writes
continuously; once every member consumes, one more member joins.

Variants: **eager** = `BalancedStickyAssignor`; **cooperative-plain** =
`CooperativeBalancedStickyAssignor` with `KAFKA_ASSIGNORS_KAFKA_PYTHON_RUNTIME=off` (what
kafka-python 3.0.12 alone does, and what users of this library got before the runtime);
**cooperative** = the same assignor as users get it now (the runtime installed by default).

* **join -> stable**: from the joiner's consumer subscribing until every member reports
  STABLE on the final generation (the joiner's own start-up, coordinator lookup and
  JoinGroup included; both rounds of a cooperative rebalance included).
* **pause, keepers**: the longest gap between two records processed by a member that was
  already there and keeps all its partitions, from the join until 3 s after stable.
* **pause, kept partitions of losers**: the same over the partitions they keep, for
  members that lose some.
* **floor**: each pause measured the same way over the 5 s before the join (the producer's
  own gaps: the noise floor). `-`: no member of that kind in the cell.
* **generations**: rebalances the join caused; **moved**: partitions that changed owner.

{_table(rows)}

kafka-python 3.0.12 alone returns no records from `poll()` while any rebalance of its member
is in progress, cooperative ones included. With the runtime, cooperative members keep
fetching and returning the partitions they keep; a cooperative join still takes two rounds,
and members learn of each round at their next heartbeat (up to `heartbeat_interval_ms`).
"""


if __name__ == "__main__":
    sys.exit(main())
