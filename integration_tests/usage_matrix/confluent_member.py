"""One confluent-kafka consumer of a usage-matrix cell: our bridge, or plain confluent-kafka.

Run as ``python confluent_member.py '<config JSON>'`` by the matrix core (the package docstring
has the event and command protocol). ``strategy`` is ``bridge:<our strategy>`` (a
``kafka_assignors.confluent.Consumer``) or ``plain:<librdkafka strategy>`` (a
``confluent_kafka.Consumer``); both are built from the same config dict and used the same way,
as confluent-kafka's docs use a consumer. In the mixed-group cell a bridged side's member may
instead be ``kind`` ``kafka-python`` or ``aiokafka`` (our assignor, the same wire format): this
script then runs that client's member. What a member sees is observed through public calls:
``assignment()`` after each call, ``on_lost`` for expulsions, exceptions where they reach the
application.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

SENTINEL = b"stop"  # written by the core at the end to wake a blocked loop; not a record
#: what the fork server (zygote.py) imports once for every member: both sides' clients and
#: the mixed-group cell's kafka-python and aiokafka members
PRELOAD = ("confluent_kafka", "kafka_assignors.confluent", "aiokafka", "kafka_assignors.aiokafka",
           "integration_tests.usage_matrix.kafka_python_member",
           "integration_tests.usage_matrix.aiokafka_member")
_out_lock = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "mono": round(time.monotonic(), 4), **fields})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def tps(partitions: Any) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in partitions)


def error_name(exc: BaseException) -> str:
    """``KafkaException(REBALANCE_IN_PROGRESS)``: the type and the Kafka error, as apps see it."""
    err = exc.args[0] if exc.args else None
    name = getattr(err, "name", None)
    return f"{type(exc).__name__}({name()})" if callable(name) else type(exc).__name__


class Member:
    def __init__(self, cfg: dict[str, Any]) -> None:
        import confluent_kafka

        self.cfg = cfg
        self.usage: str = cfg["usage"]
        self.kind, _, strategy = cfg["strategy"].partition(":")
        self.commands: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stopping = False
        self.held: list[list[Any]] = []
        self.processed: dict[tuple[str, int], int] = {}  # next offset to commit
        self.pending: list[list[Any]] = []
        self.failed_once: set[tuple[str, int, int]] = set()
        self.slow_next = 0.0
        self.longest_call = 0.0
        self.next_pause = time.monotonic() + 4.0
        conf: dict[str, Any] = {
            "bootstrap.servers": cfg["bootstrap"], "group.id": cfg["group_id"],
            "client.id": cfg["name"], "partition.assignment.strategy": strategy,
            **cfg.get("options", {}),
        }
        if cfg.get("static_id"):
            conf["group.instance.id"] = cfg["static_id"]
        if self.kind == "bridge":
            from kafka_assignors.confluent import Consumer

            self.consumer: Any = Consumer(conf)
        else:
            self.consumer = confluent_kafka.Consumer(conf)
        self.TopicPartition = confluent_kafka.TopicPartition
        self.KafkaException = confluent_kafka.KafkaException
        self.KafkaError = confluent_kafka.KafkaError
        self.subscribe(cfg["topics"] if "topics" in cfg else [cfg["pattern"]])

    def subscribe(self, topics: list[str]) -> None:
        self.consumer.subscribe(topics, on_assign=self.on_assign, on_revoke=self.on_revoke,
                                on_lost=self.on_lost)
        emit("subscribed", topics=topics)

    # -- rebalance callbacks ------------------------------------------------------------------
    def on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        emit("assigned", partitions=tps(partitions))

    def on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        emit("revoked", partitions=tps(partitions))
        if self.usage == "revoke-commit":  # the documented pattern: commit what was processed
            offsets = self.offsets(partitions)
            if offsets:
                self.call("commit-in-on_revoke", consumer.commit, offsets=offsets,
                          asynchronous=False)
        for tp in partitions:
            self.processed.pop((tp.topic, tp.partition), None)

    def on_lost(self, consumer: Any, partitions: list[Any]) -> None:
        emit("lost", partitions=tps(partitions))  # expelled; committing would fail
        for tp in partitions:
            self.processed.pop((tp.topic, tp.partition), None)

    def offsets(self, partitions: Any) -> list[Any]:
        return [self.TopicPartition(tp.topic, tp.partition, self.processed[key])
                for tp in partitions if (key := (tp.topic, tp.partition)) in self.processed]

    # -- what the application does with a message ---------------------------------------------
    def process(self, msg: Any) -> bool:
        """Process one message; False when the seek cell's retry pattern fails it once."""
        if msg.error() is not None:
            if msg.error().fatal():
                raise self.KafkaException(msg.error())
            emit("error-event", error=str(msg.error())[:200])
            return True
        if msg.value() == SENTINEL:
            return True
        key = (msg.topic(), msg.partition(), msg.offset())
        if self.usage == "seek" and msg.offset() % 25 == 3 and key not in self.failed_once:
            self.failed_once.add(key)
            emit("retry", tp=[msg.topic(), msg.partition()], offset=msg.offset())
            self.consumer.seek(self.TopicPartition(msg.topic(), msg.partition(), msg.offset()))
            return False
        self.pending.append([msg.topic(), msg.partition(), msg.offset(),
                             round(time.monotonic(), 4)])
        self.processed[(msg.topic(), msg.partition())] = msg.offset() + 1
        if self.usage == "store-offsets":
            self.consumer.store_offsets(message=msg)
        if len(self.pending) >= 50:
            self.flush()
        return True

    def flush(self) -> None:
        if self.pending:
            emit("records", r=self.pending)
            self.pending = []

    def observe(self) -> None:
        held = tps(self.consumer.assignment())
        if held != self.held:
            self.held = held
            emit("assignment", held=held)

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """A consumer call the usage makes; a KafkaException is what apps catch and go on."""
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        except self.KafkaException as exc:
            err = exc.args[0] if exc.args else None
            if getattr(err, "code", lambda: None)() == self.KafkaError._NO_OFFSET:
                return None  # nothing new to commit: not an error to the application
            emit("exception", where=what, type=error_name(exc), message=str(exc)[:300],
                 fatal=bool(getattr(err, "fatal", lambda: False)()))
            return None
        finally:
            self.longest_call = max(self.longest_call, time.monotonic() - started)

    # -- the loops ----------------------------------------------------------------------------
    def batch(self) -> list[Any]:
        """What one call of the usage's loop returns (raises what the consumer raises)."""
        started = time.monotonic()
        try:
            if self.usage in ("poll", "store-offsets", "auto-commit", "pause-resume"):
                msg = self.consumer.poll(1.0)
                return [] if msg is None else [msg]
            # slow processing takes what came meanwhile in one batch, so that it keeps up
            return list(self.consumer.consume(1000 if "slow" in self.usage else 100, 1.0))
        finally:
            self.longest_call = max(self.longest_call, time.monotonic() - started)

    def run(self) -> None:
        while not self.stopping:
            messages = self.batch()
            sought: set[tuple[str, int]] = set()
            for msg in messages:
                if msg.error() is None and (msg.topic(), msg.partition()) in sought:
                    continue  # sought back: this partition's messages come again
                if not self.process(msg):
                    sought.add((msg.topic(), msg.partition()))
            self.flush()
            if any(m.error() is None for m in messages):
                self.after_batch()
            self.between()

    def after_batch(self) -> None:
        if self.usage == "commit":
            self.call("commit", self.consumer.commit, asynchronous=False)
        elif self.usage == "commit-async":
            self.call("commit", self.consumer.commit, asynchronous=True)
        elif self.usage in ("slow-session", "slow-max-poll"):
            seconds = self.cfg["batch_s"] if self.usage == "slow-session" else self.slow_next
            self.slow_next = 0.0
            if seconds:
                emit("slow", seconds=seconds)
                time.sleep(seconds)  # processing the batch
                emit("slow-done")

    def between(self) -> None:
        """After each call: observe, and do what the cell asks of the application."""
        self.observe()
        if self.usage == "pause-resume" and time.monotonic() >= self.next_pause:
            self.pause_for(1.5)
        while not self.commands.empty():
            self.command(self.commands.get())

    def pause_for(self, seconds: float) -> None:
        """Back-pressure: stop fetching everything for a while, keep polling, then resume."""
        self.consumer.pause(self.consumer.assignment())
        until = time.monotonic() + seconds
        while time.monotonic() < until and not self.stopping:
            msg = self.consumer.poll(0.2)
            if msg is not None:
                self.process(msg)  # paused: none should come
            self.flush()
            self.observe()
        self.consumer.resume(self.consumer.assignment())
        self.next_pause = time.monotonic() + 4.0

    def command(self, cmd: dict[str, Any]) -> None:
        do = cmd["do"]
        if do == "stop":
            self.stopping = True
        elif do == "subscribe":
            self.subscribe(cmd["topics"])
        elif do == "slow":
            self.slow_next = float(cmd["seconds"])
        emit("done", do=do)

    def close(self) -> None:
        emit("closing", longest_call=round(self.longest_call, 4))
        if self.usage in ("commit", "commit-async"):
            self.call("commit", self.consumer.commit, asynchronous=False)  # before close()
        self.consumer.close()  # revoke-commit: on_revoke commits
        emit("closed")


def read_commands(member: Member) -> None:
    for line in sys.stdin:
        line = line.strip()
        if line:
            member.commands.put(json.loads(line))
    member.commands.put({"do": "stop"})  # the core went away


def other_client(cfg: dict[str, Any]) -> None:
    """The mixed-group cell's kafka-python and aiokafka members (our eager assignor)."""
    here = Path(__file__).parent
    cooperative = cfg["strategy"].startswith("bridge:cooperative-")
    assignor = "CooperativeBalancedStickyAssignor" if cooperative else "BalancedStickyAssignor"
    if cfg["kind"] == "kafka-python":
        options = {"auto_offset_reset": "earliest", "session_timeout_ms": 10000,
                   "heartbeat_interval_ms": 1000}
        cfg = {**cfg, "strategy": f"kafka_assignors:{assignor}", "usage": "poll",
               "options": options}
        sys.argv[1:] = [json.dumps(cfg)]
        sys.path.insert(0, str(here.parent.parent))
        from integration_tests.usage_matrix import kafka_python_member

        kafka_python_member.main()
    else:
        from integration_tests.usage_matrix import aiokafka_member

        aiokafka_member.main({**cfg, "assignor": assignor})


def main() -> None:
    import logging

    cfg = json.loads(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if cfg.get("kind") and cfg["strategy"].startswith("bridge:"):
        return other_client(cfg)
    # the libraries are loaded before "started" on both sides: the clock measures the
    # consumers (the bridge's constructor connects, that counts), not Python's imports
    import confluent_kafka  # noqa: F401
    if cfg["strategy"].startswith("bridge:"):
        import kafka_assignors.confluent  # noqa: F401
    if cfg.get("hold"):  # started ahead of a change: wait for "go" (see kafka_python_member)
        emit("ready")
        told = (json.loads(line).get("do") for line in sys.stdin if line.strip())
        if next((do for do in told if do in ("go", "stop")), "stop") != "go":
            sys.exit(0)  # stopped, or the core went away, before the change
    emit("started")
    member = None
    try:
        member = Member(cfg)
        threading.Thread(target=read_commands, args=(member,), daemon=True).start()
        member.run()
    except Exception as exc:  # what reaches the application and ends it
        emit("exception", where="loop", type=error_name(exc), message=str(exc)[:300],
             fatal=True)
        logging.exception("member failed")
        if member is not None:
            member.flush()
            member.consumer.close()  # the application's finally:
        sys.exit(1)
    member.flush()
    member.close()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
    main()
