"""Consumption progress of the bridged consumer, and offsets in both libraries' types.

Progress is what librdkafka has handed to the application (its ``position()``:
the last returned offset + 1) or, with ``enable.auto.offset.store=false``, what
the application stored.  Commits go through kafka-python, so offsets are kept as
kafka-python ``OffsetAndMetadata`` keyed by ``(topic, partition)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from confluent_kafka import TopicPartition as CTopicPartition
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KTopicPartition

Key = tuple[str, int]
#: kafka-python offsets to commit
Offsets = dict[Any, OffsetAndMetadata]


def _epoch(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else -1


def kafka_offsets(partitions: Iterable[Any]) -> Offsets:
    """confluent TopicPartitions (with offsets) -> kafka-python offsets; invalid ones skipped."""
    out: Offsets = {}
    for tp in partitions:
        if tp.offset >= 0:
            out[KTopicPartition(tp.topic, tp.partition)] = OffsetAndMetadata(
                tp.offset, wire_metadata(tp.metadata), _epoch(tp.leader_epoch)
            )
    return out


def wire_metadata(metadata: str | None) -> str:
    """Commit metadata as confluent-kafka sends it: its C string with the terminating NUL
    (so that confluent-kafka's ``committed()`` reads back exactly what was given: ``""``
    stays ``""``), none for None."""
    return "" if metadata is None else metadata + "\0"


def user_metadata(metadata: str | None) -> str | None:
    """The metadata the application gave (see :func:`wire_metadata`); None for none."""
    if not metadata:
        return None
    return metadata[:-1] if metadata.endswith("\0") else metadata


def message_offsets(message: Any) -> Offsets:
    """The offset to commit after ``message``: its offset + 1."""
    return {
        KTopicPartition(message.topic(), message.partition()): OffsetAndMetadata(
            message.offset() + 1, "", _epoch(message.leader_epoch())
        )
    }


def confluent_partitions(offsets: Mapping[Any, OffsetAndMetadata]) -> list[Any]:
    """kafka-python offsets -> confluent TopicPartitions, sorted (for callbacks and returns)."""
    out = []
    for tp in sorted(offsets):
        om = offsets[tp]
        extra: dict[str, Any] = {"leader_epoch": _epoch(om.leader_epoch)}  # -1: unknown
        metadata = user_metadata(om.metadata)
        if metadata is not None:
            extra["metadata"] = metadata
        out.append(CTopicPartition(tp.topic, tp.partition, om.offset, **extra))
    return out


class Progress:
    """Assigned partitions, their consumption progress and the last committed offsets.

    Touched by the polling thread, by kafka-python's IO thread (rebalance steps,
    which run while the polling thread waits for them) and possibly by another
    application thread calling ``commit()``: a lock guards every access, and is
    never held while calling out.
    """

    def __init__(
        self, position: Callable[[list[Any]], list[Any]], *, auto_store: bool
    ) -> None:
        self._position = position
        self._auto_store = auto_store
        self._lock = threading.Lock()
        self._assigned: set[Key] = set()
        self._stored: Offsets = {}
        self._committed: dict[Any, int] = {}
        #: releases so far, and the release after which each partition was last given up
        self._releases = 0
        self._released: dict[Key, int] = {}
        #: where seek() sent a partition: librdkafka's position() is invalid from the seek
        #: until the next message of that partition is returned, and the seek target is then
        #: the progress (else a revoke would commit nothing for it and the next owner re-read)
        self._sought: dict[Key, int] = {}

    @property
    def auto_store(self) -> bool:
        """True when progress is librdkafka's position (``enable.auto.offset.store``)."""
        return self._auto_store

    def assigned(self) -> list[Key]:
        with self._lock:
            return sorted(self._assigned)

    def add(self, keys: Iterable[Key]) -> None:
        with self._lock:
            self._assigned.update(keys)

    def held(self, keys: Iterable[Key]) -> list[Key]:
        """The part of ``keys`` still assigned, in their order."""
        with self._lock:
            return [key for key in keys if key in self._assigned]

    def remove(self, keys: Iterable[Key]) -> None:
        with self._lock:
            self._releases += 1
            for key in keys:
                self._released[key] = self._releases
                self._assigned.discard(key)
                tp = KTopicPartition(*key)
                self._stored.pop(tp, None)
                self._committed.pop(tp, None)
                self._sought.pop(key, None)

    def sought(self, key: Key, offset: int) -> None:
        """The application called ``seek()``: ``offset`` is next, until a message says more."""
        with self._lock:
            if key in self._assigned and offset >= 0:
                self._sought[key] = offset
            else:
                self._sought.pop(key, None)  # a logical offset (beginning, end): unknown

    def store(self, offsets: Offsets) -> None:
        """``store_offsets()``: remember what the application has processed."""
        with self._lock:
            self._stored.update(offsets)

    def consumed(self, keys: Sequence[Key] | None = None) -> Offsets:
        """Progress of ``keys`` (default: every assigned partition) that can be committed."""
        if keys is None:
            keys = self.assigned()
        if not keys:
            return {}
        if self._auto_store:
            positions = self._position([CTopicPartition(t, p) for t, p in keys])
            with self._lock:
                for tp in positions:
                    key = (tp.topic, tp.partition)
                    if tp.offset >= 0:
                        self._sought.pop(key, None)
                    elif key in self._sought:
                        tp.offset = self._sought[key]
            return kafka_offsets(positions)
        wanted = set(keys)
        with self._lock:
            return {
                tp: om for tp, om in self._stored.items() if (tp.topic, tp.partition) in wanted
            }

    def uncommitted(self, offsets: Offsets) -> Offsets:
        """The part of ``offsets`` that differs from what was last committed successfully."""
        with self._lock:
            return {tp: om for tp, om in offsets.items() if self._committed.get(tp) != om.offset}

    def ticket(self) -> int:
        """Taken when a commit is queued: :meth:`fresh` later drops what was released since."""
        with self._lock:
            return self._releases

    def fresh(self, offsets: Offsets, ticket: int) -> Offsets:
        """``offsets`` without the partitions given up since ``ticket`` was taken or not held.

        A released partition's last commit was made by its release (revoke) or must not be
        made at all (lost): a commit queued before it, or made after it, would move it back.
        (Partitions this consumer never held are left as the application asked.)
        """
        with self._lock:
            return {tp: om for tp, om in offsets.items() if self._fresh((tp.topic, tp.partition),
                                                                        ticket)}

    def _fresh(self, key: Key, ticket: int) -> bool:
        released = self._released.get(key)
        return released is None or (key in self._assigned and released <= ticket)

    def mark_committed(self, offsets: Mapping[Any, OffsetAndMetadata]) -> None:
        with self._lock:
            for tp, om in offsets.items():
                if (tp.topic, tp.partition) in self._assigned:
                    self._committed[tp] = om.offset
