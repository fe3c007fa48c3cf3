"""A large aiokafka group: it forms, goes through a rolling restart of every member, and
settles each time; aiokafka alone (``roundrobin``), our eager assignor and our cooperative
consumer side by side on one broker. Printed and written, not asserted.

    python -m benchmarks.aiokafka_large_group                       # starts a broker in Docker
    python -m benchmarks.aiokafka_large_group --members 100 --batch 10 \\
        --json benchmarks/results/aiokafka_large_group.json \\
        --markdown benchmarks/results/aiokafka_large_group.md      # the committed results

All members of a variant run in one process, on one event loop (as a service holding many
consumers does, the case where an assignor that keeps its state on its class mixes the
members up). A topic of 2 x members partitions; the group forms; then ``--batch`` members at
a time are stopped and as many new ones started, until every member has been replaced. After
each step: seconds until every live member holds its final assignment on one generation,
every partition exactly once (or the step's bound: "never").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

from kafka_assignors.embedded import start_single_broker
from kafka_assignors.embedded.admin import create_topic, delete_topic

VARIANTS = ("aiokafka-roundrobin", "aiokafka-eager", "aiokafka-cooperative")
STEP_BOUND_S = 180.0


def _consumer(variant: str, bootstrap: str, group: str, name: str) -> Any:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    from kafka_assignors.aiokafka import AIOKafkaConsumer as Cooperative
    from kafka_assignors.aiokafka import (
        BalancedStickyAssignor,
        CooperativeBalancedStickyAssignor,
    )

    cls: Any
    strategy: Any
    if variant == "aiokafka-roundrobin":
        cls, strategy = AIOKafkaConsumer, RoundRobinPartitionAssignor
    elif variant == "aiokafka-eager":
        cls, strategy = AIOKafkaConsumer, BalancedStickyAssignor()
    else:
        cls, strategy = Cooperative, CooperativeBalancedStickyAssignor()
    return cls(bootstrap_servers=bootstrap, group_id=group, client_id=name,
               partition_assignment_strategy=(strategy,), session_timeout_ms=30_000,
               heartbeat_interval_ms=3_000, rebalance_timeout_ms=60_000,
               auto_offset_reset="earliest")


class Group:
    """``members`` consumers of one variant in this event loop, each reading in a task."""

    def __init__(self, variant: str, bootstrap: str, topic: str, partitions: int) -> None:
        self.variant, self.bootstrap, self.topic = variant, bootstrap, topic
        self.group = f"large-{variant}-{uuid.uuid4().hex[:6]}"
        self.partitions = partitions
        self.live: dict[str, tuple[Any, asyncio.Task[None]]] = {}
        self.counter = 0

    async def add(self, n: int) -> None:
        async def read(consumer: Any) -> None:
            while True:
                await consumer.getmany(timeout_ms=500)

        started = []
        for _ in range(n):
            name = f"m{self.counter}"
            self.counter += 1
            consumer = _consumer(self.variant, self.bootstrap, self.group, name)
            consumer.subscribe([self.topic])
            started.append((name, consumer))
        # start() waits for the first assignment: every new member starts at once
        await asyncio.gather(*(c.start() for _, c in started))
        for name, consumer in started:
            self.live[name] = (consumer, asyncio.create_task(read(consumer)))

    async def remove(self, names: Sequence[str]) -> None:
        async def stop(name: str) -> None:
            consumer, task = self.live.pop(name)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await consumer.stop()

        await asyncio.gather(*(stop(n) for n in names))

    def settled(self) -> bool:
        generations, held = set(), []
        for consumer, _ in self.live.values():
            if consumer._subscription.reassignment_in_progress:
                return False
            generations.add(consumer._coordinator.generation)
            held.extend(consumer.assignment())
        return (len(generations) == 1 and len(held) == self.partitions
                and len(set(held)) == self.partitions)

    async def wait_settled(self, since: float) -> float | None:
        """Seconds from ``since`` until settled (held 1 s), or None within the bound."""
        first: float | None = None
        while time.monotonic() - since < STEP_BOUND_S:
            if self.settled():
                first = first or time.monotonic()
                if time.monotonic() - first >= 1.0:
                    return round(first - since, 2)
            else:
                first = None
            await asyncio.sleep(0.05)
        return None


async def run_variant(variant: str, bootstrap: str, members: int, batch: int) -> dict[str, Any]:
    partitions = 2 * members
    topic = f"large-{variant}-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic, partitions)
    group = Group(variant, bootstrap, topic, partitions)
    steps: list[float | None] = []
    try:
        t0 = time.monotonic()
        await group.add(members)
        formation = await group.wait_settled(t0)
        originals = list(group.live)
        for i in range(0, len(originals), batch):
            t0 = time.monotonic()
            await group.remove(originals[i:i + batch])
            await group.add(len(originals[i:i + batch]))
            steps.append(await group.wait_settled(t0))
            print(f"  {variant}: restart {i // batch + 1}: settled in {steps[-1]} s",
                  file=sys.stderr, flush=True)
    finally:
        await group.remove(list(group.live))
        delete_topic(bootstrap, topic)
    done = [s for s in steps if s is not None]
    return {"variant": variant, "members": members, "partitions": partitions, "batch": batch,
            "formation_s": formation, "restarts": len(steps),
            "never_settled": len(steps) - len(done),
            "restart_median_s": round(statistics.median(done), 2) if done else None,
            "restart_max_s": max(done) if done else None, "steps_s": steps}


def markdown(data: dict[str, Any]) -> str:
    lines = [
        "# A large aiokafka group through a rolling restart",
        "",
        f"`{data['command']}`",
        "",
        f"{data['members']} members of each variant in one process, a topic of "
        f"{2 * data['members']} partitions; the group forms, then {data['batch']} members at a "
        "time are stopped and as many started until every member was replaced. Seconds until "
        "every member holds its final assignment on one generation, every partition once.",
        "",
        f"Machine: {data['machine']}; load average (1 min) {data['load'][0]:.1f} at the start, "
        f"{data['load'][1]:.1f} at the end.",
        "",
        "| variant | formation (s) | restarts | never settled | restart median (s) | "
        "restart max (s) |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for r in data["rows"]:
        lines.append(f"| {r['variant']} | {r['formation_s']} | {r['restarts']} | "
                     f"{r['never_settled']} | {r['restart_median_s']} | {r['restart_max_s']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=os.environ.get("BOOTSTRAP_SERVERS"))
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # (aiokafka warns at every heartbeat mid-rebalance)
    command = "python -m benchmarks.aiokafka_large_group " + " ".join(
        sys.argv[1:] if argv is None else argv)
    load_start = os.getloadavg()[0]
    cluster = None if args.bootstrap else start_single_broker()
    bootstrap = args.bootstrap or cluster.bootstrap  # type: ignore[union-attr]
    rows = []
    try:
        for variant in args.variants.split(","):
            rows.append(asyncio.run(run_variant(variant, bootstrap, args.members, args.batch)))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        if cluster is not None:
            cluster.close()
    from ._timing_report import machine

    data = {"command": command, "members": args.members, "batch": args.batch,
            "machine": machine(), "load": [load_start, os.getloadavg()[0]], "rows": rows}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(markdown(data))
    print(markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
