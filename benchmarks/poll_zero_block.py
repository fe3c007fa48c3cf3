"""How long ``poll(timeout_ms=0)`` blocks while a cooperative group rebalances: kafka-python
alone beside kafka-python with the kafka-assignors runtime, on one live broker. Printed, not
asserted.

    python -m benchmarks.poll_zero_block                    # starts a broker in Docker
    python -m benchmarks.poll_zero_block --bootstrap 127.0.0.1:9092 --rounds 3

Each round, for each side in turn: two members (CooperativeBalancedStickyAssignor, auto-commit
every second, so the prepare step commits) consume a topic of 6 partitions a producer writes
continuously, each calling ``poll(timeout_ms=0)`` in a loop; once both read, a third member
joins, and the round ends 3 s after all three hold partitions. Every poll call is timed
(CLOCK_MONOTONIC). Reported per side: the longest poll(0) call from the join to the end, its
99th percentile, and the longest in the 5 s before the join (the noise floor). kafka-python
alone gives the prepare step's commit the poll's own time (0 ms) as well, so the goal is that
the runtime's longest poll(0) is no longer than kafka-python's alone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import kafka
from kafka import KafkaProducer

import kafka_assignors.kafka_python
from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.embedded import start_single_broker
from kafka_assignors.embedded.admin import create_topic, delete_topic

PARTITIONS = 6
BASELINE_S = 5.0
AFTER_S = 3.0
SIDES = ("kafka-python alone", "with the runtime")


class Member:
    """One consumer polling with timeout_ms=0 on its own thread, timing every call."""

    def __init__(self, bootstrap: str, topic: str, group: str, runtime: bool) -> None:
        # the runtime is what kafka_assignors.kafka_python.KafkaConsumer adds to kafka-python's
        made = kafka_assignors.kafka_python.KafkaConsumer if runtime else kafka.KafkaConsumer
        self.consumer = made(
            bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=True, auto_commit_interval_ms=1000,
            partition_assignment_strategy=[CooperativeBalancedStickyAssignor])
        self.consumer.subscribe([topic])
        self.calls: list[tuple[float, float]] = []  # (start, duration)
        self.records = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            got = self.consumer.poll(timeout_ms=0)
            self.calls.append((started, time.monotonic() - started))
            self.records += sum(len(batch) for batch in got.values())
            if not got:
                time.sleep(0.001)

    def holds(self) -> bool:
        return bool(self.consumer.assignment()) and self.records > 0

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)
        self.consumer.close()


class Producer:
    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
        self.stop = threading.Event()
        self.topic = topic
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        i = 0
        while not self.stop.is_set():
            self.producer.send(self.topic, str(i).encode(), partition=i % PARTITIONS)
            i += 1
            time.sleep(0.002)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.producer.close()


def _wait(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def one_side(bootstrap: str, runtime: bool) -> dict[str, float]:
    topic = f"poll0-{uuid.uuid4().hex[:8]}"
    group = f"{topic}-group"
    create_topic(bootstrap, topic, PARTITIONS)
    producer = Producer(bootstrap, topic)
    members = [Member(bootstrap, topic, group, runtime) for _ in range(2)]
    try:
        if not _wait(lambda: all(m.holds() for m in members), 60):
            raise RuntimeError("the first two members did not start reading")
        time.sleep(BASELINE_S)
        joined_at = time.monotonic()
        members.append(Member(bootstrap, topic, group, runtime))
        if not _wait(lambda: all(m.holds() for m in members), 90):
            raise RuntimeError("the third member was not taken in")
        time.sleep(AFTER_S)
        ended_at = time.monotonic()
    finally:
        for member in members:
            member.close()
        producer.close()
        with contextlib.suppress(Exception):
            delete_topic(bootstrap, topic)
    during = [d for m in members for s, d in m.calls if joined_at <= s <= ended_at]
    before = [d for m in members for s, d in m.calls if joined_at - BASELINE_S <= s < joined_at]
    return {"max_ms": max(during) * 1000,
            "p99_ms": statistics.quantiles(during, n=100)[98] * 1000,
            "floor_max_ms": max(before) * 1000,
            "rebalance_s": ended_at - AFTER_S - joined_at}


@contextlib.contextmanager
def broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    cluster = start_single_broker()
    try:
        yield cluster.bootstrap
    finally:
        cluster.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=os.environ.get("BOOTSTRAP_SERVERS"),
                        help="existing cluster (default: start one broker in Docker)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per side (default 2)")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    with broker(args.bootstrap) as bootstrap:
        for _ in range(args.rounds):
            for side, runtime in zip(SIDES, (False, True), strict=True):
                results[side].append(one_side(bootstrap, runtime))
    print(f"poll(timeout_ms=0) during a cooperative rebalance, {args.rounds} round(s) per side")
    print(f"{'side':<20} {'longest (ms)':>13} {'p99 (ms)':>9} {'floor (ms)':>11} "
          f"{'join->held (s)':>15}")
    for side, rounds in results.items():
        for r in rounds:
            print(f"{side:<20} {r['max_ms']:>13.1f} {r['p99_ms']:>9.2f} "
                  f"{r['floor_max_ms']:>11.1f} {r['rebalance_s']:>15.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
