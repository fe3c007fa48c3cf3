"""Throughput of the confluent bridge against a plain confluent-kafka consumer (``range``).

    python -m benchmarks.confluent_bridge                       # starts a broker (Docker)
    BOOTSTRAP_SERVERS=127.0.0.1:9092 python -m benchmarks.confluent_bridge --messages 2000000

Both consumers read the same topic from the beginning, each in a fresh group
of one member.  By default they run at the same time, in two processes that
start reading together (after both have joined and received a first message),
so both see the same machine load; ``--sequential`` runs them one after the
other instead, alternating which goes first.  The rate is messages per second
from the first message to the last.  The bridge must reach at least 80% of the
plain consumer's rate (issue 7): the median ratio over the rounds is reported.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

TARGET = 0.80
NAMES = ("plain-range", "bridge")
# consume()'s arguments after ``name``: bootstrap, topic, count, api, timeout_s
ConsumeArgs = tuple[str, str, int, str, float]


@dataclass
class Run:
    name: str
    messages: int
    join_s: float
    read_s: float
    cpu_s: float

    @property
    def rate(self) -> float:
        return self.messages / self.read_s


def produce(bootstrap: str, topic: str, partitions: int, count: int, size: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import (  # type: ignore[attr-defined]  # not re-exported
        AdminClient,
        NewTopic,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(30)
    producer = Producer({
        "bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000,
        "compression.type": "lz4", "queue.buffering.max.messages": 1_000_000,
    })
    value = b"x" * size
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 50_000 == 0:
            producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError("producer could not deliver every message within 120 s")


def _make(name: str, config: dict[str, Any]) -> Any:
    if name == "bridge":
        from kafka_assignors.confluent import BridgedConsumer

        return BridgedConsumer(config)  # default strategy: cooperative-balanced-sticky
    from confluent_kafka import Consumer

    return Consumer({**config, "partition.assignment.strategy": "range"})


def consume(name: str, bootstrap: str, topic: str, count: int, api: str, timeout_s: float,
            barrier: Any = None) -> Run:
    """Read ``count`` messages; time from the first one (after ``barrier``) to the last."""
    consumer = _make(name, {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{name}-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
    })
    try:
        started = time.monotonic()
        deadline = started + timeout_s
        consumer.subscribe([topic])
        seen = 0
        while not seen and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            seen = int(msg is not None and msg.error() is None)
        joined = time.monotonic()
        if barrier is not None:
            barrier.wait(timeout_s)
        first, cpu0 = time.monotonic(), time.process_time()
        while seen < count and time.monotonic() < deadline:
            if api == "poll":
                msg = consumer.poll(1.0)
                if msg is not None and msg.error() is None:
                    seen += 1
            else:
                seen += sum(m.error() is None for m in consumer.consume(500, 1.0))
        done, cpu = time.monotonic(), time.process_time() - cpu0
        if seen < count:
            raise RuntimeError(f"{name}: read {seen} of {count} messages in {timeout_s} s")
        return Run(name, count - 1, joined - started, done - first, cpu)
    finally:
        consumer.close()


def _child(name: str, args: ConsumeArgs, barrier: Any, results: Any) -> None:
    try:
        results.put(consume(name, *args, barrier=barrier))
    except BaseException as exc:
        results.put(exc)
        barrier.abort()


def concurrent_round(args: ConsumeArgs, timeout_s: float) -> dict[str, Run]:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(len(NAMES)), ctx.Queue()
    procs = [ctx.Process(target=_child, args=(n, args, barrier, results)) for n in NAMES]
    for p in procs:
        p.start()
    try:
        got = [results.get(timeout=timeout_s + 60) for _ in procs]
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    errors = [g for g in got if isinstance(g, BaseException)]
    if errors:
        raise RuntimeError(f"a consumer failed: {errors[0]!r}")
    return {run.name: run for run in got}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=12)
    parser.add_argument("--size", type=int, default=100, help="value size in bytes")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--api", choices=("poll", "consume"), default="poll")
    parser.add_argument("--sequential", action="store_true", help="one consumer at a time")
    parser.add_argument("--timeout", type=float, default=300.0, help="per consumer, seconds")
    args = parser.parse_args(argv)

    cluster = None
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS")
    if not bootstrap:
        from kafka_assignors.embedded import start_single_broker

        cluster = start_single_broker()
        bootstrap = cluster.bootstrap
    try:
        topic = f"bench-bridge-{uuid.uuid4().hex[:8]}"
        t0 = time.monotonic()
        produce(bootstrap, topic, args.partitions, args.messages, args.size)
        mode = "sequential" if args.sequential else "concurrent"
        print(f"produced {args.messages:,} x {args.size} B into {args.partitions} partitions "
              f"in {time.monotonic() - t0:.1f} s; api={args.api}, {mode}", flush=True)
        shared = (bootstrap, topic, args.messages, args.api, args.timeout)
        ratios = []
        print(f"{'round':>5} {'consumer':<12} {'join s':>7} {'read s':>7} {'cpu s':>6} "
              f"{'msg/s':>11}")
        for r in range(args.rounds):
            if args.sequential:
                order = NAMES if r % 2 == 0 else NAMES[::-1]
                runs = {name: consume(name, *shared) for name in order}
            else:
                runs = concurrent_round(shared, args.timeout)
            for name in NAMES:
                run = runs[name]
                print(f"{r + 1:>5} {run.name:<12} {run.join_s:>7.2f} {run.read_s:>7.2f} "
                      f"{run.cpu_s:>6.2f} {run.rate:>11,.0f}", flush=True)
            ratios.append(runs["bridge"].rate / runs["plain-range"].rate)
        median = statistics.median(ratios)
        verdict = "PASS" if median >= TARGET else "FAIL"
        print(f"bridge / plain: {', '.join(f'{x:.2f}' for x in ratios)}; "
              f"median {median:.2f} (target >= {TARGET:.2f}): {verdict}")
        return 0 if median >= TARGET else 1
    finally:
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    sys.exit(main())
