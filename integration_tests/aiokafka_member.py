"""One aiokafka group member using our assignors, run as its own process by ``test_aiokafka_live``.

    python integration_tests/aiokafka_member.py '<config JSON>'

(No tests here: the file is named so that pytest does not collect it.)

Config keys: ``name``, ``bootstrap``, ``group``, ``topics`` (list), ``strategy`` (wire name,
e.g. ``balanced-sticky``) and optionally ``strategies`` (wire names, in order; ``roundrobin``
is aiokafka's own; overrides ``strategy``), ``runtime`` (true: the consumer is
``kafka_assignors.aiokafka.AIOKafkaConsumer``, cooperative with our ``Cooperative...``
assignors; default: aiokafka's own), ``flush_s_per_partition`` (``on_partitions_revoked``
awaits that long per partition given up, as an application flushing state would),
``session_timeout_ms``, ``heartbeat_interval_ms``, ``metadata_max_age_ms``,
``auto_commit_ms``, ``report_records``.

Reports JSON lines on stdout in the format of the kafka-python group runner's members
(:mod:`kafka_assignors.embedded.events`), so the test can track both libraries alike:
``started``, ``assigned``/``revoked`` (the rebalance listener, with a snapshot:
``generation``, ``member_id``, ``state`` STABLE/REBALANCING/UNJOINED, ``protocol``,
``assignment``), ``state`` (the snapshot changed), ``record`` (if ``report_records``),
``released`` (``on_partitions_revoked`` returned, with the partitions),
``report`` (the assignor's leader report, when this member computed an assignment:
``target``/``sent`` as ``{member_id: [[topic, partition], ...]}``), ``closing``/``closed``
and ``error``. Offsets are auto-committed (and committed on rebalance and on stop).
Stops cleanly (``consumer.stop()``: last commit, LeaveGroup) on a ``stop`` line or stdin EOF.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from kafka_assignors.embedded._member import Emitter, script_main, stop_on_stdin


def _pairs(tps: Any) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in tps)


def _plain(assignment: Any) -> dict[str, list[list[Any]]]:
    return {member: sorted([t, p] for t, ps in by_topic.items() for p in ps)
            for member, by_topic in assignment.items()}


def make_assignor(wire_name: str) -> Any:
    """Our assignor with that wire name, wrapped for aiokafka (``roundrobin``: aiokafka's)."""
    import kafka_assignors
    from kafka_assignors.aiokafka import BalancedStickyAssignor, for_aiokafka
    from kafka_assignors.kafka_python.assignor import KafkaPythonAssignor

    if wire_name == "roundrobin":
        from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        return RoundRobinPartitionAssignor
    if wire_name == "balanced-sticky":
        return BalancedStickyAssignor()
    for export in kafka_assignors.__all__:
        cls = getattr(kafka_assignors, export, None)
        if (isinstance(cls, type) and issubclass(cls, KafkaPythonAssignor)
                and cls.name == wire_name):
            return for_aiokafka(cls)
    raise ValueError(f"no assignor named {wire_name!r}")


def snapshot(consumer: Any, protocol: str) -> dict[str, Any]:
    """Generation, member id, state, chosen protocol and owned partitions, right now."""
    coordinator = consumer._coordinator
    generation = int(getattr(coordinator, "generation", -1))
    rebalancing = bool(consumer._subscription.reassignment_in_progress)  # a property
    if generation <= 0:
        state = "UNJOINED"
    elif rebalancing:
        state = "REBALANCING"
    else:
        state = "STABLE"
    return {
        "generation": generation,
        "member_id": str(getattr(coordinator, "member_id", "")),
        "state": state,
        "protocol": protocol if state == "STABLE" else None,
        "assignment": [] if rebalancing else _pairs(consumer.assignment()),
    }


async def run(cfg: dict[str, Any], emitter: Emitter) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener

    from kafka_assignors.aiokafka import AIOKafkaConsumer as CooperativeCapable

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    stop_on_stdin(lambda: loop.call_soon_threadsafe(stop.set))

    assignors = [make_assignor(w) for w in cfg.get("strategies", [cfg["strategy"]])]
    assignor = assignors[0]
    flush_s = float(cfg.get("flush_s_per_partition", 0.0))
    consumer_class = CooperativeCapable if cfg.get("runtime") else AIOKafkaConsumer
    consumer = consumer_class(
        bootstrap_servers=cfg["bootstrap"],
        group_id=cfg["group"],
        client_id=cfg["name"],
        partition_assignment_strategy=tuple(assignors),
        session_timeout_ms=cfg.get("session_timeout_ms", 6_000),
        heartbeat_interval_ms=cfg.get("heartbeat_interval_ms", 500),
        metadata_max_age_ms=cfg.get("metadata_max_age_ms", 5_000),
        auto_offset_reset="earliest",
        enable_auto_commit=True,
        auto_commit_interval_ms=cfg.get("auto_commit_ms", 1_000),
    )

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def _emit(self, kind: str, tps: Any) -> None:
            emitter.emit(kind, partitions=_pairs(tps), **snapshot(consumer, assignor.name))

        async def on_partitions_revoked(self, revoked: Any) -> None:
            self._emit("revoked", revoked)
            if flush_s and revoked:
                await asyncio.sleep(flush_s * len(revoked))
            emitter.emit("released", partitions=_pairs(revoked))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            self._emit("assigned", assigned)

    consumer.subscribe(topics=list(cfg["topics"]), listener=Listener())
    await consumer.start()
    emitter.emit("subscribed", topics=list(cfg["topics"]), strategies=[assignor.name])
    last_state: dict[str, Any] | None = None
    last_report: Any = None
    try:
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=100)
            for records in batches.values():
                for rec in records:
                    if cfg.get("report_records"):
                        value = rec.value.decode("utf-8", "replace") if rec.value else None
                        emitter.emit("record", topic=rec.topic, partition=rec.partition,
                                     offset=rec.offset, value=value)
            report = getattr(assignor, "last_report", None)
            if report is not None and report is not last_report:
                emitter.emit("report", strategy=report.strategy, members=report.members,
                             moved=report.moved, target=_plain(report.target),
                             sent=_plain(report.sent),
                             generation=int(getattr(consumer._coordinator, "generation", -1)))
                last_report = report
            state = snapshot(consumer, assignor.name)
            if state != last_state:
                emitter.emit("state", **state)
                last_state = state
    finally:
        emitter.emit("closing")
        await consumer.stop()
        emitter.emit("closed")


def main(cfg: dict[str, Any], emitter: Emitter) -> None:
    emitter.emit("started")
    asyncio.run(run(cfg, emitter))


if __name__ == "__main__":
    sys.exit(script_main(main))
