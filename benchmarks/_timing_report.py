"""Figures, medians, tables and the markdown page of ``benchmarks.rebalance_timings``."""

from __future__ import annotations

import contextlib
import math
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._timing_clients import VARIANTS


@dataclass
class Cell:
    size: int
    protocol: str
    partitions: int
    #: joiner subscribed -> last member reports STABLE on the final generation with its
    #: final assignment (source: see VARIANTS[protocol].stable_source)
    join_to_stable_s: float
    #: longest pause of members that keep all their partitions (nan: none did)
    keepers_pause_s: float
    #: longest pause of the kept partitions of members that lose some (nan: none did)
    kept_pause_s: float
    keepers_floor_s: float
    kept_floor_s: float
    generations: int
    moved_in_join: int
    revoke_delay_ms: int = 0
    #: joiner subscribed -> DescribeGroups first shows Stable, N+1 members, all assigned
    broker_join_to_stable_s: float = math.nan
    #: runs behind a median row: completed/started
    runs: str = "1/1"
    #: the producer's longest gap between two sends (any partition) in the same window as
    #: the pauses, and over the floor's window: a stall of the machine, not of a consumer
    producer_gap_s: float = math.nan
    producer_floor_s: float = math.nan


def _s(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.2f}"


def _median(values: Sequence[float]) -> float:
    real = [v for v in values if not math.isnan(v)]
    return statistics.median(real) if real else math.nan


def median_cell(cells: Sequence[Cell]) -> Cell:
    """Each figure's median over the runs (generations and moved of the median run)."""
    mid = sorted(cells, key=lambda c: c.join_to_stable_s)[len(cells) // 2]
    return Cell(mid.size, mid.protocol, mid.partitions,
                _median([c.join_to_stable_s for c in cells]),
                _median([c.keepers_pause_s for c in cells]),
                _median([c.kept_pause_s for c in cells]),
                _median([c.keepers_floor_s for c in cells]),
                _median([c.kept_floor_s for c in cells]),
                mid.generations, mid.moved_in_join, mid.revoke_delay_ms,
                _median([c.broker_join_to_stable_s for c in cells]),
                producer_gap_s=_median([c.producer_gap_s for c in cells]),
                producer_floor_s=_median([c.producer_floor_s for c in cells]))


def table(cells: Sequence[Cell]) -> str:
    lines = [
        "| consumers | revoke (ms) | variant | runs | join -> stable (s) | same, broker view (s) "
        "| pause, keepers (s) | floor (s) | pause, kept partitions of losers (s) | floor (s) "
        "| generations | moved | producer's longest gap (s) | floor (s) |",
        "|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for c in cells:
        lines.append(
            f"| {c.size} | {c.revoke_delay_ms} | {c.protocol} | {c.runs} | "
            f"{c.join_to_stable_s:.2f} | "
            f"{_s(c.broker_join_to_stable_s)} | "
            f"{_s(c.keepers_pause_s)} | {_s(c.keepers_floor_s)} | {_s(c.kept_pause_s)} | "
            f"{_s(c.kept_floor_s)} | {c.generations} | {c.moved_in_join} | "
            f"{_s(c.producer_gap_s)} | {_s(c.producer_floor_s)} |"
        )
    return "\n".join(lines)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def fmt_load(load: Sequence[float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)


def _java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "java unavailable"
    first = (out.stderr or out.stdout).splitlines()
    return first[0] if first else "java (unknown version)"


def machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as fh:
        cpu = next((line.split(":", 1)[1].strip() for line in fh
                    if line.startswith("model name")), cpu)
    import kafka

    parts = [f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}",
             f"CPython {platform.python_version()}, kafka-python {kafka.__version__}"]
    with contextlib.suppress(ImportError):
        import confluent_kafka

        version: object = confluent_kafka.version()
        if isinstance(version, tuple):
            version = version[0]
        parts.append(f"confluent-kafka {version} (librdkafka {confluent_kafka.libversion()[0]})")
    with contextlib.suppress(ImportError):
        import aiokafka

        parts.append(f"aiokafka {aiokafka.__version__}")
    with contextlib.suppress(Exception):
        from ._timing_clients import _jars_dir

        jar = next(_jars_dir().glob("kafka-clients-*.jar"))
        parts.append(f"{jar.stem} on {_java_version()}")
    return ", ".join(parts)


def _variants_table() -> str:
    lines = ["| variant | client | strategy | join -> stable from |", "|---|---|---|---|"]
    for name, v in VARIANTS.items():
        strategy = v.strategy.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        client = {"kafka-python": ("`kafka_assignors.kafka_python.KafkaConsumer` (the runtime)"
                                   if v.runtime else "kafka-python `KafkaConsumer` (plain)"),
                  "confluent": "`kafka_assignors.confluent.Consumer` (the bridge)",
                  "aiokafka": ("`kafka_assignors.aiokafka.AIOKafkaConsumer` (cooperative)"
                               if v.runtime else "aiokafka `AIOKafkaConsumer` (its own)"),
                  "java": "Java `KafkaConsumer` (kafka-clients), `group.protocol=classic`",
                  }[v.client]
        if v.consumer_protocol:  # KIP-848: the broker assigns with ``strategy``
            client = {"kafka-python": "`kafka_assignors.kafka_python.KafkaConsumer`, "
                                      "`group_protocol=\"consumer\"`",
                      "java": "Java `KafkaConsumer` (kafka-clients), `group.protocol=consumer`",
                      }[v.client]
            strategy += " (on the broker)"
        lines.append(f"| {name} | {client} | `{strategy}` | {v.stable_source} |")
    return "\n".join(lines)


def rows_from(data: dict[str, Any]) -> list[Cell]:
    """The median rows of a results JSON, in plan order (variants in run order)."""
    planned = {(p["size"], p["revoke_delay_ms"]): p["repeats"] for p in data["plan"]}
    groups: dict[tuple[int, int, str], list[Cell]] = {}
    for raw in data["cells"]:
        cell = Cell(**raw)
        groups.setdefault((cell.size, cell.revoke_delay_ms, cell.protocol), []).append(cell)
    order = [(p["size"], p["revoke_delay_ms"]) for p in data["plan"]]
    rows = []
    for key, cells in sorted(groups.items(), key=lambda kv: order.index(kv[0][:2])):
        row = median_cell(cells)
        row.runs = f"{len(cells)}/{planned.get(key[:2], len(cells))}"
        rows.append(row)
    return rows


def machine_note(data: dict[str, Any]) -> str:
    return (f"{data['machine']}; load average (1/5/15 min) {fmt_load(data['load_start'])} at "
            f"the start, {fmt_load(data['load'])} at the end; {data['rate']:.0f} msg/s; the run "
            f"took {data['minutes']:.0f} min.")


def what_ran(data: dict[str, Any]) -> str:
    plan = [(p["size"], p["revoke_delay_ms"], p["repeats"]) for p in data["plan"]]
    done = int(data["done"])
    ran = "; ".join(f"{n} members, revoke {d} ms, {r} run(s)" for n, d, r in plan[:done])
    left = "; ".join(f"{n} members, revoke {d} ms" for n, d, _ in plan[done:])
    failures = data.get("failures", [])
    return " ".join(
        [f"Ran: {ran} (each figure: the median over the runs; `runs` = runs that completed "
         "/ started)."]
        + ([f"Not run (the run was still going or stopped): {left}."] if left else [])
        + ([data["note"]] if data.get("note") else [])
        + ([f"{len(failures)} run(s) failed: "
            + "; ".join(f"{f['size']}/{f['revoke_delay_ms']} ms {f['protocol']} run "
                        f"{f['repeat']}: {f['error'][:300]}" for f in failures)]
           if failures else []))


#: issue 12's targets: cooperative variant -> the eager variant of the same client
TARGETS = {"cooperative": "eager", "bridge-cooperative": "bridge-eager",
           "java-cooperative": "eager"}


def _amount(x: float) -> str:
    return f"{x:.2f}" if x >= 0.01 else f"{x:.3f}"


def targets(rows: Sequence[Cell]) -> str:
    """Issue 12's targets per row: keepers' pause <= floor + 50 ms, join -> stable <= 1.2x
    the same client's eager (Java: kafka-python eager, for reference only)."""
    by = {(c.size, c.revoke_delay_ms, c.protocol): c for c in rows}
    lines = ["| consumers | revoke (ms) | variant | pause, keepers - floor (s) (<= 0.05) "
             "| join -> stable / eager (<= 1.2) |", "|--:|--:|---|--:|--:|"]
    for c in rows:
        if c.protocol not in TARGETS:
            continue
        eager = by.get((c.size, c.revoke_delay_ms, TARGETS[c.protocol]))
        excess = c.keepers_pause_s - c.keepers_floor_s
        reference = c.protocol.startswith("java")
        pause = ("-" if math.isnan(excess) else f"{excess:+.2f}" + (
            "" if reference else " met" if excess <= 0.05 else
            f" **missed by {_amount(excess - 0.05)} s**"))
        if eager is None or not eager.join_to_stable_s:
            ratio_text = "-"
        else:
            ratio = c.join_to_stable_s / eager.join_to_stable_s
            over = c.join_to_stable_s - 1.2 * eager.join_to_stable_s
            ratio_text = f"{ratio:.2f}x {eager.protocol}" + (
                " (reference)" if reference else " met" if ratio <= 1.2 else
                f" **missed by {over:.2f} s** ({ratio - 1.2:.2f}x)")
        lines.append(f"| {c.size} | {c.revoke_delay_ms} | {c.protocol} | {pause} "
                     f"| {ratio_text} |")
    return "\n".join(lines)


def markdown(data: dict[str, Any], rows: Sequence[Cell]) -> str:
    return f"""# Rebalance timings: every client, eager and cooperative, side by side

`{data['command']}` ({data['started']} to {data['ended']}).

{what_ran(data)}

{machine_note(data)} One broker (Apache Kafka 4.4.0, KRaft) on the same machine. Every member has
session timeout 10 s and heartbeat interval 1 s. The load averages include the benchmark's
own member processes and broker (31 consumer processes on 2 cores in the largest cell; the
Java members are threads of one JVM).

Each row: N members consume a topic of max(12, 2N) partitions that the producer writes
continuously (300 msg/s, round robin over the partitions, from a process of its own); once
every member consumes, one more member joins. The variants run interleaved (one cell of
each in turn, on a fresh topic and group), so drifting load hits every variant alike.

{_variants_table()}

**eager** and **cooperative-plain** are what a plain `kafka.KafkaConsumer` with our assignor
does (kafka-python's own rebalance behaviour); **cooperative** is the same assignor with the
runtime (`kafka_assignors.kafka_python.KafkaConsumer`). The bridge members call
`poll(0.05)` one message at a time, aiokafka members `getmany(timeout_ms=50)`, kafka-python
members `poll(timeout_ms=1000)` and Java members `poll(1 s)` (all return as soon as records
are there). Every member reports each record it is handed, with CLOCK_MONOTONIC (Python
`time.monotonic()`, Java `System.nanoTime()`, the same clock on Linux).

* **join -> stable**: from the joiner subscribing (kafka-python, bridge: consumer created
  and subscribed, about to send JoinGroup; aiokafka: before `start()`, which connects and
  joins; Java: `subscribe()` before the first `poll()`, which connects and joins) until the
  last member reports STABLE on the final generation *holding its final assignment* (both
  rounds of a cooperative rebalance included). kafka-python, the bridge and aiokafka report
  their state; the Java consumer has no state accessor, so a Java member counts as stable at
  its `onPartitionsAssigned` (called at the end of every round, also with no partition
  added) of the final generation. On the consumer group protocol (KIP-848; the
  `*consumer-protocol` variants, the group's `consumer.session.timeout.ms` 10 s and
  `consumer.heartbeat.interval.ms` 1 s as group configs) a generation is the member epoch,
  which the broker bumps on every member; kafka-python's member reports STABLE once its
  acknowledgement is answered, a Java member its epoch and assignment after each poll.
* **same, broker view**: from the same start until DescribeGroups (polled every 50 ms from
  the benchmark) first shows the group Stable with N+1 members and every partition assigned
  (a cooperative first round leaves the revoked partitions unassigned, so only the last
  round counts): the same yardstick for every client, later than the true moment by up to
  the polling interval plus one request (about 60 ms), and blind to the time members take
  to receive and apply the assignment after the broker has it. `-` for consumer-protocol
  groups, which DescribeGroups does not describe.
* **pause, keepers**: the longest gap between two records processed by a member that was
  already there and keeps all its partitions, from the join until 3 s after stable.
* **pause, kept partitions of losers**: the same over the partitions they keep, for
  members that lose some (their revocation callback, which sleeps `revoke` ms, runs on the
  consuming thread in every client).
* **floor**: each pause measured the same way over the 5 s before the join (the producer's
  and the member's own gaps: the noise floor). `-`: no member of that kind in the cell (with
  3 members on 12 partitions, every member gives one partition to the joiner).
* **generations**: rebalances the join caused; **moved**: partitions that changed owner.
* **producer's longest gap**: the longest time between two sends of the producer (any
  partition) over the pauses' window, and over the floor's: a stall of the machine, which
  every member sees, not of a consumer (`-`: not recorded in this run).

{table(rows)}

Issue 12's targets, from the medians above (the Java consumer is compared with kafka-python
eager, for reference; no target applies to it). `-`: no keeper in the cell.

{targets(rows)}

How to read it:

* kafka-python 3.0.12 alone returns no records from `poll()` while any rebalance of its
  member is in progress, cooperative ones included (**cooperative-plain**: the kept
  partitions of members that lose some stop for the whole two-round rebalance). With the
  runtime, cooperative members keep fetching and returning the partitions they keep; a
  cooperative join still takes two rounds, and members learn of each round at a heartbeat
  (as in the Java consumer, the second round completes about one heartbeat interval, 1.0 s,
  after the first, when the member that revoked nothing, here the joiner, learns of it at
  its next heartbeat: seen in a separate 4+1-member run).
* Eager pauses are short here because the members' heartbeats run in step: every member
  restarts its heartbeat timer when the previous rebalance completes, so they learn of the
  join at about the same moment and nobody waits long in JoinGroup for the others (checked
  in a separate 6+1-member run: the six kafka-python members revoked within 70 ms of each
  other, the six aiokafka members within 6 ms). Anything that puts the members' heartbeats
  out of step (different intervals, a busy member) lengthens the eager pause of the members
  that rejoin first; and in eager every member stops, not only those that lose partitions.
* With 3 members on 12 partitions every member gives one partition to the joiner, so there
  are no keepers (`-`); the kept partitions of losers stop for the revocation callback
  (`revoke` ms), which runs on the consuming thread in every client, the Java one included.
* The floors come from the same members on the same shared machine; differences under
  about 0.1 s are within noise (see the floors and the load averages).
"""
