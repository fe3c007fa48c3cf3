"""Rebalance steps: from kafka-python's listener to the application's polling thread.

kafka-python calls its rebalance listener on its IO thread, inside the
membership thread's ``poll()``.  The listener only stops the membership client
from fetching and posts a *step*; the step runs on the application's thread,
inside ``poll()``/``consume()``, as confluent-kafka runs rebalance callbacks.

* assign: the user's ``on_assign``, then librdkafka starts fetching from the
  committed offsets.  The listener does not wait for it.
* revoke: the user's ``on_revoke`` (it may commit or store offsets), librdkafka
  stops fetching, the progress is committed with the member's generation.  The
  listener waits for all of it (bounded by ``max.poll.interval.ms``, like the
  broker), so kafka-python gives the partitions back only afterwards: nothing
  is consumed twice.
* lost: the user's ``on_lost`` (or ``on_revoke``), librdkafka stops fetching;
  nothing is committed (the group has moved on).  Not waited for.

Steps run in the order they were posted.  While the listener waits it yields to
kafka-python's event loop, so heartbeats and the step's own commits go on.

Metrics (when given a :class:`~kafka_assignors.metrics.GroupMetrics`): each user callback
is timed as Java times its listener (``partition-assigned/revoked/lost-latency``), and the
kept-partition pause is recorded for each rebalance in which this member keeps partitions:
eager, from the revoke step's ``unassign`` to the assign step's ``assign`` (librdkafka
fetches none of them meanwhile); cooperative, the time the application's ``poll()`` spent
running the steps (librdkafka keeps fetching the kept partitions, but the application
reads nothing while its callbacks and the revocation's commit run).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from confluent_kafka import TopicPartition as CTopicPartition
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener

from ..metrics import GroupMetrics
from ..metrics.rebalance import ListenerKind
from ._offsets import Key, Offsets, Progress

log = logging.getLogger("kafka_assignors.confluent")

Callback = Callable[[Any, list[Any]], None]
ASSIGN, REVOKE, LOST = "assign", "revoke", "lost"
#: the step kind -> the Java listener metric it is timed as
_LISTENER_KIND: dict[str, ListenerKind] = {ASSIGN: "assigned", REVOKE: "revoked",
                                           LOST: "lost"}


class Librdkafka(Protocol):
    """The confluent-kafka consumer's own assignment calls (not the bridge's overrides)."""

    def assign(self, partitions: list[Any]) -> None: ...
    def unassign(self) -> None: ...
    def incremental_assign(self, partitions: list[Any]) -> None: ...
    def incremental_unassign(self, partitions: list[Any]) -> None: ...
    def assignment(self) -> list[Any]: ...


class OwnCalls:
    """librdkafka's own assignment calls on a subclass that overrides them (the bridge)."""

    def __init__(self, consumer: Any, base: Any) -> None:
        # weakly: the membership threads reach this object, and must not keep a consumer
        # dropped without close() alive (confluent-kafka's is collected)
        self._c = weakref.ref(consumer)
        self._base = base  # confluent_kafka.Consumer

    def assign(self, partitions: list[Any]) -> None:
        self._base.assign(self._c(), partitions)

    def unassign(self) -> None:
        self._base.unassign(self._c())

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._base.incremental_assign(self._c(), partitions)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._base.incremental_unassign(self._c(), partitions)

    def position(self, partitions: list[Any]) -> list[Any]:
        return list(self._base.position(self._c(), partitions))

    def assignment(self) -> list[Any]:
        return list(self._base.assignment(self._c()))


class Membership(Protocol):
    """The parts of kafka-python's ``KafkaConsumer`` the listener touches."""

    def pause(self, *partitions: Any) -> None: ...
    def seek(self, partition: Any, offset: int) -> None: ...


class Waiter(Protocol):
    """kafka-python's ``WakeupNotifier``: awaited on the IO thread, notified from any thread."""

    def __call__(self, timeout_secs: float | None = None) -> Any: ...
    def notify(self) -> None: ...


@dataclass(eq=False)
class Step:
    """One rebalance step handed from the IO thread to the polling thread."""

    kind: str
    keys: list[Key]
    waiter: Waiter | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: bool = False
    done: bool = False
    abandoned: bool = False


class Rebalancer(AsyncConsumerRebalanceListener):  # type: ignore[misc]
    """kafka-python's rebalance listener, and the runner of its steps on the polling thread."""

    def __init__(
        self,
        *,
        consumer: Callable[[], Any],
        librdkafka: Librdkafka,
        membership: Membership,
        progress: Progress,
        commit: Callable[[Offsets], None],
        flush: Callable[[], None] = lambda: None,
        new_waiter: Callable[[], Waiter],
        cooperative: bool,
        auto_commit: bool,
        step_timeout_s: float,
        on_post: Callable[[], None] = lambda: None,
        metrics: GroupMetrics | None = None,
    ) -> None:
        self._consumer = consumer
        self._metrics = metrics
        #: eager: partitions the last revoke step took out of librdkafka, and when
        self._released: dict[Key, float] = {}
        self._on_post = on_post
        self._raw = librdkafka
        self._membership = membership
        self._progress = progress
        self._commit = commit
        self._flush = flush
        self._new_waiter = new_waiter
        self.cooperative = cooperative
        self._auto_commit = auto_commit
        self._step_timeout_s = step_timeout_s
        self.on_assign: Callback | None = None
        self.on_revoke: Callback | None = None
        self.on_lost: Callback | None = None
        #: when set, listener calls are ignored (close() has already handed everything back)
        self.ignoring = False
        #: set by the first assignment (the group's rebalance protocol is known from then on)
        self.joined = False
        #: assign, revoke and lost steps run so far (librdkafka's statistics' rebalance_cnt)
        self.rebalances = 0
        self._steps: collections.deque[Step] = collections.deque()
        self._callback_thread: int | None = None
        self._user_moved = False

    # --- IO thread: kafka-python's listener interface ------------------------------------

    async def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
        self.joined = True
        for tp in sorted(assigned):
            # the membership client never fetches (librdkafka does): no position lookup either
            self._membership.pause(tp)
            self._membership.seek(tp, 0)
        if self.ignoring or (self.cooperative and not assigned):
            return
        self._post(Step(ASSIGN, _keys(assigned)))

    async def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
        keys = _keys(revoked)
        if self.ignoring or not keys:
            return
        step = Step(REVOKE, keys, waiter=self._new_waiter())
        self._post(step)
        await self._wait(step)

    async def on_partitions_lost(self, lost: Iterable[Any]) -> None:
        keys = _keys(lost)
        if not self.ignoring and keys:
            self._post(Step(LOST, keys))

    def _post(self, step: Step) -> None:
        self._steps.append(step)
        self._on_post()  # tells the polling thread to look at once

    async def _wait(self, step: Step) -> None:
        """Until the polling thread has run ``step``: bounded, yielding to the event loop."""
        assert step.waiter is not None
        deadline = time.monotonic() + self._step_timeout_s
        hard_deadline = deadline + self._step_timeout_s
        while True:
            now = time.monotonic()
            with step.lock:
                if step.done:
                    return
                if now >= deadline and not step.started:
                    step.abandoned = True
                started = step.started
            if step.abandoned:
                log.error("the application did not poll() within %.0f s: %s is given back "
                          "without committing its progress", self._step_timeout_s,
                          _show(step.keys))
                return
            limit = hard_deadline if started else deadline
            if now >= limit:
                log.error("on_revoke for %s still running after %.0f s: giving the partitions "
                          "back anyway", _show(step.keys), limit - deadline + self._step_timeout_s)
                return
            await step.waiter(min(1.0, limit - now))

    # --- polling thread: running the steps -----------------------------------------------------

    @property
    def steps(self) -> collections.deque[Step]:
        """Posted steps, oldest first (the bridge checks it is empty on every poll)."""
        return self._steps

    def serve(self) -> None:
        """Run every posted step; re-raise the first exception of a user callback afterwards."""
        first_error: BaseException | None = None
        metrics = self._metrics if self.cooperative and self._steps else None
        if metrics is not None:
            started, before = metrics.clock(), set(self._progress.assigned())
        while self._steps:
            step = self._steps.popleft()
            with step.lock:
                kind = LOST if step.abandoned else step.kind
                step.started = True
            if kind != ASSIGN and metrics is not None:
                before.difference_update(step.keys)  # given up: not kept, even if it returns
            try:
                error = self._run(kind, step.keys)
            finally:
                with step.lock:
                    step.done = True
                if step.waiter is not None:
                    step.waiter.notify()
            if first_error is None:
                first_error = error
        if metrics is not None and before & set(self._progress.assigned()):
            # cooperative: librdkafka kept fetching the kept partitions, but the application
            # read none of them while its poll() ran the steps
            metrics.record_kept_pause(metrics.clock() - started)
        if first_error is not None:
            raise first_error

    def release_all(self, *, lost: bool) -> None:
        """Hand back everything still held (close, unsubscribe), on the polling thread."""
        keys = self._progress.assigned()
        if keys:
            error = self._run(LOST if lost else REVOKE, keys)
            if error is not None:
                raise error

    def in_callback(self) -> bool:
        """True when called from inside a user rebalance callback."""
        return self._callback_thread == threading.get_ident()

    def user_moved(self) -> None:
        """The user's callback called (incremental_)assign/unassign itself."""
        self._user_moved = True

    def release_lost(self) -> None:
        """The member left or was expelled while holding partitions: hand them back as lost.

        Runs before the next message is returned (Java calls ``onPartitionsLost`` first in its
        next ``poll()``), so nothing librdkafka buffered for them reaches the application; the
        lost step kafka-python posts later finds nothing left to do.
        """
        self.release_all(lost=True)

    def _run(self, kind: str, keys: list[Key]) -> BaseException | None:
        if kind != ASSIGN:
            keys = self._progress.held(keys)  # already released (lost, close): nothing to do
            if not keys:
                return None
        self.rebalances += 1
        partitions = [CTopicPartition(t, p) for t, p in keys]
        if kind == ASSIGN:
            self._progress.add(keys)
            error = self._callback(ASSIGN, self.on_assign, partitions)
            if not self._user_moved:
                if self.cooperative:
                    # the application may have assigned some itself (outside a callback)
                    fetched = self._fetched()
                    new = [tp for tp in partitions if (tp.topic, tp.partition) not in fetched]
                    if new:
                        self._raw.incremental_assign(new)
                else:
                    self._raw.assign(partitions)
            self._record_kept(keys)
            log.info("assigned %s", _show(keys))
            return error
        auto_store = self._progress.auto_store
        # positions vanish once librdkafka lets go of a partition: read them first
        positions = self._progress.consumed(keys) if kind == REVOKE and auto_store else {}
        callback = self.on_revoke if kind == REVOKE else (self.on_lost or self.on_revoke)
        error = self._callback(kind, callback, partitions)
        if not self._user_moved:
            if self.cooperative:
                # the application may have unassigned some itself (librdkafka refuses to
                # unassign a partition it does not have: _INVALID_ARG)
                fetched = self._fetched()
                gone = [tp for tp in partitions if (tp.topic, tp.partition) in fetched]
                if gone:
                    self._raw.incremental_unassign(gone)
            else:
                self._raw.unassign()
        if kind == REVOKE and not self.cooperative and self._metrics is not None:
            released = self._metrics.clock()
            self._released = {key: released for key in keys}
        else:
            self._released = {}
        if kind == REVOKE:
            # commits made so far (on_revoke's asynchronous ones too) go out before the
            # partitions are given back; later queued ones of theirs are dropped
            pending = {}
            if self._auto_commit:
                final = positions if auto_store else self._progress.consumed(keys)
                pending = self._progress.uncommitted(final)
            try:
                if pending:
                    self._commit(pending)
                else:
                    self._flush()
            except Exception as exc:
                log.warning("committing %s before giving it back failed (%s): it may be "
                            "consumed again", _show(keys), exc)
        self._progress.remove(keys)
        if kind == LOST:
            log.warning("lost %s (the group moved on without this member); what was consumed "
                        "since the last commit will be consumed again", _show(keys))
        else:
            log.info("released %s", _show(keys))
        return error

    def _fetched(self) -> set[Key]:
        """The partitions librdkafka fetches now."""
        return {(tp.topic, tp.partition) for tp in self._raw.assignment()}

    def _record_kept(self, keys: list[Key]) -> None:
        """Eager: the longest time a partition assigned again was out of librdkafka's hands."""
        released, self._released = self._released, {}
        kept = [released[k] for k in keys if k in released]
        if kept and self._metrics is not None:
            self._metrics.record_kept_pause(self._metrics.clock() - min(kept))

    def _callback(self, kind: str, callback: Callback | None,
                  partitions: list[Any]) -> BaseException | None:
        self._user_moved = False
        if callback is None:
            return None
        self._callback_thread = threading.get_ident()
        try:
            if self._metrics is None:
                callback(self._consumer(), partitions)
            else:
                with self._metrics.listener(_LISTENER_KIND[kind]):
                    callback(self._consumer(), partitions)
        except Exception as exc:  # re-raised from poll() once the step is complete
            log.exception("rebalance callback %r raised", callback)
            return exc
        finally:
            self._callback_thread = None
        return None


def _keys(partitions: Iterable[Any]) -> list[Key]:
    return sorted((tp.topic, tp.partition) for tp in partitions)


def _show(keys: list[Key]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in keys) or "nothing"
