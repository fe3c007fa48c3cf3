"""Offsets of a ``BridgedConsumer``: commits (through the membership client, with the member's
generation, or librdkafka's own without a subscription), stored offsets, ``seek()``, the
automatic commit of a manual assignment, and the commit results ``on_commit`` gets from
``poll()``. A mixin of ``BridgedConsumer`` (``_consumer.py``), which sets the state below in its
``__init__``."""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Sequence
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka import TopicPartition as CTopicPartition
from kafka import errors as kp_errors

from ._callback_rules import CallbackRules
from ._config import BridgeConfig
from ._errors import as_kafka_exception
from ._events import check_message
from ._membership import MembershipThread
from ._offsets import Offsets, Progress, confluent_partitions, kafka_offsets, message_offsets

log = logging.getLogger("kafka_assignors.confluent")

_Base: Any = confluent_kafka.Consumer
_monotonic = time.monotonic


def librdkafka_commit(
    consumer: Any, message: Any, offsets: Sequence[Any] | None, asynchronous: bool
) -> list[Any] | None:
    """confluent-kafka's own ``commit()`` on ``consumer``, with only the arguments given."""
    kwargs: dict[str, Any] = {"asynchronous": asynchronous}
    if message is not None:
        kwargs["message"] = message
    if offsets is not None:
        kwargs["offsets"] = list(offsets)
    result: list[Any] | None = _Base.commit(consumer, **kwargs)
    return result


class OffsetCommits(CallbackRules):
    """The offsets half of ``BridgedConsumer``: what ``commit()`` (``CallbackRules``),
    ``store_offsets()`` and ``seek()`` do, on a subscription and on a manual assignment."""

    _settings: BridgeConfig
    _subscribed: bool
    #: a fatal error (a fenced static member): raised by every later commit
    _fatal: Any
    _progress: Progress
    _membership: MembershipThread
    _commit_results: collections.deque[tuple[Offsets, Any]]
    #: manual assignment (assign() without subscribe()): librdkafka's own, no group
    _manual: bool
    _manual_committed: dict[tuple[str, int], int]
    _manual_stored: dict[tuple[str, int], Any]
    _next_auto_commit: float

    def _commit(
        self, message: Any, offsets: Sequence[Any] | None, asynchronous: bool
    ) -> list[Any] | None:
        """Commit through the membership client (with the member's generation); without a
        subscription, librdkafka's own commit (manual assignment, no group membership)."""
        if not self._subscribed:
            return self._librdkafka_commit(message, offsets, asynchronous)
        if self._fatal is not None:
            raise KafkaException(self._fatal)
        if message is not None and offsets is not None:
            raise ValueError("Commit takes only one of message or offsets")
        if message is not None:
            check_message(message, "commit")
            to_commit = message_offsets(message)
        elif offsets is not None:
            to_commit = kafka_offsets(offsets)
        else:  # as librdkafka: only what moved since the last commit
            to_commit = self._progress.uncommitted(self._progress.consumed())
        if not to_commit:
            nothing = KafkaError(KafkaError._NO_OFFSET, "no offsets to commit")
            if not asynchronous:
                raise KafkaException(nothing)
            if self._settings.on_commit is not None:  # as librdkafka: reported to on_commit
                self._commit_results.append(({}, nothing))
            return None
        if asynchronous:
            self._membership.commit_async(to_commit)
            return None
        try:
            self._membership.commit(to_commit, report=False)
        except kp_errors.KafkaError as exc:
            error = as_kafka_exception(exc)
            if isinstance(exc, kp_errors.FencedInstanceIdError):
                self._fatal = error.args[0]  # as librdkafka: every later commit fails so
            raise error from exc
        return confluent_partitions(to_commit)

    def _librdkafka_commit(
        self, message: Any, offsets: Sequence[Any] | None, asynchronous: bool
    ) -> list[Any] | None:
        result = librdkafka_commit(self, message, offsets, asynchronous)
        if result is not None:
            self._manual_committed.update(
                ((tp.topic, tp.partition), tp.offset) for tp in result if tp.offset >= 0)
        return result

    def seek(self, partition: Any) -> None:
        """confluent-kafka's ``seek()``; the bridge remembers the offset as the progress."""
        _Base.seek(self, partition)
        self._progress.sought((partition.topic, partition.partition), partition.offset)

    def store_offsets(self, message: Any = None, offsets: Sequence[Any] | None = None) -> None:
        """Remember processed offsets for the next commit (``enable.auto.offset.store=false``)."""
        self._check_usable(None)
        if not self._subscribed:  # manual assignment: librdkafka's own store
            kwargs: dict[str, Any] = {}
            if message is not None:
                kwargs["message"] = message
            if offsets is not None:
                kwargs["offsets"] = offsets
            _Base.store_offsets(self, **kwargs)
            if message is not None:
                self._manual_stored[(message.topic(), message.partition())] = message.offset() + 1
            for tp in offsets or ():
                self._manual_stored[(tp.topic, tp.partition)] = tp.offset
            return
        if message is not None and offsets is not None:  # confluent-kafka's checks, in order
            raise ValueError("message and offsets are mutually exclusive")
        if message is None and offsets is None:
            raise ValueError("expected either message or offsets")
        if message is not None:
            check_message(message, "store_offsets")
        if self._progress.auto_store:
            raise KafkaException(KafkaError(
                KafkaError._INVALID_ARG,
                "StoreOffsets failed: store_offsets() requires enable.auto.offset.store=false",
            ))
        wanted = message_offsets(message) if message is not None else kafka_offsets(offsets or ())
        # as librdkafka: only partitions assigned now are stored (a stored offset of another
        # would be committed once it is assigned, perhaps much later); an error only when
        # none was
        held = set(self._progress.held([(tp.topic, tp.partition) for tp in wanted]))
        mine = {tp: om for tp, om in wanted.items() if (tp.topic, tp.partition) in held}
        if wanted and not mine:
            raise KafkaException(KafkaError(
                KafkaError._STATE,
                f"StoreOffsets failed: {KafkaError(KafkaError._STATE).str()} (not assigned to "
                f"this consumer: {', '.join(f'{tp.topic}-{tp.partition}' for tp in wanted)})",
            ))
        self._progress.store(mine)

    # --- manual assignment --------------------------------------------------------------

    def _group_subscribed(self) -> bool:
        return self._subscribed

    def _manually_assigned(self) -> None:
        if not self._manual:
            self._manual = True
            self._next_auto_commit = _monotonic() + self._settings.auto_commit_interval_s

    def _manual_auto_commit(self, *, final: bool, now: float | None = None) -> None:
        """librdkafka's automatic commit of a manual assignment (its own is switched off,
        since it would commit as a non-member while subscribed): every
        ``auto.commit.interval.ms`` and at close, what changed since the last commit."""
        if not self._settings.auto_commit:
            return
        if not final:
            assert now is not None
            if now < self._next_auto_commit:
                return
            self._next_auto_commit = now + self._settings.auto_commit_interval_s
        try:
            assigned = _Base.assignment(self)
            if self._progress.auto_store:
                current = {(tp.topic, tp.partition): tp.offset
                           for tp in _Base.position(self, assigned) if tp.offset >= 0}
            else:
                held = {(tp.topic, tp.partition) for tp in assigned}
                current = {k: o for k, o in self._manual_stored.items() if k in held}
            changed = [CTopicPartition(t, p, o) for (t, p), o in sorted(current.items())
                       if self._manual_committed.get((t, p)) != o]
            if changed:
                self._manual_committed.update(current)
                _Base.commit(self, offsets=changed, asynchronous=not final)
        except KafkaException as exc:
            log.warning("automatic commit of the manual assignment failed: %s", exc)

    def _commit_done(self, offsets: Offsets, result: Any, report: bool) -> None:
        """Every commit ends here (any thread): bookkeeping, then on_commit from poll()
        (``report``: not for the application's synchronous commits, as librdkafka)."""
        if not isinstance(result, BaseException):
            self._progress.mark_committed(offsets)
        elif not isinstance(result, kp_errors.RebalanceInProgressError):
            log.warning("offset commit failed: %s", result)
        if report and self._settings.on_commit is not None:
            self._commit_results.append((offsets, result))

    def _deliver_commit_results(self) -> None:
        on_commit = self._settings.on_commit
        while self._commit_results and on_commit is not None:
            offsets, result = self._commit_results.popleft()
            if isinstance(result, KafkaError):
                error = result
            elif isinstance(result, BaseException):
                error = as_kafka_exception(result).args[0]
            else:
                error = None
            on_commit(error, confluent_partitions(offsets))
