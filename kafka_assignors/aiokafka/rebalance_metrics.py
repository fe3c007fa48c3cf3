"""The Java consumer's rebalance metrics, and ours, for aiokafka consumers with our assignors.

aiokafka has no metrics at all.  When one of our assignors is first asked for its
subscription (just before a JoinGroup is sent) it wraps four methods of that consumer's
``GroupCoordinator`` instance (aiokafka's classes are never changed) and records, with the
meanings of Apache Kafka's ``AbstractCoordinator``/``ConsumerCoordinator``:

* rebalance start: a JoinGroup about to be sent while no rebalance is in progress (Java's
  ``initiateJoinGroup``: entering PREPARING_REBALANCE; a failed attempt keeps the start);
* success: a SyncGroup answered without error (Java records the latency there, before the
  assignment is applied and ``onPartitionsAssigned`` runs);
* failure: a JoinGroup or SyncGroup that failed (an error code, no answer, or the leader's
  assignment raising), each attempt once.  As in Java, that includes the
  MEMBER_ID_REQUIRED answer every new dynamic member gets to its first JoinGroup;
* the user's ``ConsumerRebalanceListener`` calls (revoked, assigned; aiokafka has no lost
  callback: it calls ``on_partitions_revoked`` then);
* the longest pause of a kept partition: aiokafka (eager only) stops fetching every
  partition when it prepares a rebalance and resumes once the new assignment is in place.

Tested on aiokafka 0.12.0 and 0.14.0 (the ``aiokafka`` extra's floor and newest, in the
compatibility matrix) and 0.13.0; every private name is checked before anything is
wrapped, otherwise one warning and no metrics.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from aiokafka.abc import ConsumerRebalanceListener

from ..kafka_python.assignor import KafkaPythonAssignor
from ..metrics import ATTRIBUTE, GroupMetrics, attach, metrics_of

log = logging.getLogger("kafka_assignors")

#: The coordinator attributes wrapped or read (checked before installing).
NEEDS = ("_send_req", "_perform_assignment", "_on_join_prepare", "_on_join_complete",
         "_lookup_assignor", "_subscription", "group_id")
#: Attributes of aiokafka's ``SubscriptionState`` read or replaced.
SUBSCRIPTION_NEEDS = ("_listener", "assigned_partitions")
#: Kafka API keys of the requests that make a rebalance.
JOIN_GROUP, SYNC_GROUP = 11, 14
_lock = threading.Lock()
_warned = False
#: aiokafka ``SubscriptionState`` (one per consumer, made in its constructor) -> metrics, so
#: the accessor (given the consumer) and the coordinator (made in ``start()``) share one
_by_subscription: weakref.WeakKeyDictionary[object, GroupMetrics] = weakref.WeakKeyDictionary()


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
    found: GroupMetrics | None = getattr(consumer, ATTRIBUTE, None)
    if found is None:
        # (AIOKafkaConsumer keeps its client id on its client only)
        client_id = getattr(getattr(consumer, "_client", None), "_client_id", None)
        found = metrics_for_subscription(consumer._subscription, client_id)
        attach(consumer, found)
    return found


def instrument_started(consumer: Any) -> GroupMetrics:
    """Metrics on a started aiokafka consumer's coordinator; binds our assignors to it (they
    read the generation there). Raises RuntimeError naming what aiokafka lacks."""
    coordinator = consumer._coordinator
    missing = [n for n in NEEDS if not hasattr(coordinator, n)]
    if missing:
        raise RuntimeError("kafka_assignors.metrics.instrument: this aiokafka's "
                           f"GroupCoordinator has no {', '.join(missing)}")
    found = install(coordinator)
    if found is None:
        raise RuntimeError("kafka_assignors.metrics.instrument: this aiokafka's "
                           "SubscriptionState lacks " + ", ".join(SUBSCRIPTION_NEEDS))
    for assignor in getattr(coordinator, "_assignors", ()) or ():
        if _ours(assignor):
            assignor.bind(coordinator)
    return found


def instrument(consumer: Any) -> GroupMetrics:
    """``kafka_assignors.metrics.instrument`` for an aiokafka consumer, started or not."""
    found = consumer_metrics(consumer)
    if getattr(consumer, "_coordinator", None) is not None:  # started
        instrument_started(consumer)
        return found
    ours = [a for a in getattr(consumer, "_partition_assignment_strategy", ()) if _ours(a)]
    for assignor in ours:  # the coordinator, made in start(), is instrumented at its first join
        assignor.watch(consumer)
    if not ours and not getattr(consumer, "_kafka_assignors_start_wrapped", False):
        original_start = consumer.start  # no assignor of ours to hook: from start() on

        async def start() -> None:
            await original_start()
            instrument_started(consumer)

        consumer.start = start
        consumer._kafka_assignors_start_wrapped = True
    return found


def _ours(assignor: Any) -> bool:
    """True for an ``AIOKafkaAssignor`` (one of our strategies in aiokafka's interface)."""
    return isinstance(getattr(assignor, "_inner", None), KafkaPythonAssignor) and hasattr(
        assignor, "bind")


def install(coordinator: Any) -> GroupMetrics | None:
    """Wrap one aiokafka ``GroupCoordinator`` instance; idempotent.  None if it cannot be."""
    global _warned
    if coordinator is None:
        return None
    done = metrics_of(coordinator)
    if done is not None:
        return done
    missing = [n for n in NEEDS if not hasattr(coordinator, n)]
    if not missing:
        missing = ["SubscriptionState." + n for n in SUBSCRIPTION_NEEDS
                   if not hasattr(coordinator._subscription, n)]
    if missing:
        if not _warned:
            _warned = True
            log.warning("kafka-assignors metrics: this aiokafka's coordinator has no %s; no "
                        "rebalance metrics for aiokafka consumers", ", ".join(missing))
        return None
    client_id = getattr(getattr(coordinator, "_client", None), "_client_id", None)
    metrics = metrics_for_subscription(coordinator._subscription, client_id)
    _Recorder(coordinator, metrics).wrap()
    # on the coordinator too: ``metrics_of(consumer)`` looks there (``consumer._coordinator``)
    attach(coordinator, metrics)
    return metrics


class _Recorder:
    """The wrappers of one coordinator and the state they share."""

    def __init__(self, coordinator: Any, metrics: GroupMetrics) -> None:
        self.c = coordinator
        self.metrics = metrics
        #: partitions held when the last prepare began, and when that was (the metrics clock)
        self.paused: frozenset[Any] = frozenset()
        self.paused_since: float | None = None

    def wrap(self) -> None:
        c = self.c
        send: Callable[[Any], Coroutine[Any, Any, Any]] = c._send_req
        assign: Callable[[Any], Coroutine[Any, Any, Any]] = c._perform_assignment
        prepare: Callable[[Any], Coroutine[Any, Any, None]] = c._on_join_prepare
        complete: Callable[..., Coroutine[Any, Any, None]] = c._on_join_complete
        metrics = self.metrics

        async def send_req(request: Any) -> Any:
            api_key = getattr(request, "API_KEY", None)
            if api_key not in (JOIN_GROUP, SYNC_GROUP):
                return await send(request)
            if api_key == JOIN_GROUP:
                metrics.rebalance_started()
            try:
                response = await send(request)
            except asyncio.CancelledError:
                raise  # the consumer is stopping: neither success nor failure
            except BaseException:
                metrics.rebalance_failed()
                raise
            if getattr(response, "error_code", 0) != 0:
                metrics.rebalance_failed()
            elif api_key == SYNC_GROUP:
                metrics.rebalance_succeeded()
            return response

        async def perform_assignment(response: Any) -> Any:
            try:
                result = await assign(response)
            except asyncio.CancelledError:
                raise
            except BaseException:
                metrics.rebalance_failed()  # aiokafka gives up this round: Java's join fails
                raise
            report = _leader_report(c, getattr(response, "group_protocol", None))
            if report is not None:
                metrics.record_leader(report)
            return result

        async def on_join_prepare(previous_assignment: Any) -> None:
            # fetching of everything held stops here until the next assignment
            if self.paused_since is None:
                self.paused = frozenset(previous_assignment.tps if previous_assignment
                                        is not None else ())
                self.paused_since = self.metrics.clock()
            self._time_listener()
            await prepare(previous_assignment)

        async def on_join_complete(*args: Any, **kwargs: Any) -> None:
            self._time_listener()
            await complete(*args, **kwargs)
            since, self.paused_since = self.paused_since, None
            kept = self.paused & set(self.c._subscription.assigned_partitions())
            if since is not None and kept:
                metrics.record_kept_pause(self.metrics.clock() - since)

        c._send_req = send_req
        c._perform_assignment = perform_assignment
        c._on_join_prepare = on_join_prepare
        c._on_join_complete = on_join_complete

    def _time_listener(self) -> None:
        """Put the user's listener behind one that times its calls (it stays in place)."""
        subscription = self.c._subscription
        listener = subscription._listener
        if listener is not None and not isinstance(listener, _TimedListener):
            subscription._listener = _TimedListener(listener, self.metrics)


def _leader_report(coordinator: Any, protocol: Any) -> Any:
    """What our assignor just computed as this consumer's leader (None for other assignors)."""
    lookup = getattr(coordinator, "_lookup_assignor", None)
    assignor = lookup(protocol) if callable(lookup) and protocol is not None else None
    inner = getattr(assignor, "_inner", None)
    if not isinstance(inner, KafkaPythonAssignor):
        return None
    return inner.report_for(coordinator)


class _TimedListener(ConsumerRebalanceListener):  # type: ignore[misc]
    """The user's listener, each call timed as Java times ``onPartitionsRevoked``/``Assigned``."""

    def __init__(self, inner: Any, metrics: GroupMetrics) -> None:
        self.inner = inner
        self._metrics = metrics

    async def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
        with self._metrics.listener("revoked"):
            result = self.inner.on_partitions_revoked(revoked)
            if asyncio.iscoroutine(result):
                await result

    async def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
        with self._metrics.listener("assigned"):
            result = self.inner.on_partitions_assigned(assigned)
            if asyncio.iscoroutine(result):
                await result
