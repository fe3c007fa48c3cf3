"""Group members of other client libraries for ``benchmarks.rebalance_timings``.

    python -m benchmarks._timing_members confluent '<MemberConfig JSON>'
    python -m benchmarks._timing_members aiokafka '<MemberConfig JSON>'

Each reports JSON lines in the format of kafka-python members run by
:class:`kafka_assignors.embedded.GroupRunner` (:mod:`kafka_assignors.embedded.events`):
``subscribed``, ``assigned``/``revoked`` (the rebalance callbacks, with a snapshot:
``generation``, ``member_id``, ``state``, ``protocol``, ``assignment``), ``state`` (the
snapshot changed), one ``record`` per record (``mono`` taken when the client returned it),
``closing``/``closed``, ``error``. The revocation callback sleeps ``revoke_delay_ms`` when
partitions are revoked. Stops cleanly on a ``stop`` line or stdin EOF.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback
from typing import Any

from kafka_assignors.embedded._member import Emitter, stop_on_stdin, take_stdout
from kafka_assignors.embedded.events import MemberConfig

#: seconds between two snapshot checks of a member's loop
SNAPSHOT_EVERY = 0.02


def run_confluent(cfg: MemberConfig, emitter: Emitter) -> None:
    """A member on :class:`kafka_assignors.confluent.Consumer`, polled one message at a time."""
    from kafka_assignors.confluent import Consumer

    stop = threading.Event()
    stop_on_stdin(stop.set)
    consumer = Consumer({
        "bootstrap.servers": cfg.bootstrap,
        "group.id": cfg.group_id,
        "client.id": cfg.name,
        "partition.assignment.strategy": ",".join(cfg.strategies),
        "auto.offset.reset": cfg.auto_offset_reset,
        "session.timeout.ms": cfg.session_timeout_ms,
        "heartbeat.interval.ms": cfg.heartbeat_interval_ms,
        "max.poll.interval.ms": cfg.max_poll_interval_ms,
    })

    def snapshot() -> dict[str, Any]:
        md = consumer.group_metadata()
        return {"generation": int(md.generation_id), "member_id": str(md.member_id),
                "state": str(md.state).strip("<>").upper(), "protocol": cfg.strategies[0],
                "assignment": sorted([tp.topic, tp.partition] for tp in consumer.assignment())}

    def on_revoke(_c: Any, partitions: Any) -> None:
        emitter.emit("revoked", partitions=sorted([p.topic, p.partition] for p in partitions),
                     **snapshot())
        if cfg.revoke_delay_ms and partitions:
            time.sleep(cfg.revoke_delay_ms / 1000)
            emitter.emit("released")

    def on_assign(_c: Any, partitions: Any) -> None:
        emitter.emit("assigned", partitions=sorted([p.topic, p.partition] for p in partitions),
                     **snapshot())

    consumer.subscribe(list(cfg.topics), on_assign=on_assign, on_revoke=on_revoke)
    emitter.emit("subscribed", topics=list(cfg.topics), strategies=list(cfg.strategies))
    last: dict[str, Any] | None = None
    next_check = 0.0
    try:
        while not stop.is_set():
            msg = consumer.poll(0.05)
            if msg is not None and msg.error() is None:
                emitter.emit("record", topic=msg.topic(), partition=msg.partition(),
                             offset=msg.offset())
            now = time.monotonic()
            if now >= next_check:
                next_check = now + SNAPSHOT_EVERY
                state = snapshot()
                if state != last:
                    emitter.emit("state", **state)
                    last = state
    finally:
        emitter.emit("closing")
        consumer.close()
        emitter.emit("closed")


def _aiokafka_assignor(wire_name: str) -> Any:
    """aiokafka's ``roundrobin``, or our assignor of that wire name for aiokafka."""
    if wire_name == "roundrobin":
        from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        return RoundRobinPartitionAssignor
    from kafka_assignors.aiokafka import (
        BalancedStickyAssignor,
        CooperativeBalancedStickyAssignor,
    )

    known = {"balanced-sticky": BalancedStickyAssignor,
             "cooperative-balanced-sticky": CooperativeBalancedStickyAssignor}
    if wire_name not in known:
        raise ValueError(f"aiokafka member: {wire_name!r} is not wired")
    return known[wire_name]()


async def run_aiokafka(cfg: MemberConfig, emitter: Emitter) -> None:
    """A member on aiokafka's AIOKafkaConsumer (``runtime``: ours) with the given assignor."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener

    from kafka_assignors.aiokafka import AIOKafkaConsumer as Cooperative

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    stop_on_stdin(lambda: loop.call_soon_threadsafe(stop.set))
    assignors = tuple(_aiokafka_assignor(w) for w in cfg.strategies)
    assignor = assignors[0]
    consumer = (Cooperative if cfg.runtime else AIOKafkaConsumer)(
        bootstrap_servers=cfg.bootstrap, group_id=cfg.group_id, client_id=cfg.name,
        partition_assignment_strategy=assignors,
        session_timeout_ms=cfg.session_timeout_ms,
        heartbeat_interval_ms=cfg.heartbeat_interval_ms,
        max_poll_interval_ms=cfg.max_poll_interval_ms,
        auto_offset_reset=cfg.auto_offset_reset, enable_auto_commit=True,
    )

    def snapshot() -> dict[str, Any]:
        coordinator = consumer._coordinator
        generation = int(getattr(coordinator, "generation", -1))
        rebalancing = bool(consumer._subscription.reassignment_in_progress)
        state = ("UNJOINED" if generation <= 0 else "REBALANCING" if rebalancing
                 else "STABLE")
        return {"generation": generation,
                "member_id": str(getattr(coordinator, "member_id", "")),
                "state": state, "protocol": assignor.name if state == "STABLE" else None,
                "assignment": [] if rebalancing else
                sorted([tp.topic, tp.partition] for tp in consumer.assignment())}

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            emitter.emit("revoked", partitions=sorted([p.topic, p.partition] for p in revoked),
                         **snapshot())
            if cfg.revoke_delay_ms and revoked:
                await asyncio.sleep(cfg.revoke_delay_ms / 1000)
                emitter.emit("released")

        async def on_partitions_assigned(self, assigned: Any) -> None:
            emitter.emit("assigned", partitions=sorted([p.topic, p.partition] for p in assigned),
                         **snapshot())

    consumer.subscribe(topics=list(cfg.topics), listener=Listener())
    # start() connects and already joins the group: the join starts here
    emitter.emit("subscribed", topics=list(cfg.topics), strategies=list(cfg.strategies))
    await consumer.start()
    last: dict[str, Any] | None = None
    try:
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=50)
            for records in batches.values():
                for rec in records:
                    emitter.emit("record", topic=rec.topic, partition=rec.partition,
                                 offset=rec.offset)
            state = snapshot()
            if state != last:
                emitter.emit("state", **state)
                last = state
    finally:
        emitter.emit("closing")
        await consumer.stop()
        emitter.emit("closed")


def main(argv: list[str] | None = None) -> int:
    kind, text = (sys.argv[1:] if argv is None else argv)
    cfg = MemberConfig.from_json(text)
    emitter = Emitter(take_stdout(), cfg.name)
    logging.basicConfig(level=cfg.log_level, stream=sys.stderr,
                        format=f"%(asctime)s {cfg.name} %(name)s %(levelname)s %(message)s")
    emitter.emit("started")
    try:
        if kind == "confluent":
            run_confluent(cfg, emitter)
        elif kind == "aiokafka":
            asyncio.run(run_aiokafka(cfg, emitter))
        else:
            raise ValueError(f"unknown client {kind!r}")
    except Exception as exc:
        emitter.emit("error", message=f"{type(exc).__name__}: {exc}",
                     traceback=traceback.format_exc())
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
