"""A plain confluent-kafka (librdkafka) consumer as a group member process.

    python -m integration_tests.test_e2e._confluent_member '<config as JSON>'

Config: name, bootstrap, group_id, topics, strategy (librdkafka's
``partition.assignment.strategy``, e.g. ``"roundrobin,range"``), session_timeout_ms.
Reports JSON lines on stdout like the kafka-python members of the harness
(``started``, ``assigned``/``revoked`` with the full ``assignment``, ``record``,
``closing``, ``closed``, ``error``), each with a CLOCK_MONOTONIC ``mono``. Stops
cleanly (leaves the group) on a ``stop`` line, stdin EOF or SIGTERM; every wait is bounded.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from kafka_assignors.embedded._member import Emitter, script_main, stop_on_stdin


def _pairs(partitions: Any) -> list[list[Any]]:
    return sorted([p.topic, p.partition] for p in partitions)


def run(cfg: dict[str, Any], emitter: Emitter) -> int:
    from confluent_kafka import Consumer

    name = cfg["name"]
    stop = threading.Event()
    emit = emitter.emit
    stop_on_stdin(stop.set)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    consumer = Consumer({
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": cfg["group_id"],
        "client.id": name,
        "partition.assignment.strategy": cfg["strategy"],
        "session.timeout.ms": int(cfg.get("session_timeout_ms", 10_000)),
        "heartbeat.interval.ms": int(cfg.get("heartbeat_interval_ms", 1_000)),
        "auto.offset.reset": "earliest",
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 1_000,
        "topic.metadata.refresh.interval.ms": 2_000,
    })

    owned: set[tuple[str, int]] = set()

    # librdkafka applies the assignment after on_assign returns: track it here
    def on_assign(c: Any, partitions: Any) -> None:
        owned.update((p.topic, p.partition) for p in partitions)
        emit("assigned", partitions=_pairs(partitions), assignment=sorted(owned))

    def on_revoke(c: Any, partitions: Any) -> None:
        owned.difference_update((p.topic, p.partition) for p in partitions)
        emit("revoked", partitions=_pairs(partitions), assignment=sorted(owned))

    consumer.subscribe(list(cfg["topics"]), on_assign=on_assign, on_revoke=on_revoke)
    emit("subscribed", topics=list(cfg["topics"]), strategies=cfg["strategy"].split(","))
    while not stop.is_set():
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            emit("error", message=str(msg.error()))
            continue
        value = msg.value()
        emit("record", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
             value=value.decode("utf-8", "replace")[:100] if value is not None else None)
    emit("closing")
    consumer.close()
    emit("closed")
    return 0


def main(cfg: dict[str, Any], emitter: Emitter) -> int:
    emitter.emit("started")
    return run(cfg, emitter)


if __name__ == "__main__":
    sys.exit(script_main(main))
