"""One aiokafka consumer of a usage-matrix cell, used the way one usage pattern uses it.

Run as ``python aiokafka_usage_member.py '<config JSON>'`` by the matrix core (the package
docstring has the event and command protocol). ``strategy`` is ``ours:<wire name>``
(``kafka_assignors.aiokafka.AIOKafkaConsumer`` with our assignor of that name) or
``plain:roundrobin`` (aiokafka's own ``AIOKafkaConsumer`` and ``RoundRobinPartitionAssignor``:
aiokafka alone). Both are built from the same options and used the same way, as aiokafka's
docs use a consumer. What a member sees is observed through public calls (``assignment()``
after each call) and aiokafka's own log lines for expulsions; exceptions where they reach the
application.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

SENTINEL = b"stop"  # written by the core at the end to wake a blocked loop; not a record
#: what the fork server (zygote.py) imports once for every member
PRELOAD = ("aiokafka", "kafka_assignors.aiokafka",
           "aiokafka.coordinator.assignors.roundrobin")
_out_lock = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "mono": round(time.monotonic(), 4), **fields})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def tps(partitions: Any) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in partitions)


class Expelled(logging.Handler):
    """aiokafka logs these when the broker no longer knows the member (both sides alike)."""

    SIGNS = ("local member_id was not recognized", "generation id is not  current",
             "generation id is not current")

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if any(sign in message for sign in self.SIGNS):
            emit("expelled", how=message[:200])


def build(cfg: dict[str, Any]) -> Any:
    """The consumer as the cell's user builds it."""
    from aiokafka import AIOKafkaConsumer

    kind, _, wire = cfg["strategy"].partition(":")
    options = dict(cfg.get("options", {}))
    if cfg.get("static_id"):
        options["group_instance_id"] = cfg["static_id"]
    if kind == "ours":
        import kafka_assignors.aiokafka as ours

        factory = {"balanced-sticky": ours.BalancedStickyAssignor,
                   "cooperative-balanced-sticky": ours.CooperativeBalancedStickyAssignor}[wire]
        cls: Any = ours.AIOKafkaConsumer
        strategy: Any = factory()
    else:
        from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        cls, strategy = AIOKafkaConsumer, RoundRobinPartitionAssignor
    return cls(bootstrap_servers=cfg["bootstrap"], group_id=cfg["group_id"],
               client_id=cfg["name"], partition_assignment_strategy=(strategy,), **options)


class Member:
    def __init__(self, cfg: dict[str, Any], commands: asyncio.Queue[dict[str, Any]]) -> None:
        from aiokafka.abc import ConsumerRebalanceListener

        self.cfg = cfg
        self.usage: str = cfg["usage"]
        self.commands = commands
        self.consumer = build(cfg)
        self.stopping = False
        self.held: list[list[Any]] = []
        self.processed: dict[Any, int] = {}  # next offset to commit, by TopicPartition
        self.pending: list[list[Any]] = []
        self.failed_once: set[tuple[str, int, int]] = set()
        self.slow_next = 0.0
        self.longest_call = 0.0
        self.next_pause = time.monotonic() + 4.0
        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                emit("revoked", partitions=tps(revoked))
                if member.usage == "listener-commit":  # commit what was processed
                    offsets = member.offsets(revoked)
                    if offsets:
                        await member.call("commit-in-on_partitions_revoked",
                                          member.consumer.commit(offsets))
                for tp in revoked:
                    member.processed.pop(tp, None)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                emit("assigned", partitions=tps(assigned))

        self.listener = Listener()

    def subscribe(self, topics: list[str] | None = None) -> None:
        if topics is None and "pattern" in self.cfg:
            self.consumer.subscribe(pattern=self.cfg["pattern"], listener=self.listener)
            emit("subscribed", topics=[self.cfg["pattern"]])
            return
        chosen = topics if topics is not None else self.cfg["topics"]
        self.consumer.subscribe(topics=chosen, listener=self.listener)
        emit("subscribed", topics=chosen)

    def offsets(self, partitions: Any) -> dict[Any, Any]:
        from aiokafka.structs import OffsetAndMetadata

        return {tp: OffsetAndMetadata(self.processed[tp], "") for tp in partitions
                if tp in self.processed}

    # -- what the application does with a record ------------------------------------------
    def process(self, record: Any) -> bool:
        """Process one record; False when the seek cell's retry pattern fails it once."""
        if record.value == SENTINEL:
            return True
        from aiokafka.structs import TopicPartition

        tp = TopicPartition(record.topic, record.partition)
        key = (record.topic, record.partition, record.offset)
        if self.usage == "seek" and record.offset % 25 == 3 and key not in self.failed_once:
            self.failed_once.add(key)
            emit("retry", tp=[record.topic, record.partition], offset=record.offset)
            self.consumer.seek(tp, record.offset)
            return False
        self.pending.append([record.topic, record.partition, record.offset,
                             round(time.monotonic(), 4)])
        self.processed[tp] = record.offset + 1
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

    async def call(self, what: str, awaitable: Any) -> Any:
        """A consumer call the usage makes; a KafkaError is what apps catch and go on."""
        from aiokafka.errors import KafkaError

        started = time.monotonic()
        try:
            return await awaitable
        except KafkaError as exc:
            emit("exception", where=what, type=type(exc).__name__, message=str(exc)[:300],
                 fatal=False)
            return None
        finally:
            self.longest_call = max(self.longest_call, time.monotonic() - started)

    # -- the loops --------------------------------------------------------------------------
    async def batch(self) -> list[Any]:
        """What one call of the usage's loop returns (raises what the consumer raises)."""
        started = time.monotonic()
        try:
            if self.usage == "getone":
                try:
                    return [await asyncio.wait_for(self.consumer.getone(), 1.0)]
                except TimeoutError:
                    return []
            max_records = 10 if self.usage == "max-records" else None
            batches = await self.consumer.getmany(timeout_ms=1000, max_records=max_records)
            return [r for records in batches.values() for r in records]
        finally:
            self.longest_call = max(self.longest_call, time.monotonic() - started)

    async def run(self) -> None:
        if self.usage == "async-for":
            await self.iterate()
            return
        while not self.stopping:
            await self.handle(await self.batch())
            await self.between()

    async def iterate(self) -> None:
        """``async for record in consumer``; commands are taken between records and, while
        no record comes, by a watcher that wakes the loop with a sentinel-free check."""
        watcher = asyncio.create_task(self.watch_commands())
        try:
            async for record in self.consumer:
                await self.handle([record])
                await self.between()
                if self.stopping:
                    break
        finally:
            watcher.cancel()

    async def watch_commands(self) -> None:
        while not self.stopping:
            await asyncio.sleep(0.2)
            self.flush()
            self.observe()
            if not self.commands.empty():
                await self.between()

    async def handle(self, records: list[Any]) -> None:
        sought: set[tuple[str, int]] = set()
        for record in records:
            if (record.topic, record.partition) in sought:
                continue  # sought back: this partition's records come again
            if not self.process(record):
                sought.add((record.topic, record.partition))
        self.flush()
        if any(r.value != SENTINEL for r in records):
            await self.after_batch()

    async def after_batch(self) -> None:
        if self.usage == "commit":
            await self.call("commit", self.consumer.commit())
        elif self.usage in ("slow-session", "slow-max-poll"):
            seconds = self.cfg["batch_s"] if self.usage == "slow-session" else self.slow_next
            self.slow_next = 0.0
            if seconds:
                emit("slow", seconds=seconds)
                await asyncio.sleep(seconds)  # processing the batch (awaiting, as aiokafka apps)
                emit("slow-done")

    async def between(self) -> None:
        """After each call: observe, and do what the cell asks of the application."""
        self.observe()
        if self.usage == "pause-resume" and time.monotonic() >= self.next_pause:
            await self.pause_for(1.5)
        while not self.commands.empty():
            await self.command(self.commands.get_nowait())

    async def pause_for(self, seconds: float) -> None:
        """Back-pressure: stop fetching everything for a while, keep calling, then resume."""
        self.consumer.pause(*self.consumer.assignment())
        until = time.monotonic() + seconds
        while time.monotonic() < until and not self.stopping:
            batches = await self.consumer.getmany(timeout_ms=200)
            for records in batches.values():
                for record in records:
                    self.process(record)  # paused: none should come
            self.flush()
            self.observe()
        self.consumer.resume(*self.consumer.assignment())
        self.next_pause = time.monotonic() + 4.0

    async def command(self, cmd: dict[str, Any]) -> None:
        do = cmd["do"]
        if do == "stop":
            self.stopping = True
        elif do == "subscribe":
            self.subscribe(cmd["topics"])
        elif do == "slow":
            self.slow_next = float(cmd["seconds"])
        emit("done", do=do)

    async def close(self) -> None:
        emit("closing", longest_call=round(self.longest_call, 4))
        if self.usage == "commit":
            await self.call("commit", self.consumer.commit())  # before stop()
        await self.consumer.stop()  # auto-commit and listener-commit: stop() commits
        emit("closed")


def read_commands(loop: asyncio.AbstractEventLoop, commands: asyncio.Queue[Any]) -> None:
    for line in sys.stdin:
        if line.strip():
            loop.call_soon_threadsafe(commands.put_nowait, json.loads(line))
    loop.call_soon_threadsafe(commands.put_nowait, {"do": "stop"})  # the core went away


async def amain(cfg: dict[str, Any]) -> int:
    commands: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    threading.Thread(target=read_commands, args=(asyncio.get_running_loop(), commands),
                     daemon=True).start()
    emit("started")
    member = Member(cfg, commands)
    try:
        member.subscribe()
        await member.consumer.start()
        await member.run()
    except Exception as exc:  # what reaches the application and ends it
        emit("exception", where="loop", type=type(exc).__name__, message=str(exc)[:300],
             fatal=True)
        logging.exception("member failed")
        member.flush()
        await member.consumer.stop()  # the application's finally:
        return 1
    member.flush()
    await member.close()
    return 0


def main() -> None:
    cfg = json.loads(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("aiokafka").addHandler(Expelled())
    import aiokafka  # noqa: F401 - loaded before "started" on both sides

    import kafka_assignors.aiokafka  # noqa: F401
    if cfg.get("hold"):  # started ahead of a change: wait for "go"
        emit("ready")
        told = (json.loads(line).get("do") for line in sys.stdin if line.strip())
        if next((do for do in told if do in ("go", "stop")), "stop") != "go":
            sys.exit(0)
    sys.exit(asyncio.run(amain(cfg)))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
    main()
