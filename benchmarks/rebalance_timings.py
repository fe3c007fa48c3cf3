"""How long a rebalance takes in a live group, and how long members stop consuming, for
every client this library serves and Kafka's own Java consumer, side by side on one broker,
for groups of 3, 10 and 30 consumers. Printed, not asserted.

    python -m benchmarks.rebalance_timings                      # starts a broker in Docker
    python -m benchmarks.rebalance_timings --bootstrap 127.0.0.1:9092 --sizes 3,10
    python -m benchmarks.rebalance_timings --protocols eager,cooperative,java-cooperative
    python -m benchmarks.rebalance_timings --plan '3:0,200:3 10:0,200:3 30:0:3'
    python -m benchmarks.rebalance_timings --json benchmarks/results/rebalance_timings.json \
        --markdown benchmarks/results/rebalance_timings.md   # the committed results

Variants (``--protocols``, default all; see :data:`benchmarks._timing_clients.VARIANTS`):
kafka-python ``eager`` (BalancedStickyAssignor), ``cooperative-plain``
(CooperativeBalancedStickyAssignor on a plain ``kafka.KafkaConsumer``: what kafka-python
alone does), ``cooperative`` (the same with ``kafka_assignors.kafka_python.KafkaConsumer``,
the runtime); the
confluent bridge ``bridge-eager`` / ``bridge-cooperative``; ``aiokafka-eager`` (our assignor on
aiokafka's consumer), ``aiokafka-roundrobin`` (aiokafka alone), ``aiokafka-cooperative``
(``kafka_assignors.aiokafka.AIOKafkaConsumer``); and
``java-cooperative``: Kafka's KafkaConsumer with CooperativeStickyAssignor and
group.protocol=classic (benchmarks/java/RebalanceMember.java, compiled at run time against
the kafka-clients jar that docker/build-image.sh resolved; one JVM, one thread per member).

For each group size and variant: N members consume a topic with 2N partitions (at least 12)
that a producer writes continuously; once every member consumes, one more member joins.
Measured from the members' own event streams (CLOCK_MONOTONIC; Java's System.nanoTime()):

* join -> stable: from the joiner having subscribed until every member reports STABLE on
  the final generation holding its final assignment (both rounds of a cooperative
  rebalance included; Java members: onPartitionsAssigned of the final generation), and
  the same seen by the broker (DescribeGroups polled every 50 ms: Stable, N+1 members,
  every partition assigned);
* pause of keepers: the longest gap between two records processed by a member that was
  already there and keeps all its partitions, from the join until 3 s after stable;
* pause of kept partitions: the same, for members that lose some partitions, counting only
  records of the partitions they keep;
* noise floor: each figure measured the same way over the 5 s before the join.

``--revoke-delay-ms`` makes every revocation callback take that long, as an application that
commits or flushes on revocation would.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

from kafka_assignors.embedded import GroupRunner, KafkaCluster, start_single_broker
from kafka_assignors.embedded.admin import create_topic, delete_topic

from ._timing_clients import VARIANTS, BrokerWatch, ClientGroup
from ._timing_report import (
    Cell,
    machine,
    machine_note,
    markdown,
    median_cell,
    now,
    rows_from,
    table,
    what_ran,
)

BASELINE_S = 5.0
AFTER_S = 3.0


class Producer:
    """Writes to every partition in turn at ``rate`` messages/s, from a process of its own
    (:mod:`benchmarks._timing_producer`), and knows when it sent each message."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float) -> None:
        fd, self._out = tempfile.mkstemp(prefix="kafka-assignors-producer-", suffix=".txt")
        os.close(fd)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._timing_producer", bootstrap, topic,
             str(partitions), str(rate), self._out],
            stdin=subprocess.PIPE, text=True, cwd=os.path.dirname(os.path.dirname(
                os.path.abspath(__file__))))
        #: CLOCK_MONOTONIC time of every send (read at close)
        self.sent: list[float] = []

    def close(self) -> None:
        try:
            if self._proc.poll() is None:
                assert self._proc.stdin is not None
                with contextlib.suppress(BrokenPipeError):
                    self._proc.stdin.write("stop\n")
                    self._proc.stdin.close()
                try:
                    self._proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            with open(self._out, encoding="utf-8") as fh:
                self.sent = [float(line) for line in fh if line.strip()]
        finally:
            os.unlink(self._out)


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
    if VARIANTS[protocol].consumer_protocol:
        # the classic variants' session (10 s) and heartbeat interval (1 s), as group configs
        _consumer_group_configs(bootstrap, f"g-{topic}", session_ms=10_000, heartbeat_ms=1_000)
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
            watch = BrokerWatch(bootstrap, group.group_id)
            try:
                joiner = group.add_member(name="joiner")
                state = group.wait_stable(timeout=timeout, settle=2.0)
            finally:
                watch.close()
            final = max(v.generation for v in group.members() if v.alive)
            views = [v for v in group.members() if v.alive]
            subscribed = next(float(e["mono"]) for e in group.events(joiner)
                              if e.get("event") == "subscribed")
            stable_at = max(_stable_since(v.events, final, state[v.name]) for v in views)
            broker_stable = watch.stable_since(subscribed, len(views), partitions)
            time.sleep(AFTER_S)
            records = _records_by_member(group)
            old = [v.name for v in views if v.name != "joiner"]
            keepers = {n: before[n] for n in old if before[n] <= state[n]}
            losers = {n: before[n] & state[n] for n in old if not before[n] <= state[n]}
            during = (subscribed, stable_at + AFTER_S)
            floor = (subscribed - BASELINE_S, subscribed)
            moved = sum(len(before[n] - state[n]) for n in before if n in state)
            cell = Cell(size, protocol, partitions, stable_at - subscribed,
                        _worst_gap(records, keepers, *during), _worst_gap(records, losers, *during),
                        _worst_gap(records, keepers, *floor), _worst_gap(records, losers, *floor),
                        final - generation, moved, revoke_delay_ms,
                        broker_stable - subscribed)
    finally:
        producer.close()
        delete_topic(bootstrap, topic)
    cell.producer_gap_s = _longest_gap(producer.sent, *during)
    cell.producer_floor_s = _longest_gap(producer.sent, *floor)
    return cell


def _consumer_group_configs(bootstrap: str, group: str, *, session_ms: int,
                            heartbeat_ms: int) -> None:
    """A KIP-848 group's session and heartbeat interval (the broker sets them: group configs
    consumer.session.timeout.ms and consumer.heartbeat.interval.ms)."""
    from confluent_kafka.admin import (  # type: ignore[attr-defined]  # not re-exported
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("consumer.session.timeout.ms", str(session_ms),
                    incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("consumer.heartbeat.interval.ms", str(heartbeat_ms),
                    incremental_operation=AlterConfigOpType.SET)])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.incremental_alter_configs([resource])[resource].result(30)


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
    parser.add_argument("--plan", help="per-size runs instead of --sizes/--revoke-delay-ms/"
                        "--repeats: space-separated SIZE:DELAYS:REPEATS items, e.g. "
                        "'3:0,200:3 10:0,200:3 30:0:3'")
    parser.add_argument("--note", default="", help="a sentence for the markdown (what was run)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--markdown", help="also write the table, the command and the "
                        "machine (cores, load averages at start and end) to this file")
    parser.add_argument("--render", metavar="JSON", help="measure nothing: write --markdown "
                        "again from this results JSON")
    args = parser.parse_args(argv)
    if args.render:
        if not args.markdown:
            parser.error("--render needs --markdown")
        render(args.render, args.markdown)
        return 0
    command = "python -m benchmarks.rebalance_timings " + " ".join(
        repr(a) if " " in a else a for a in (sys.argv[1:] if argv is None else argv))
    started_at, load_start, t0 = now(), os.getloadavg(), time.monotonic()
    protocols = [p for p in args.protocols.split(",") if p]
    unknown = sorted(set(protocols) - VARIANTS.keys())
    if unknown:
        parser.error(f"unknown variants {unknown} (known: {', '.join(VARIANTS)})")
    plan = _plan(args)
    rows: list[Cell] = []
    raw: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    host = machine()
    with broker(args.bootstrap) as bootstrap:
        for done, (size, delay, repeats) in enumerate(plan, 1):
            # repeats interleave the variants, so drifting load hits every variant alike
            runs: dict[str, list[Cell]] = {p: [] for p in protocols}
            for repeat in range(repeats):
                for protocol in protocols:
                    began = time.monotonic()
                    try:
                        cell = measure(bootstrap, size, protocol, args.rate, args.timeout, delay)
                    except Exception as exc:  # one bad cell must not lose the whole run
                        print(f"  {size:>3} {delay:>4} ms {protocol:<18} run {repeat + 1}: "
                              f"FAILED: {type(exc).__name__}: {str(exc)[:2000]}",
                              file=sys.stderr, flush=True)
                        failures.append({"size": size, "revoke_delay_ms": delay,
                                         "protocol": protocol, "repeat": repeat + 1,
                                         "error": f"{type(exc).__name__}: {exc}"[:4000]})
                        continue
                    print(f"  {size:>3} {delay:>4} ms {protocol:<18} run {repeat + 1}: "
                          f"join->stable {cell.join_to_stable_s:.2f} s (broker "
                          f"{cell.broker_join_to_stable_s:.2f} s), pause keepers "
                          f"{cell.keepers_pause_s:.2f} s, kept {cell.kept_pause_s:.2f} s "
                          f"[{time.monotonic() - began:.0f} s]", file=sys.stderr, flush=True)
                    runs[protocol].append(cell)
                    raw.append(asdict(cell))
            for protocol in protocols:
                if runs[protocol]:
                    row = median_cell(runs[protocol])
                    row.runs = f"{len(runs[protocol])}/{repeats}"
                    rows.append(row)
            _write(args, command, started_at, t0, load_start, plan, done, rows, raw, failures,
                   host)
    return 0


def _write(args: argparse.Namespace, command: str, started_at: str, t0: float,
           load_start: tuple[float, float, float], plan: Sequence[tuple[int, int, int]],
           done: int, rows: Sequence[Cell], raw: list[dict[str, Any]],
           failures: list[dict[str, Any]], host: str) -> None:
    """Print and write the results of the first ``done`` plan items (after every item, so an
    interrupted run still leaves its finished part)."""
    data = {"command": command, "started": started_at, "ended": now(),
            "minutes": round((time.monotonic() - t0) / 60, 1), "machine": host,
            "load_start": list(load_start), "load": list(os.getloadavg()), "rate": args.rate,
            "plan": [{"size": n, "revoke_delay_ms": d, "repeats": r} for n, d, r in plan],
            "done": done, "note": args.note, "failures": failures, "cells": raw}
    print(table(rows))
    print(f"\n{what_ran(data)}\n{machine_note(data)}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(markdown(data, rows))


def render(json_path: str, markdown_path: str) -> None:
    """Write the markdown page again from a results JSON (no measuring)."""
    with open(json_path, encoding="utf-8") as fh:
        data = json.load(fh)
    with open(markdown_path, "w", encoding="utf-8") as fh:
        fh.write(markdown(data, rows_from(data)))


def _plan(args: argparse.Namespace) -> list[tuple[int, int, int]]:
    """(size, revoke delay, repeats) in the order they run."""
    if args.plan:
        out: list[tuple[int, int, int]] = []
        for item in args.plan.split():
            size, delays, repeats = item.split(":")
            out.extend((int(size), int(d), int(repeats)) for d in delays.split(",") if d)
        return out
    delays = [int(d) for d in str(args.revoke_delay_ms).split(",") if d]
    return [(int(n), d, args.repeats) for n in args.sizes.split(",") for d in delays]


if __name__ == "__main__":
    sys.exit(main())
