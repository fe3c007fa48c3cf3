"""One bridged confluent-kafka group member, run as its own process by ``test_confluent_bridge``.

    python integration_tests/confluent_member.py '<config JSON>'

(No tests here: the file is named so within the confluent bridge's test files.)
Reports JSON lines on stdout: ``assigned``/``revoked``/``lost`` (the rebalance
callbacks), ``records`` (what one poll() or consume() call returned, reported
before the next call, so everything the bridge may commit has been reported), ``state``
(generation, member id, librdkafka's assignment, when it changes) and
``report`` (the assignor's last leader report, when this member computed one).
Stops cleanly (close()) on a ``stop`` line or stdin EOF.  With ``"hold": true`` it imports
everything, reports ``ready`` and builds its consumer only on a ``go`` line.  With
``"plain": true`` the member is a plain ``confluent_kafka.Consumer`` (the strategy is
librdkafka's), for side-by-side runs.  With ``"ledger": true`` (bridged only) it reports in the
format of the other libraries' members (:mod:`kafka_assignors.embedded.events`), for the
ownership ledger and ``MemberView``: snapshots with ``[topic, partition]`` pairs and
``STABLE``/``REBALANCING``/``UNJOINED``, ``released`` when ``on_revoke`` returns (the bridge
stops fetching them right after), one ``record`` event per message.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from kafka_assignors.embedded._member import Emitter, script_main, stop_on_stdin

#: kafka-python's MemberState values (the bridge's membership) as the ledger names them
LEDGER_STATES = {"<stable>": "STABLE", "<rebalancing>": "REBALANCING",
                 "<unjoined>": "UNJOINED"}


def _plain(assignment: Any) -> dict[str, list[int]]:
    return {member: sorted(p for ps in by_topic.values() for p in ps)
            for member, by_topic in assignment.items()}


def run(cfg: dict[str, Any], emitter: Emitter) -> None:
    import confluent_kafka

    from kafka_assignors.confluent import Consumer

    plain = bool(cfg.get("plain"))
    emit = emitter.emit
    if cfg.get("hold"):
        # started ahead: everything is imported; the consumer is built on "go", so a restart
        # the test times is the consumer's, not a new Python process's start-up
        emit("ready")
        command = sys.stdin.readline().strip()
        if command != "go":
            return
    stop = threading.Event()
    stop_on_stdin(stop.set)
    conf: dict[str, Any] = {
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": cfg["group"],
        "client.id": cfg["name"],
        "partition.assignment.strategy": cfg["strategy"],
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "metadata.max.age.ms": 5000,
        "auto.commit.interval.ms": cfg.get("auto_commit_ms", 1000),
    }
    if cfg.get("instance_id"):
        conf["group.instance.id"] = cfg["instance_id"]
    consumer: Any = confluent_kafka.Consumer(conf) if plain else Consumer(conf)

    ledger = bool(cfg.get("ledger")) and not plain

    def snapshot() -> dict[str, Any]:
        if ledger:
            md = consumer.group_metadata()  # also in on_revoke during close(), as plain
            state = LEDGER_STATES.get(str(md.state), str(md.state))
            return {"generation": int(md.generation_id), "member_id": str(md.member_id),
                    "state": state, "protocol": cfg["strategy"] if state == "STABLE" else None,
                    "assignment": sorted([tp.topic, tp.partition]
                                         for tp in consumer.assignment())}
        if plain:
            return {"generation": -1, "member_id": consumer.memberid(), "state": "<stable>",
                    "assignment": sorted(tp.partition for tp in consumer.assignment())}
        md = consumer.group_metadata()
        return {"generation": int(md.generation_id), "member_id": str(md.member_id),
                "state": str(md.state),
                "assignment": sorted(tp.partition for tp in consumer.assignment())}

    def callback(kind: str) -> Any:
        if ledger:
            return lambda c, ps: ledger_callback(kind, ps)
        return lambda c, ps: emit(kind, partitions=sorted(p.partition for p in ps))

    def ledger_callback(kind: str, ps: Any) -> None:
        pairs = sorted([tp.topic, tp.partition] for tp in ps)
        now = snapshot()
        if kind == "assigned":  # held from here on, though librdkafka fetches them after
            now["assignment"] = sorted({*map(tuple, now["assignment"]), *map(tuple, pairs)})
        emit(kind, partitions=pairs, **now)
        if kind == "revoked":
            emit("released", partitions=pairs)

    consumer.subscribe([cfg["topic"]], on_assign=callback("assigned"),
                       on_revoke=callback("revoked"), on_lost=callback("lost"))
    emit("started")
    last_state: dict[str, Any] | None = None
    last_report: Any = None
    next_report = 0.0
    while not stop.is_set():
        if cfg.get("api") == "poll":
            msg = consumer.poll(0.1)
            batch = [] if msg is None else [msg]
        else:
            batch = consumer.consume(200, 0.1)
        items = [[m.partition(), m.offset()] for m in batch if m.error() is None]
        if ledger:
            for m in batch:
                if m.error() is None:
                    emit("record", topic=m.topic(), partition=m.partition(), offset=m.offset())
        elif items:
            emit("records", items=items)
        now = time.monotonic()
        if now >= next_report:
            next_report = now + 0.1
            state = snapshot()
            if state != last_state:
                emit("state", **state)
                last_state = state
            report = None if plain else consumer.assignors[0].last_report
            if report is not None and report is not last_report:
                emit("report", target=_plain(report.target), sent=_plain(report.sent))
                last_report = report
    emit("closing")
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    sys.exit(script_main(run))
