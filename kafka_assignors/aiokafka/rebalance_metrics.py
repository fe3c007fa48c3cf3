"""The Java consumer's rebalance metrics, and ours, for aiokafka consumers.

aiokafka has no metrics at all. ``kafka_assignors.metrics.instrument(consumer)`` gives the
consumer's ``GroupCoordinator`` a subclass, :class:`RebalanceMetricsMixin` composed over the
coordinator's own class (aiokafka's, or the cooperative runtime's
``CooperativeGroupCoordinator``), whose overrides call ``super()`` and record, with the
meanings of Apache Kafka's ``AbstractCoordinator``/``ConsumerCoordinator``:

* rebalance start: a JoinGroup about to be sent while no rebalance is in progress (Java's
  ``initiateJoinGroup``: entering PREPARING_REBALANCE; a failed attempt keeps the start);
* success: a SyncGroup answered without error (Java records the latency there, before the
  assignment is applied and ``onPartitionsAssigned`` runs);
* failure: a JoinGroup or SyncGroup that failed (an error code, no answer, or the leader's
  assignment raising), each attempt once.  As in Java, that includes the
  MEMBER_ID_REQUIRED answer every new dynamic member gets to its first JoinGroup;
* the user's ``ConsumerRebalanceListener`` calls (revoked, assigned; aiokafka has no lost
  callback: it calls ``on_partitions_revoked`` then), timed through a proxy put in place of
  the listener only while a coordinator step runs;
* the longest pause of a kept partition (held when the rebalance's prepare step began, held
  after its take-up, its generation not lost meanwhile): aiokafka returns no records while
  a reassignment is in progress (eager: from the prepare step, which revokes everything, to
  the new assignment), so that stretch, up to the end of the take-up, is the pause. A
  cooperative member keeps returning its kept partitions' records through the rebalance:
  only a listener call that holds the event loop (a synchronous one) pauses them, and the
  longest such call is the pause.

Before ``start()`` the consumer gets a subclass too (:class:`MeteredConsumerMixin` over its
own class), whose ``start()`` composes the metrics over the coordinator as soon as it is
built, before its coordination task runs (after the cooperative runtime put its class in
place). No instance attribute shadows a method. Every aiokafka internal used is in the
runtime's manifest (:mod:`.runtime.manifest`, ``METRICS_*``), checked before a class
changes. Tested on aiokafka 0.12.0 and 0.14.0 (the ``aiokafka`` extra's floor and newest)
and 0.13.0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from aiokafka import AIOKafkaConsumer as _AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.consumer.group_coordinator import GroupCoordinator

from ..kafka_python.assignor import KafkaPythonAssignor
from ..metrics import GroupMetrics, attach, metrics_of
from .runtime import manifest
from .runtime.consumer import _AfterEachStep

log = logging.getLogger("kafka_assignors")

#: Kafka API keys of the requests that make a rebalance.
JOIN_GROUP, SYNC_GROUP = 11, 14
#: the per-coordinator state of :class:`RebalanceMetricsMixin` (one instance attribute)
_PAUSE = "_kafka_assignors_pause"
_lock = threading.RLock()
#: aiokafka ``SubscriptionState`` (one per consumer, made in its constructor) -> metrics, so
#: the accessor (given the consumer) and the coordinator (made in ``start()``) share one
_by_subscription: weakref.WeakKeyDictionary[object, GroupMetrics] = weakref.WeakKeyDictionary()
_coordinator_classes: dict[type, type] = {}
_consumer_classes: dict[type, type] = {}


def metrics_for_subscription(subscription: object, client_id: str | None) -> GroupMetrics:
    """The metrics of the consumer owning aiokafka ``SubscriptionState`` ``subscription``."""
    with _lock:
        found = _by_subscription.get(subscription)
        if found is None:
            tags = {"client-id": client_id} if client_id else None
            found = _by_subscription[subscription] = GroupMetrics(tags=tags)
        return found


def consumer_metrics(consumer: Any) -> GroupMetrics:
    """The consumer's metrics, attached to it as ``_kafka_assignors_metrics``."""
    found = metrics_of(consumer)
    if found is None:
        # (AIOKafkaConsumer keeps its client id on its client only)
        client_id = getattr(getattr(consumer, "_client", None), "_client_id", None)
        found = metrics_for_subscription(consumer._subscription, client_id)
        attach(consumer, found)
    return found


def instrument(consumer: Any) -> GroupMetrics:
    """``kafka_assignors.metrics.instrument`` for an aiokafka consumer, started or not.
    Raises RuntimeError naming what the installed aiokafka lacks (nothing changed)."""
    lacking = manifest.metrics_missing() + manifest.instance_missing(
        "AIOKafkaConsumer", consumer, manifest.METRICS_INSTANCE)
    if lacking:
        raise RuntimeError("kafka_assignors.metrics.instrument: this aiokafka lacks "
                           + ", ".join(lacking))
    found = consumer_metrics(consumer)
    if consumer._coordinator is not None:  # started
        install(consumer._coordinator)
    else:
        with _lock:
            if not isinstance(consumer, MeteredConsumerMixin):
                consumer.__class__ = metered_consumer_class(type(consumer))
    return found


def install(coordinator: Any) -> GroupMetrics | None:
    """Give ``coordinator`` its class with the metrics; idempotent. None (logged) for a
    consumer without a group (aiokafka's ``NoGroupCoordinator``); RuntimeError naming what
    the installed aiokafka lacks."""
    if not isinstance(coordinator, GroupCoordinator):
        log.info("kafka-assignors metrics: %s is no group member: no rebalance metrics",
                 type(coordinator).__name__)
        return None
    with _lock:
        if isinstance(coordinator, RebalanceMetricsMixin):
            return metrics_of(coordinator)
        lacking = manifest.metrics_missing(coordinator)
        if lacking:
            raise RuntimeError("kafka_assignors.metrics.instrument: this aiokafka lacks "
                               + ", ".join(lacking))
        client_id = getattr(getattr(coordinator, "_client", None), "_client_id", None)
        metrics = metrics_for_subscription(coordinator._subscription, client_id)
        for assignor in coordinator._assignors:  # our assignors read the generation there
            if _ours(assignor):
                assignor.bind(coordinator)
        # the state first, then the class: every override finds it
        setattr(coordinator, _PAUSE, _Pause())
        attach(coordinator, metrics)  # ``metrics_of(consumer)`` also looks there
        coordinator.__class__ = metered_class(type(coordinator))
        return metrics


def metered_class(base: type) -> type:
    """``base`` (a ``GroupCoordinator`` class) with :class:`RebalanceMetricsMixin` outermost
    (one class per base)."""
    with _lock:
        found = _coordinator_classes.get(base)
        if found is None:
            found = _coordinator_classes[base] = types.new_class(
                f"Metered{base.__name__}", (RebalanceMetricsMixin, base),
                exec_body=lambda ns: ns.update(__module__=__name__,
                                               _kafka_assignors_base=base))
        return found


def metered_consumer_class(base: type) -> type:
    """``base`` (an ``AIOKafkaConsumer`` class) with :class:`MeteredConsumerMixin` outermost."""
    with _lock:
        found = _consumer_classes.get(base)
        if found is None:
            found = _consumer_classes[base] = types.new_class(
                f"Metered{base.__name__}", (MeteredConsumerMixin, base),
                exec_body=lambda ns: ns.update(__module__=__name__,
                                               _kafka_assignors_base=base))
        return found


def _ours(assignor: Any) -> bool:
    """True for an ``AIOKafkaAssignor`` (one of our strategies in aiokafka's interface)."""
    return (isinstance(getattr(assignor, "_inner", None), KafkaPythonAssignor)
            and callable(getattr(assignor, "bind", None)) and not isinstance(assignor, type))


class MeteredConsumerMixin(_AIOKafkaConsumer):  # type: ignore[misc]
    """An aiokafka consumer whose coordinator gets the rebalance metrics as ``start()``
    builds it (``instrument()`` before ``start()``)."""

    async def start(self, *args: Any, **kwargs: Any) -> None:
        """aiokafka's ``start()`` (through ``super()``); the metrics go on its coordinator at
        the first step where it exists, before its coordination task first runs."""
        await _AfterEachStep(super().start(*args, **kwargs), self._kafka_assignors_meter)

    def _kafka_assignors_meter(self) -> None:
        coordinator = self._coordinator
        if coordinator is not None and not isinstance(coordinator, RebalanceMetricsMixin):
            install(coordinator)


class _Pause:
    """Per coordinator: the open rebalance window and what paused its kept partitions."""

    def __init__(self) -> None:
        self.held: frozenset[Any] | None = None  # partitions held when the window opened
        self.stopped_at: float | None = None  # records stopped (reassignment) at
        self.blocked = 0.0  # longest listener call holding the event loop, in the window
        self.lost = False  # the membership was lost: nothing is kept


class RebalanceMetricsMixin(GroupCoordinator):  # type: ignore[misc]
    """aiokafka's ``GroupCoordinator`` steps, timed (each override calls ``super()``)."""

    _kafka_assignors_base: ClassVar[type]

    @property
    def _kafka_assignors_metrics_of(self) -> GroupMetrics:
        found = metrics_of(self)
        if found is None:  # install() attaches it before the class changes
            raise RuntimeError("kafka-assignors metrics: no GroupMetrics on this coordinator")
        return found

    @property
    def _kafka_assignors_pause(self) -> _Pause:
        pause: _Pause = self.__dict__[_PAUSE]
        return pause

    async def _send_req(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        """JoinGroup starts a rebalance; SyncGroup answered without error succeeds it; either
        failing (an error code or no answer) fails it. A cancelled one (a stopping consumer)
        counts neither way."""
        api_key = getattr(request, "API_KEY", None)
        if api_key not in (JOIN_GROUP, SYNC_GROUP):
            return await super()._send_req(request, *args, **kwargs)
        metrics = self._kafka_assignors_metrics_of
        if api_key == JOIN_GROUP:
            metrics.rebalance_started()
        try:
            response = await super()._send_req(request, *args, **kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException:
            metrics.rebalance_failed()
            raise
        if getattr(response, "error_code", 0) != 0:
            metrics.rebalance_failed()
        elif api_key == SYNC_GROUP:
            metrics.rebalance_succeeded()
        return response

    async def _perform_assignment(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        """The leader's assignment: its report; a failing assignor fails the rebalance (aiokafka
        gives up the round, as Java's join fails)."""
        metrics = self._kafka_assignors_metrics_of
        try:
            result = await super()._perform_assignment(response, *args, **kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException:
            metrics.rebalance_failed()
            raise
        report = _leader_report(self, getattr(response, "group_protocol", None))
        if report is not None:
            metrics.record_leader(report)
        return result

    async def _on_join_prepare(self, previous_assignment: Any, *args: Any,
                               **kwargs: Any) -> None:
        """The rebalance's first prepare opens its window; if records stop being returned
        (eager: everything is revoked), its kept partitions pause from here."""
        pause = self._kafka_assignors_pause
        started = self._kafka_assignors_metrics_of.clock()
        if pause.held is None:
            pause.held = frozenset(previous_assignment.tps if previous_assignment is not None
                                   else ())
            pause.blocked = 0.0
        with self._kafka_assignors_timed_listener():
            await super()._on_join_prepare(previous_assignment, *args, **kwargs)
        if pause.stopped_at is None and self._subscription.reassignment_in_progress:
            pause.stopped_at = started

    async def _on_join_complete(self, *args: Any, **kwargs: Any) -> None:
        """The take-up closes the window: a partition held at its start and now is kept."""
        try:
            with self._kafka_assignors_timed_listener():
                await super()._on_join_complete(*args, **kwargs)
        except BaseException:
            self._kafka_assignors_close_window()
            raise
        seconds = self._kafka_assignors_close_window()
        if seconds is not None:
            self._kafka_assignors_metrics_of.record_kept_pause(seconds)

    async def _maybe_leave_group(self, *args: Any, **kwargs: Any) -> None:
        """A closing member's listener call (the cooperative runtime revokes then), timed."""
        with self._kafka_assignors_timed_listener():
            await super()._maybe_leave_group(*args, **kwargs)

    def reset_generation(self, *args: Any, **kwargs: Any) -> None:
        """A membership lost while records were flowing (the cooperative runtime stops them
        then): what it held is not kept, whatever the next assignment says."""
        stopped_before = self._subscription.reassignment_in_progress
        super().reset_generation(*args, **kwargs)
        if not stopped_before and self._subscription.reassignment_in_progress:
            self._kafka_assignors_pause.lost = True

    # --- helpers (names of ours only) -----------------------------------------------------

    def _kafka_assignors_close_window(self) -> float | None:
        """Close the window; the kept partitions' pause, or None if none was kept."""
        pause = self._kafka_assignors_pause
        held, stopped, blocked, lost = pause.held, pause.stopped_at, pause.blocked, pause.lost
        pause.held, pause.stopped_at, pause.blocked, pause.lost = None, None, 0.0, False
        if held is None or lost or not held & set(self._subscription.assigned_partitions()):
            return None
        if stopped is None:
            return blocked
        return max(blocked, self._kafka_assignors_metrics_of.clock() - stopped)

    def _kafka_assignors_blocked(self, seconds: float) -> None:
        pause = self._kafka_assignors_pause
        if pause.held is not None:
            pause.blocked = max(pause.blocked, seconds)

    @contextlib.contextmanager
    def _kafka_assignors_timed_listener(self) -> Iterator[None]:
        """The user's listener behind a timing proxy while a step runs, then put back (unless
        the application subscribed with another listener meanwhile)."""
        subscription = self._subscription
        inner = subscription._listener
        if inner is None or isinstance(inner, _TimedListener):
            yield
            return
        proxy = _TimedListener(inner, self._kafka_assignors_metrics_of,
                               self._kafka_assignors_blocked)
        subscription._listener = proxy
        try:
            yield
        finally:
            if subscription._listener is proxy:
                subscription._listener = inner


def _leader_report(coordinator: Any, protocol: Any) -> Any:
    """What our assignor just computed as this consumer's leader (None for other assignors)."""
    assignor = coordinator._lookup_assignor(protocol) if protocol is not None else None
    inner = getattr(assignor, "_inner", None)
    if not isinstance(inner, KafkaPythonAssignor):
        return None
    return inner.report_for(coordinator)


class _TimedListener(ConsumerRebalanceListener):  # type: ignore[misc]
    """The user's listener, each call timed as Java times ``onPartitionsRevoked``/``Assigned``;
    the synchronous part of each call (it holds the event loop) reported to ``blocked``."""

    def __init__(self, inner: Any, metrics: GroupMetrics,
                 blocked: Callable[[float], None]) -> None:
        self.inner = inner
        self._metrics = metrics
        self._blocked = blocked

    async def _call(self, kind: Any, method: str, partitions: Iterable[Any]) -> None:
        clock = self._metrics.clock
        with self._metrics.listener(kind):
            start = clock()
            result = getattr(self.inner, method)(partitions)
            self._blocked(clock() - start)
            if asyncio.iscoroutine(result):
                await result

    async def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
        await self._call("revoked", "on_partitions_revoked", revoked)

    async def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
        await self._call("assigned", "on_partitions_assigned", assigned)
