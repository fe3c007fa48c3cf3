"""The embedded broker's JVM options against Kafka's default ones, side by side.

    python -m benchmarks.broker_jvm          # about 7 minutes; writes results/broker_jvm.{json,md}

Two single brokers start at the same moment, one with Kafka's default JVM options (G1, the
C2 compiler) and one with the embedded broker's (``kafka_assignors.embedded.cluster.JVM_OPTS``),
and run the same rounds of work at the same time: per round, a 6-partition topic created,
three kafka-python consumers in one group polling it for 50 s, a producer writing 60 records a
second to it, the topic deleted. The figure is the CPU time each broker's container used
(Docker's stats): for its start-up and for each round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_assignors.embedded.admin import create_topic, delete_topic
from kafka_assignors.embedded.cluster import JVM_OPTS, start_single_broker

RESULTS = Path(__file__).resolve().parent / "results"
#: what Kafka's own start scripts use (kafka-run-class.sh) and the image's entrypoint defaults to
KAFKA_DEFAULT = ("-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
                 "-XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError "
                 "-Djava.awt.headless=true")
VARIANTS = {"Kafka's default (G1, C2)": KAFKA_DEFAULT, "embedded (serial GC, C1)": JVM_OPTS}
ROUND_S = 50
RATE = 60
CONSUMER = """
import sys, time
from kafka import KafkaConsumer
c = KafkaConsumer(sys.argv[1], bootstrap_servers=sys.argv[2], group_id=sys.argv[3],
                  auto_offset_reset="earliest")
end = time.monotonic() + float(sys.argv[4])
while time.monotonic() < end:
    c.poll(timeout_ms=1000)
c.close()
"""


def one_round(bootstrap: str, index: int) -> None:
    from confluent_kafka import Producer

    topic = f"jvm-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 6)
    members = [subprocess.Popen([sys.executable, "-c", CONSUMER, topic, bootstrap,
                                 f"{topic}-group", str(ROUND_S)]) for _ in range(3)]
    producer = Producer({"bootstrap.servers": bootstrap})
    end = time.monotonic() + ROUND_S
    i = 0
    while time.monotonic() < end:
        producer.produce(topic, str(i).encode(), partition=i % 6)
        producer.poll(0)
        i += 1
        time.sleep(1 / RATE)
    producer.flush(10)
    for member in members:
        member.wait(60)
    delete_topic(bootstrap, topic)


def run_variant(name: str, opts: str, rounds: int, out: dict[str, Any],
                ready: threading.Barrier) -> None:
    cluster = start_single_broker(extra_env={"KAFKA_JVM_PERFORMANCE_OPTS": opts})
    try:
        node = cluster.nodes[0]
        figures: dict[str, Any] = {"start-up": round(node.cpu_seconds(), 1), "rounds": []}
        ready.wait(300)  # the rounds of both brokers run at the same time
        for index in range(rounds):
            before = node.cpu_seconds()
            one_round(cluster.bootstrap, index)
            figures["rounds"].append(round(node.cpu_seconds() - before, 1))
        figures["total"] = round(figures["start-up"] + sum(figures["rounds"]), 1)
        out[name] = figures
    finally:
        cluster.close()


def markdown(result: dict[str, Any]) -> str:
    names = list(VARIANTS)
    fig = result["figures"]
    rows = ["start-up", *(f"round {i + 1}" for i in range(result["rounds"])), "total"]

    def value(name: str, row: str) -> float:
        f = fig[name]
        if row.startswith("round "):
            return float(f["rounds"][int(row.split()[1]) - 1])
        return float(f[row])

    lines = [
        "# The embedded broker's JVM against Kafka's default, side by side",
        "",
        "`python -m benchmarks.broker_jvm`: CPU seconds each broker's container used. Both "
        "brokers start together and run the same rounds at the same time (a 6-partition "
        f"topic, three kafka-python consumers in one group for {ROUND_S} s, a producer at "
        f"{RATE} records a second).",
        "",
        f"Machine: {result['machine']}; {result['date']}.",
        "",
        f"| | {' | '.join(names)} | ratio |",
        f"|---|{'---:|' * len(names)}---:|",
    ]
    for row in rows:
        a, b = value(names[0], row), value(names[1], row)
        lines.append(f"| {row} | {a:.1f} | {b:.1f} | {b / a:.2f}x |" if a else
                     f"| {row} | {a:.1f} | {b:.1f} | |")
    lines += ["", "JVM options:", ""]
    lines += [f"- {name}: `{opts}`" for name, opts in VARIANTS.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.broker_jvm")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {}
    ready = threading.Barrier(len(VARIANTS))
    threads = [threading.Thread(target=run_variant, args=(n, o, args.rounds, figures, ready))
               for n, o in VARIANTS.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(figures) != len(VARIANTS):
        print("a broker failed; nothing written", file=sys.stderr)
        return 1
    result = {
        "figures": figures, "rounds": args.rounds,
        "machine": f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "broker_jvm.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "broker_jvm.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
