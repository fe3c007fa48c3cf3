"""One kafka-python consumer of a usage-matrix cell, used the way one usage pattern uses it.

Run as ``python kafka_python_member.py '<config JSON>'`` by the matrix core (see the package
docstring for the event and command protocol). The consumer is built as the README's one line
does it: ``KafkaConsumer(*topics, ..., partition_assignment_strategy=[X()])`` plus the options
the cell names; nothing else is called on it except what the usage pattern itself calls.
What the member sees is observed without changing how it is used: its assignment through the
public ``assignment()`` after each poll or record, expulsions through kafka-python's own log
line ("lost membership"), exceptions where they reach the application.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import queue
import sys
import threading
import time
from typing import Any

from kafka import ConsumerRebalanceListener, KafkaConsumer, TopicPartition
from kafka.errors import CommitFailedError
from kafka.structs import OffsetAndMetadata

SENTINEL = b"stop"  # written by the core at the end to wake a blocked iterator; not a record
#: what the fork server (zygote.py) imports once for every member, beyond this script's top
#: level: the strategies' modules of both sides (one a version lacks is left out)
PRELOAD = ("kafka_assignors", "kafka.coordinator.assignors.range",
           "kafka.coordinator.assignors.cooperative_sticky")
_out_lock = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "mono": round(time.monotonic(), 4), **fields})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def tps(partitions: Any) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in partitions)


def _consumer_class(strategy_module: str, runtime: bool) -> Any:
    """``kafka_assignors.kafka_python.KafkaConsumer`` for ours with the runtime (kafka-python 3),
    else ``kafka.KafkaConsumer``."""
    import kafka

    if (runtime and strategy_module.startswith("kafka_assignors")
            and not kafka.__version__.startswith("2.")):
        from kafka_assignors.kafka_python import KafkaConsumer as WithRuntime

        return WithRuntime
    return KafkaConsumer


class LostMembership(logging.Handler):
    """kafka-python logs "Group ... lost membership; forcibly revoking ..." when expelled.

    It also reports the broker's faults: a NOT_COORDINATOR answer ("[Error 16]", 2.x and 3.x)
    after the member had joined. The test broker is a single node, so its coordinator was not
    serving the group then (the runner runs such a pair again if it was judged worse). And
    kafka-python's own defects: a join result dropped (upstream.md §1), a commit refused
    after a heartbeat's REBALANCE_IN_PROGRESS marked the coordinator dead (§5)."""

    #: what kafka-python logs once it has taken a join result up, or given it up for a reason
    TAKEN_UP = ("Updated partition assignment", "Cooperative rebalance complete",
                "Setting newly assigned partitions", "SyncGroup for group")

    def __init__(self) -> None:
        super().__init__()
        self.joined = False
        self.answered = False  # a JoinGroup answered, its result not taken up yet
        self.dropped = False

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "lost membership" in message:
            emit("expelled", how=message[:200])
        elif "Successfully joined group" in message:
            self.joined = self.answered = True
        elif any(m in message for m in self.TAKEN_UP):
            self.answered = False
        elif message.startswith("(Re-)joining group") and self.answered:
            # kafka-python 3's join defect (docs/upstream.md §1): a finished round trip's
            # result thrown away and a new JoinGroup sent (for the leader, a new rebalance)
            self.answered = False
            if not self.dropped:
                self.dropped = True
                emit("client-defect", what="kafka-python dropped a join result "
                     "(upstream.md §1): a new JoinGroup went out instead")
        elif self.joined and "[Error 16]" in message:
            emit("broker-fault", how=message[:200])
        elif "Marking the coordinator dead" in message and "RebalanceInProgress" in message:
            COMMIT_DEFECT.coordinator_marked_dead()
        elif message.startswith("Leaving consumer group"):
            COMMIT_DEFECT.left = True
        elif "not part of an active group" in message:
            COMMIT_DEFECT.commit_failed("refused: not part of an active group")


class ConsumerProtocolLost(logging.Handler):
    """Ours on the consumer group protocol logs a member's lost membership (there is no
    "lost membership" line there): fenced by the broker, or leaving after
    ``max_poll_interval_ms``. The Java consumer's column reads its two lines for the same
    cases from the Java consumer's log (java_consumer.py)."""

    SAID = ("fenced (", "no poll() for max_poll_interval_ms")

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if any(said in message for said in self.SAID):
            emit("expelled", how=message[:200])


class CommitDefectWitness:
    """Sees kafka-python 3.0.0 to 3.0.2's refused commit (upstream.md §5, kafka-python #3082):
    a heartbeat answered REBALANCE_IN_PROGRESS marks the coordinator dead, and a commit made
    then fails (CoordinatorNotAvailable at once, or refused once the join has started), so
    the partition's next owner re-reads what it covered. Said once per member."""

    #: a commit that failed this soon after the mark failed because of it (the lookup and
    #: the join take milliseconds)
    WITHIN_S = 10.0
    #: a close() that sent no LeaveGroup this soon after the mark sent none because of it
    LEAVE_WITHIN_S = 1.0

    def __init__(self) -> None:
        self.marked_at = -1e9
        self.said = False
        self.left = False  # close() sent a LeaveGroup ("Leaving consumer group" logged)

    def coordinator_marked_dead(self) -> None:
        self.marked_at = time.monotonic()

    def closed(self, dynamic: bool, started: float) -> None:
        """The same mark's other effect: close() sends no LeaveGroup while the coordinator is
        unknown, so a member that closes in that window is expelled only when its session
        times out (the group's change waits for it). The window is the lookup that follows
        the mark (milliseconds): a mark during close() or just before it."""
        if dynamic and not self.left and self.marked_at >= started - self.LEAVE_WITHIN_S:
            emit("client-defect", defect="leave", what="kafka-python's close sent no "
                 "LeaveGroup: a heartbeat's REBALANCE_IN_PROGRESS had just marked the "
                 "coordinator dead (upstream.md §5)")

    def commit_failed(self, why: str) -> None:
        if self.said or time.monotonic() - self.marked_at >= self.WITHIN_S:
            return
        self.said = True
        emit("client-defect", defect="commit", what=f"kafka-python's commit failed ({why}) "
             "after it marked the coordinator dead on REBALANCE_IN_PROGRESS (upstream.md §5)")


COMMIT_DEFECT = CommitDefectWitness()


class AsyncCommitWitness:
    """Sees kafka-python's own failed ``commit_async`` whose partition it then gave up: the
    commit failed (kafka-python 2.3.3: ``NodeNotReadyError`` while its connection to the
    coordinator had requests in flight), the member lost the partition before any later
    commit of it succeeded, so the partition's next owner re-reads what it covered. Either
    side can draw it: on a side that is kafka-python with an assignor only, the re-reads are
    kafka-python's (``judge.split_client_defect``). Said once per member."""

    #: a revocation this soon after the failure came before the member could commit again
    #: (kafka-python's default heartbeat interval: the next rebalance's notice)
    WITHIN_S = 3.0

    def __init__(self) -> None:
        self.failed: dict[tuple[str, int], float] = {}
        self.said = False

    def commit_done(self, offsets: Any, error: Exception | None) -> None:
        now = time.monotonic()
        for tp in offsets:
            if error is None:
                self.failed.pop((tp.topic, tp.partition), None)
            else:
                self.failed[(tp.topic, tp.partition)] = now

    def gave_up(self, partitions: Any) -> None:
        now = time.monotonic()
        hit = sorted(tp for tp in map(tuple, partitions)
                     if now - self.failed.get(tp, -1e9) < self.WITHIN_S)
        if hit and not self.said:
            self.said = True
            emit("client-defect", defect="commit", what=f"kafka-python's commit_async of "
                 f"{hit} failed and the member gave the partitions up before it committed "
                 "them again")


ASYNC_COMMITS = AsyncCommitWitness()


class JoinDefectWitness:
    """Sees kafka-python 3's own join defect (docs/upstream.md §1) on a member: REBALANCING,
    its JoinGroup/SyncGroup round trip finished, and no rejoin needed, so no poll will ever
    take the result up (the member stays there, without heartbeats, until the broker expels
    it). Reads kafka-python's internals; the harness's witness, not the product's code. Said
    once per member, after the state has lasted ``LASTS_S`` (a poll takes a result up within
    milliseconds when kafka-python works)."""

    LASTS_S = 2.0

    def __init__(self, consumer: Any) -> None:
        self.coordinator = getattr(consumer, "_coordinator", None)
        self.since: float | None = None
        self.said = False

    def stuck(self) -> bool:
        c = self.coordinator
        task = getattr(c, "_join_task", None)  # (kafka-python 2.x has none: never seen)
        if c is None or task is None or not getattr(task, "is_done", False):
            return False
        return "REBALANCING" in str(c.state).upper() and not c.need_rejoin()

    def look(self) -> None:
        if self.said:
            return
        if not self.stuck():
            self.since = None
            return
        now = time.monotonic()
        if self.since is None:
            self.since = now
        elif now - self.since >= self.LASTS_S:
            self.said = True
            emit("client-defect", what="kafka-python dropped its join result (upstream.md §1)")


class Member:
    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.usage: str = cfg["usage"]
        self.commands: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stopping = False
        self.held: list[list[Any]] = []
        self.processed: dict[TopicPartition, int] = {}  # next offset to commit, per partition
        self.pending: list[list[Any]] = []
        self.failed_once: set[tuple[str, int, int]] = set()
        self.slow_next = 0.0
        self.longest_call = 0.0
        self.next_pause = time.monotonic() + 4.0
        self.consumer = self._build()
        self.defect = JoinDefectWitness(self.consumer)

    def _build(self) -> Any:
        module, _, name = self.cfg["strategy"].partition(":")
        options = dict(self.cfg.get("options", {}))
        if self.cfg.get("static_id"):
            options["group_instance_id"] = self.cfg["static_id"]
        kwargs = {"bootstrap_servers": self.cfg["bootstrap"], "group_id": self.cfg["group_id"],
                  "client_id": self.cfg["name"], **options}
        if module == "consumer":
            # the consumer group protocol (KIP-848), as docs/clients/kafka-python.md says:
            # the broker assigns with ``name`` and sets the session and heartbeat interval
            for broker_side in ("session_timeout_ms", "heartbeat_interval_ms"):
                kwargs.pop(broker_side, None)
            kwargs.update(group_protocol="consumer", group_remote_assignor=name)
            module = "kafka_assignors"
        else:
            assignor = getattr(importlib.import_module(module), name)()
            kwargs["partition_assignment_strategy"] = [assignor]
        topics = self.cfg.get("topics", [])
        # ours, as docs/runtime.md says: the runtime's KafkaConsumer, or (runtime: false, the
        # plain one line) kafka's own; kafka-python's strategies always with kafka's own
        KafkaConsumer = _consumer_class(module, self.cfg.get("runtime", True))
        if self.usage == "pattern":
            consumer = KafkaConsumer(**kwargs)
            consumer.subscribe(pattern=self.cfg["pattern"])
        elif self.usage.startswith("listener-commit"):
            consumer = KafkaConsumer(**kwargs)
            consumer.subscribe(topics, listener=CommitOnRevoke(self))
        elif self.usage == "assign":
            consumer = KafkaConsumer(**kwargs)
            consumer.assign([TopicPartition(t, p) for t, p in self.cfg["partitions"]])
        else:
            consumer = KafkaConsumer(*topics, **kwargs)
        emit("subscribed")
        return consumer

    # -- what the application does with a record ---------------------------------------------
    def process(self, record: Any) -> bool:
        """Process one record; False when the seek cell's retry pattern fails it once."""
        if record.value == SENTINEL:
            return True
        key = (record.topic, record.partition, record.offset)
        if self.usage == "seek" and record.offset % 25 == 3 and key not in self.failed_once:
            self.failed_once.add(key)
            emit("retry", tp=[record.topic, record.partition], offset=record.offset)
            self.consumer.seek(TopicPartition(record.topic, record.partition), record.offset)
            return False
        self.pending.append([record.topic, record.partition, record.offset,
                             round(time.monotonic(), 4)])
        self.processed[TopicPartition(record.topic, record.partition)] = record.offset + 1
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
            ASYNC_COMMITS.gave_up(p for p in self.held if p not in held)
            self.held = held
            emit("assignment", held=held)

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """A consumer call the usage makes; CommitFailedError is what apps catch and go on."""
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        except CommitFailedError as exc:
            emit("exception", where=what, type=type(exc).__name__, message=str(exc)[:300],
                 fatal=False)
            return None
        finally:
            self.longest_call = max(self.longest_call, time.monotonic() - started)

    # -- the loops ----------------------------------------------------------------------------
    def run(self) -> None:
        if self.usage in ("iterator", "iterator-timeout"):
            self.iterate()
        else:
            self.poll_loop()

    def iterate(self) -> None:
        while not self.stopping:
            for record in self.consumer:  # kafka-python's README loop
                self.process(record)
                self.between()
                if self.stopping:
                    break
            self.between()  # consumer_timeout_ms ended the iteration

    def poll_loop(self) -> None:
        timeout_ms = 0 if self.usage == "poll0" else 1000
        max_records = 10 if self.usage == "max-records" else None
        while not self.stopping:
            batch = self.call("poll", self.consumer.poll, timeout_ms=timeout_ms,
                              max_records=max_records) or {}
            for records in batch.values():
                for record in records:
                    if not self.process(record):
                        break  # sought back: the rest of this partition's batch comes again
            self.flush()
            if batch:
                self.after_batch()
            elif self.usage == "poll0":
                time.sleep(0.01)  # an event loop's other work
            self.between()

    def after_batch(self) -> None:
        if self.usage == "commit":
            self.call("commit", self.consumer.commit)
        elif self.usage == "commit-async":
            self.consumer.commit_async(callback=self.async_done)
        elif self.usage in ("slow-session", "slow-max-poll"):
            seconds = self.cfg["batch_s"] if self.usage == "slow-session" else self.slow_next
            self.slow_next = 0.0
            if seconds:
                emit("slow", seconds=seconds)
                time.sleep(seconds)  # processing the batch
                emit("slow-done")

    def async_done(self, offsets: Any, response: Any) -> None:
        ASYNC_COMMITS.commit_done(offsets, response if isinstance(response, Exception) else None)
        if isinstance(response, Exception):
            emit("async-commit-failed", type=type(response).__name__)
            COMMIT_DEFECT.commit_failed(type(response).__name__)
            # in the member's log too, which a failed cell prints
            logging.getLogger("usage_matrix").warning(
                "commit_async of %s failed: %r", sorted((tp.topic, tp.partition) for tp in offsets),
                response)

    def between(self) -> None:
        """After each record or poll: observe, and do what the cell asks of the application."""
        self.flush()
        self.observe()
        self.defect.look()
        if self.usage == "pause-resume" and time.monotonic() >= self.next_pause:
            self.pause_for(1.5)
        while not self.commands.empty():
            self.command(self.commands.get())

    def pause_for(self, seconds: float) -> None:
        """Back-pressure: stop fetching everything for a while, keep polling, then resume."""
        self.consumer.pause(*self.consumer.assignment())
        until = time.monotonic() + seconds
        while time.monotonic() < until and not self.stopping:
            for records in (self.consumer.poll(timeout_ms=200) or {}).values():
                for record in records:
                    self.process(record)  # paused: none should come
            self.flush()
            self.observe()
        self.consumer.resume(*self.consumer.paused())
        self.next_pause = time.monotonic() + 4.0

    def command(self, cmd: dict[str, Any]) -> None:
        do = cmd["do"]
        if do == "stop":
            self.stopping = True
        elif do == "subscribe":
            self.consumer.subscribe(cmd["topics"])
        elif do == "slow":
            self.slow_next = float(cmd["seconds"])
        elif do == "unsubscribe":
            self.consumer.unsubscribe()
            self.observe()
            time.sleep(float(cmd["seconds"]))
            self.consumer.subscribe(self.cfg["topics"])
            emit("resubscribed")
        emit("done", do=do)

    def close(self) -> None:
        emit("closing", longest_call=round(self.longest_call, 4))
        if self.usage in ("commit", "commit-async"):
            self.call("commit", self.consumer.commit)  # the sync commit before close
        elif self.usage.startswith("listener-commit"):
            self.call("commit", self.consumer.commit, self.offsets(self.consumer.assignment()))
        COMMIT_DEFECT.left = False
        started = time.monotonic()
        self.consumer.close()
        COMMIT_DEFECT.closed(dynamic=not self.cfg.get("static_id"), started=started)
        emit("closed")

    def offsets(self, which: Any) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: OffsetAndMetadata(self.processed[tp], "", -1) for tp in which
                if tp in self.processed}


class CommitOnRevoke(ConsumerRebalanceListener):  # type: ignore[misc]
    """The documented pattern: commit what was processed of the partitions being revoked."""

    def __init__(self, member: Member) -> None:
        self.member = member

    def on_partitions_revoked(self, revoked: Any) -> None:
        emit("revoked", partitions=tps(revoked))
        m = self.member
        offsets = m.offsets(revoked)
        if offsets and m.usage == "listener-commit-async":
            m.consumer.commit_async(offsets, callback=m.async_done)
        elif offsets:  # kafka-python 2.x's pattern; 3.0 cannot block on its IO thread
            m.call("commit-in-listener", m.consumer.commit, offsets)
        for tp in revoked:
            m.processed.pop(tp, None)

    def on_partitions_assigned(self, assigned: Any) -> None:
        emit("assigned", partitions=tps(assigned))

    def on_partitions_lost(self, lost: Any) -> None:
        emit("lost", partitions=tps(lost))  # the docs: do not commit, it would fail


def read_commands(member: Member) -> None:
    for line in sys.stdin:
        line = line.strip()
        if line:
            member.commands.put(json.loads(line))
    member.commands.put({"do": "stop"})  # the core went away


def hold(cfg: dict[str, Any]) -> None:
    """A member started ahead of a change (``hold``): everything it will import is loaded,
    then it waits for ``{"do": "go"}`` before it builds its consumer, so a change measures
    the consumer and not how long a loaded machine takes to start Python."""
    if not cfg.get("hold"):
        return
    module = cfg["strategy"].partition(":")[0]
    # ("consumer:NAME": the consumer group protocol, whose member lives in kafka_assignors)
    importlib.import_module("kafka_assignors.kafka_python" if module == "consumer" else module)
    emit("ready")
    for line in sys.stdin:
        do = json.loads(line).get("do") if line.strip() else None
        if do == "go":
            return
        if do == "stop":
            break
    sys.exit(0)  # stopped, or the core went away, before the change


def main() -> None:
    cfg = json.loads(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("kafka").addHandler(LostMembership())
    logging.getLogger("kafka_assignors.kafka_python.consumer_group").addHandler(
        ConsumerProtocolLost())
    for name in ("kafka.coordinator", "kafka_assignors"):  # a post-mortem's detail, on demand
        logging.getLogger(name).setLevel(os.environ.get("USAGE_MATRIX_LOG_LEVEL", "INFO"))
    hold(cfg)
    emit("started")
    member = None
    try:
        member = Member(cfg)
        threading.Thread(target=read_commands, args=(member,), daemon=True).start()
        member.run()
    except Exception as exc:  # what reaches the application and ends it
        emit("exception", where="loop", type=type(exc).__name__, message=str(exc)[:300],
             fatal=True)
        logging.exception("member failed")
        if member is not None:
            member.flush()
            member.consumer.close()  # the application's finally:
        sys.exit(1)
    member.flush()
    member.close()


if __name__ == "__main__":
    main()
