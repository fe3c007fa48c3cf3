"""One KIP-848 group member: a plain confluent-kafka consumer with ``group.protocol=consumer``
and ``group.remote.assignor=balanced-sticky``, configured as docs/migration.md tells users,
run as its own process by ``test_protocol_migration_live``.

    python integration_tests/kip848_member.py '<config JSON>'

Reports JSON lines on stdout in the kafka-python members' format
(:mod:`kafka_assignors.embedded.events`): ``assigned`` / ``revoked`` / ``lost`` with the
partitions of the callback and the member's whole assignment, ``released`` when a revoke
callback returns, ``record`` per record (reported before the next poll, so before its
offset can be committed), ``error`` for every error librdkafka reports. Stops cleanly
(``close()``: commit, leave) on a ``stop`` line or stdin EOF.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from kafka_assignors.embedded._member import Emitter, script_main, stop_on_stdin


def run(cfg: dict[str, Any], emitter: Emitter) -> None:
    from confluent_kafka import Consumer

    emit = emitter.emit
    stop = threading.Event()
    stop_on_stdin(stop.set)

    def on_error(err: Any) -> None:
        emit("error", code=err.name(), message=str(err))

    consumer = Consumer({
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": cfg["group"],
        "client.id": cfg["name"],
        "group.protocol": "consumer",
        "group.remote.assignor": cfg.get("assignor", "balanced-sticky"),
        "auto.offset.reset": "earliest",
        "error_cb": on_error,
    })
    held: set[tuple[str, int]] = set()

    def tps(partitions: Any) -> list[list[Any]]:
        return sorted([p.topic, p.partition] for p in partitions)

    def on_assign(_: Any, partitions: Any) -> None:
        held.update((p.topic, p.partition) for p in partitions)
        emit("assigned", partitions=tps(partitions), assignment=sorted(map(list, held)),
             state="STABLE", generation=0)

    def on_revoke(_: Any, partitions: Any) -> None:
        emit("revoked", partitions=tps(partitions), assignment=sorted(map(list, held)),
             state="REBALANCING", generation=0)
        held.difference_update((p.topic, p.partition) for p in partitions)
        emit("released", partitions=tps(partitions))

    def on_lost(_: Any, partitions: Any) -> None:
        emit("lost", partitions=tps(partitions), assignment=sorted(map(list, held)),
             state="REBALANCING", generation=0)
        held.difference_update((p.topic, p.partition) for p in partitions)

    consumer.subscribe(cfg["topics"], on_assign=on_assign, on_revoke=on_revoke,
                       on_lost=on_lost)
    emit("started")
    while not stop.is_set():
        for msg in consumer.consume(200, 0.1):
            error = msg.error()
            if error is not None:
                emit("error", code=error.name(), message=str(error))
                continue
            emit("record", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                 value=(msg.value() or b"").decode())
    emit("closing")
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    sys.exit(script_main(run))
