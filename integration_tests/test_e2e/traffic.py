"""Continuous keyed traffic with sequence numbers, and the check that none of it was lost.

:class:`SequencedProducer` writes ``key = k<seq % keys>``, ``value = <seq>`` at a steady
rate from a background thread (idempotent, acks=all) and remembers where each
acknowledged message landed. :func:`delivery_report` compares that with the records the
group's members reported and with the group's committed offsets.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_assignors.embedded import GroupRunner
from kafka_assignors.embedded.admin import admin_client

from ..unknown_offsets import resolve_delivered

TP = tuple[str, int]


class SequencedProducer:
    """Writes numbered, keyed messages to ``topics`` (round robin) at ``rate`` per second.

    Each topic sees every one of ``keys`` keys in turn (256 keys leave no partition of a
    topic with up to ~30 partitions without traffic, in practice).
    """

    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        *,
        rate: float = 40.0,
        keys: int = 256,
        name: str = "seq-producer",
    ) -> None:
        self.topics = list(topics)
        self.rate = rate
        self.keys = keys
        self._producer = KafkaProducer(
            bootstrap_servers=bootstrap.split(","),
            client_id=name,
            acks="all",
            linger_ms=5,
            delivery_timeout_ms=120_000,
            request_timeout_ms=15_000,
            max_block_ms=20_000,
            metadata_max_age_ms=2_000,  # new partitions get traffic within seconds
        )
        self._lock = threading.Lock()
        #: seq -> (topic, partition, offset) of every acknowledged message
        self.acked: dict[int, tuple[str, int, int]] = {}
        #: seq -> (topic, partition) of messages acked with no offset (see ..unknown_offsets)
        self.unknown: dict[int, TP] = {}
        #: acked with no offset and not in the log (see ..unknown_offsets.NotInLog)
        self.not_in_log = 0
        self._bootstrap = bootstrap
        #: seq -> error of every message the producer gave up on
        self.failed: dict[int, str] = {}
        self.sent = 0
        self._stop = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    def start(self) -> SequencedProducer:
        self._thread.start()
        return self

    def _ack(self, seq: int, md: Any) -> None:
        with self._lock:
            if md.offset is not None and md.offset >= 0:
                self.acked[seq] = (md.topic, md.partition, md.offset)
            else:  # a retried batch answered DUPLICATE_SEQUENCE_NUMBER: written, offset -1
                self.unknown[seq] = (md.topic, md.partition)

    def _fail(self, seq: int, exc: BaseException) -> None:
        with self._lock:
            self.failed[seq] = repr(exc)

    def _run(self) -> None:
        started = time.monotonic()
        seq = 0
        while not self._stop.is_set():
            due = started + seq / self.rate
            delay = due - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                break
            topic = self.topics[seq % len(self.topics)]
            try:
                key = f"k{(seq // len(self.topics)) % self.keys}"
                future = self._producer.send(topic, key=key.encode(), value=str(seq).encode())
            except Exception as exc:  # buffer full / metadata timeout during a broker stop
                self._fail(seq, exc)
            else:
                future.add_callback(self._ack, seq)
                future.add_errback(self._fail, seq)
            seq += 1
            self.sent = seq

    def stop(self, timeout: float = 60.0) -> None:
        """Stop sending and wait (bounded) until every sent message is acked or failed."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._thread.join(timeout=10)
        with contextlib.suppress(Exception):
            self._producer.flush(timeout=timeout)
        self._producer.close(timeout=10)
        with self._lock:
            unknown, self.unknown = self.unknown, {}
        if unknown:
            found, self.not_in_log = resolve_delivered(
                self._bootstrap, set(unknown.values()), {str(seq).encode() for seq in unknown},
                "sequenced producer")
            with self._lock:
                self.acked.update({seq: found[value] for seq in unknown
                                   if (value := str(seq).encode()) in found})

    def acked_count(self) -> int:
        with self._lock:
            return len(self.acked)


@dataclass(frozen=True)
class Consumed:
    """One record a member reported processing."""

    member: str
    topic: str
    partition: int
    offset: int
    value: str | None
    mono: float


def consumed_records(runners: Iterable[GroupRunner]) -> list[Consumed]:
    """Every ``record`` event of every member of ``runners``, in time order."""
    out = [
        Consumed(
            str(e["member"]), str(e["topic"]), int(e["partition"]), int(e["offset"]),
            e.get("value"), float(e["mono"]),
        )
        for runner in runners
        for e in runner.events()
        if e.get("event") == "record"
    ]
    out.sort(key=lambda c: c.mono)
    return out


def committed_offsets(bootstrap: str, group_id: str) -> dict[TP, int]:
    """The group's committed offset of each partition (partitions without one are absent)."""
    with admin_client(bootstrap, request_timeout_ms=10_000) as admin:
        result = admin.list_group_offsets({group_id: None})
    return {
        (tp.topic, tp.partition): int(om.offset)
        for tp, om in result.get(group_id, {}).items()
        if om.offset is not None and om.offset >= 0
    }


def end_offsets(bootstrap: str, partitions: Iterable[TP]) -> dict[TP, int]:
    """Log end offset of each partition."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=None)
    try:
        tps = [TopicPartition(t, p) for t, p in partitions]
        ends = consumer.end_offsets(tps, timeout_ms=15_000)
    finally:
        consumer.close()
    return {(tp.topic, tp.partition): int(o) for tp, o in ends.items()}


def wait_all_committed(
    bootstrap: str, group_id: str, partitions: Iterable[TP], timeout: float
) -> dict[TP, int]:
    """Wait (bounded) until the group's committed offset reaches the end of every partition;
    returns the committed offsets (raises TimeoutError with the gaps otherwise)."""
    wanted = sorted(set(partitions))
    ends = end_offsets(bootstrap, wanted)
    deadline = time.monotonic() + timeout
    problem = "not asked yet"
    while True:
        try:
            committed = committed_offsets(bootstrap, group_id)
        except Exception as exc:  # coordinator moving: ask again
            problem = f"offsets unavailable: {exc!r}"
        else:
            behind = {
                tp: (committed.get(tp, 0), end)
                for tp, end in ends.items()
                if committed.get(tp, 0) < end
            }
            if not behind:
                return committed
            problem = f"(committed, end) of the partitions behind: {behind}"
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"group {group_id} did not commit to the end of its partitions within "
                f"{timeout:.0f} s; {problem}"
            )
        time.sleep(1.0)


@dataclass
class DeliveryReport:
    """What happened to the acknowledged messages."""

    produced: int
    failed_sends: int
    consumed: int
    distinct: int
    #: acknowledged messages no member ever reported processing
    unconsumed: list[int] = field(default_factory=list)
    #: acknowledged messages at or beyond their partition's final committed offset
    uncommitted: list[int] = field(default_factory=list)
    #: consumed records whose value is not the sequence number acked at that offset
    mismatched: list[str] = field(default_factory=list)
    #: reported delivered, yet not in the log: left out of ``produced`` (see NotInLog)
    not_in_log: int = 0

    @property
    def lost(self) -> int:
        return len(set(self.unconsumed) | set(self.uncommitted))

    @property
    def duplicates(self) -> int:
        return self.consumed - self.distinct

    def summary(self) -> str:
        return (
            f"produced={self.produced} failed_sends={self.failed_sends} "
            f"consumed={self.consumed} lost={self.lost} duplicates={self.duplicates}"
            + (f" acknowledged_not_in_log={self.not_in_log}" if self.not_in_log else "")
        )


def delivery_report(
    producer: SequencedProducer,
    records: Sequence[Consumed],
    committed: Mapping[TP, int],
) -> DeliveryReport:
    """Check every acknowledged message against the records processed and committed."""
    seen = Counter((r.topic, r.partition, r.offset) for r in records)
    value_at = {(r.topic, r.partition, r.offset): r.value for r in records}
    report = DeliveryReport(
        produced=len(producer.acked),
        failed_sends=len(producer.failed),
        consumed=len(records),
        distinct=len(seen),
        not_in_log=producer.not_in_log,
    )
    for seq, (topic, partition, offset) in sorted(producer.acked.items()):
        where = (topic, partition, offset)
        if where not in seen:
            report.unconsumed.append(seq)
        elif value_at[where] != str(seq):
            report.mismatched.append(f"{topic}-{partition}@{offset}: {value_at[where]} != {seq}")
        if committed.get((topic, partition), 0) <= offset:
            report.uncommitted.append(seq)
    return report
