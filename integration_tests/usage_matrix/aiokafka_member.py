"""An aiokafka member of the mixed-group cell: our eager assignor, a ``getmany()`` loop with
aiokafka's auto-commit, speaking the matrix's event and command protocol (package docstring).
Started through ``confluent_member.py`` (``kind: aiokafka``)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from typing import Any

from .confluent_member import SENTINEL, emit, error_name, tps


def main(cfg: dict[str, Any]) -> None:
    emit("started")
    stop = threading.Event()

    def read_commands() -> None:
        for line in sys.stdin:
            if line.strip() and json.loads(line).get("do") == "stop":
                break
        stop.set()

    threading.Thread(target=read_commands, daemon=True).start()
    try:
        asyncio.run(_run(cfg, stop))
    except Exception as exc:
        emit("exception", where="loop", type=error_name(exc), message=str(exc)[:300],
             fatal=True)
        sys.exit(1)


async def _run(cfg: dict[str, Any], stop: threading.Event) -> None:
    from aiokafka import AIOKafkaConsumer

    from kafka_assignors import aiokafka as ours

    consumer = AIOKafkaConsumer(
        *cfg["topics"], bootstrap_servers=cfg["bootstrap"], group_id=cfg["group_id"],
        client_id=cfg["name"], auto_offset_reset="earliest",
        partition_assignment_strategy=(getattr(ours, cfg["assignor"])(),),
        session_timeout_ms=10000, heartbeat_interval_ms=1000)
    await consumer.start()
    emit("subscribed", topics=cfg["topics"])
    held: list[list[Any]] = []
    longest = 0.0
    try:
        while not stop.is_set():
            started = time.monotonic()
            batches = await consumer.getmany(timeout_ms=1000)
            longest = max(longest, time.monotonic() - started)
            rows = [[r.topic, r.partition, r.offset, round(time.monotonic(), 4)]
                    for records in batches.values() for r in records if r.value != SENTINEL]
            if rows:
                emit("records", r=rows)
            now = tps(consumer.assignment())
            if now != held:
                held = now
                emit("assignment", held=held)
    finally:
        emit("closing", longest_call=round(longest, 4))
        await consumer.stop()
        emit("closed")
