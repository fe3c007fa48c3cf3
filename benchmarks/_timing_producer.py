"""The rebalance benchmark's producer, in a process of its own: the benchmark's own process
reads every member's events, and a producer thread there would stall whenever that work
holds the interpreter, which the members would see as a pause of their partitions.

    python -m benchmarks._timing_producer BOOTSTRAP TOPIC PARTITIONS RATE OUT

Writes to every partition in turn at RATE messages/s until a line ``stop`` (or EOF) on
stdin, then writes the CLOCK_MONOTONIC time of each send to OUT, one per line.
"""

from __future__ import annotations

import sys
import threading
import time

from kafka import KafkaProducer


def main(argv: list[str]) -> int:
    bootstrap, topic, partitions_text, rate_text, out = argv
    partitions, rate = int(partitions_text), float(rate_text)
    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), linger_ms=5)
    stop = threading.Event()

    def watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    sent: list[float] = []
    start, n = time.monotonic(), 0
    while not stop.is_set():
        delay = start + n / rate - time.monotonic()
        if delay > 0 and stop.wait(delay):
            break
        sent.append(time.monotonic())
        producer.send(topic, value=b"x", partition=n % partitions)
        n += 1
    producer.flush(timeout=10)
    producer.close(timeout=10)
    with open(out, "w", encoding="utf-8") as fh:
        fh.writelines(f"{t:.6f}\n" for t in sent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
