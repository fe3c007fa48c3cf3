"""The rebalance and assignment-quality metrics of one kafka-python 3 consumer.

Registered in the consumer's own ``kafka.metrics`` registry (``consumer.metrics()`` and
``metric_reporters`` see them; none with ``metrics_enabled=False``), under kafka-python's
``<metric_group_prefix>-coordinator-metrics`` group (Java's ``consumer-coordinator-metrics``
by default) and ``kafka-assignors-assignment-metrics``. Events are taken by wrapping
kafka-python's own coordinator methods on the instance (nothing of theirs is copied):

* ``_do_join_and_sync_async`` (one JoinGroup/SyncGroup round trip, Java's join future),
  wrapped before the join fix so a result the fix replays is not counted twice: its start
  starts a rebalance, its result succeeds it, its exception fails it (a cancelled one, a
  closing consumer, counts neither way);
* ``_invoke_rebalance_listener_async``: the application's listener calls, timed;
* ``_perform_assignment``: after the leader's assignor ran, its report;
* ``_on_join_prepare_async`` / ``_on_join_complete_async`` / ``poll`` (wrapped after the
  runtime, so they see what the consumer sees): the kept-partition pause. A rebalance of this
  member runs from its prepare step to the take-up of its result; the partitions it held at
  the start and holds after it (none if its generation was lost) are the kept ones. Their
  pause is the longest stretch, overlapping that rebalance, from the start of a
  ``coordinator.poll`` until one returns ready to fetch (kafka-python's consumer fetches
  nothing after one that did not; time the application spends between a ready poll and the
  next is not a pause). Cooperative, with the runtime's keep-reading: only the coordinator
  steps inside a poll (the pre-rebalance commit, the take-up with its listeners) pause them.
  Eager: every partition is revoked when the rebalance starts, so the kept ones pause from
  the poll that prepared the rebalance to the one that applied the new assignment.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from ...metrics import GroupMetrics
from ..assignor import KafkaPythonAssignor

log = logging.getLogger("kafka_assignors")

#: Coordinator attributes the metrics wrap or read (checked before installing).
NEEDS = (
    "config", "group_id", "_subscription", "_generation", "poll", "_do_join_and_sync_async",
    "_invoke_rebalance_listener_async", "_perform_assignment", "_lookup_assignor",
    "_on_join_prepare_async", "_on_join_complete_async",
)
_MARK = "_kafka_assignors_metrics"
_LISTENER_KINDS = {"on_partitions_revoked": "revoked", "on_partitions_assigned": "assigned",
                   "on_partitions_lost": "lost"}
_warned: set[str] = set()


def metrics_for(coordinator: Any) -> GroupMetrics | None:
    """The GroupMetrics installed on ``coordinator`` (None if none)."""
    found = getattr(coordinator, _MARK, None)
    return found if isinstance(found, GroupMetrics) else None


def install_events(coordinator: Any, clock: Callable[[], float] = time.monotonic,
                   ) -> GroupMetrics | None:
    """Register the metrics and wrap the round trip and listener calls; idempotent.

    Call before the runtime's join fix wraps ``_do_join_and_sync_async``.
    """
    done = metrics_for(coordinator)
    if done is not None or getattr(coordinator, _MARK, None) is False:
        return done
    missing = [n for n in NEEDS if not hasattr(coordinator, n)]
    if not missing:
        missing = ([f"Generation.{n}" for n in ("is_lost",)
                    if not hasattr(coordinator._generation, n)]
                   + [f"SubscriptionState.{n}" for n in ("assigned_partitions",)
                      if not hasattr(coordinator._subscription, n)])
    registry = coordinator.config.get("metrics") if not missing else None
    if registry is None:
        _mark(coordinator, False)
        if missing and "missing" not in _warned:
            _warned.add("missing")
            log.warning("kafka-assignors metrics: this kafka-python's coordinator has no %s; "
                        "no rebalance metrics", ", ".join(missing))
        elif not missing:
            log.info("kafka-assignors metrics on consumer group %s: none (metrics_enabled="
                     "False)", coordinator.group_id)
        return None
    # kafka-python's own coordinator metrics' group: Java's name with the default prefix
    prefix = coordinator.config.get("metric_group_prefix", "consumer")
    metrics = GroupMetrics(registry, clock=clock,
                           coordinator_group=f"{prefix}-coordinator-metrics")
    if not _mark(coordinator, metrics):
        return None
    _wrap_events(coordinator, metrics)
    return metrics


def _mark(coordinator: Any, value: object) -> bool:
    try:
        setattr(coordinator, _MARK, value)
    except AttributeError:
        return False
    return True


def _wrap_events(coordinator: Any, metrics: GroupMetrics) -> None:
    original_round_trip: Callable[[], Coroutine[Any, Any, Any]] = (
        coordinator._do_join_and_sync_async)
    original_invoke: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._invoke_rebalance_listener_async)
    original_perform: Callable[..., Any] = coordinator._perform_assignment

    async def do_join_and_sync() -> Any:
        metrics.rebalance_started()  # Java's initiateJoinGroup: PREPARING_REBALANCE
        try:
            result = await original_round_trip()
        except asyncio.CancelledError:
            raise
        except BaseException:
            metrics.rebalance_failed()
            raise
        metrics.rebalance_succeeded()  # SyncGroup answered without error
        return result

    async def invoke_listener(method_name: str, arg: Any) -> None:
        kind = _LISTENER_KINDS.get(method_name)
        if kind is None:
            return await original_invoke(method_name, arg)
        with metrics.listener(kind):  # type: ignore[arg-type]
            await original_invoke(method_name, arg)
        return None

    def perform_assignment(leader_id: Any, protocol: Any, members: Any) -> Any:
        result = original_perform(leader_id, protocol, members)
        report = _leader_report(coordinator, protocol)
        if report is not None:
            metrics.record_leader(report)
        return result

    coordinator._do_join_and_sync_async = do_join_and_sync
    coordinator._invoke_rebalance_listener_async = invoke_listener
    coordinator._perform_assignment = perform_assignment


def _leader_report(coordinator: Any, protocol: Any) -> Any:
    assignor = coordinator._lookup_assignor(protocol)
    if not isinstance(assignor, KafkaPythonAssignor):
        return None
    return assignor.report_for(coordinator)


class _Pause:
    """Per coordinator: the rebalance window and the stretch of polls not ready to fetch."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: set[Any] | None = None  # partitions held when the window opened
        self.lost = False  # the window's partitions were lost, not kept
        self.blocked_since: float | None = None  # start of the current not-ready stretch
        self.touched = False  # a window was open during the current stretch
        self.longest = 0.0  # longest stretch of the open (or just closed) window
        self.kept = False  # the closed window kept partitions: record at the next ready poll


def install_pause(coordinator: Any, metrics: GroupMetrics) -> None:
    """Wrap prepare, completion and ``poll`` for the kept-partition pause (after the runtime)."""
    subscription = coordinator._subscription
    clock = metrics.clock
    pause = _Pause()
    original_prepare: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_prepare_async)
    original_complete: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_complete_async)
    original_poll: Callable[..., bool] = coordinator.poll

    async def on_join_prepare(generation: int, member_id: str,
                              timeout_ms: float | None = None) -> None:
        held = set(subscription.assigned_partitions())
        lost = coordinator._generation.is_lost() and bool(held)
        with pause.lock:
            if pause.held is None:  # the rebalance's first prepare opens its window
                pause.held, pause.lost, pause.touched = held, False, True
            pause.lost = pause.lost or lost  # on_partitions_lost: nothing is kept
        await original_prepare(generation, member_id, timeout_ms=timeout_ms)

    async def on_join_complete(generation: int, member_id: str, protocol: str,
                               assignment: bytes) -> None:
        try:
            await original_complete(generation, member_id, protocol, assignment)
        finally:  # (a listener that raised: the assignment was applied all the same)
            close_window()

    def close_window() -> None:
        with pause.lock:
            held, pause.held = pause.held, None
            if held is None or pause.lost or coordinator._generation.is_lost():
                return  # not a window of ours, or the result was dropped (rejoining)
            pause.kept = bool(held & set(subscription.assigned_partitions()))
            if not pause.kept:
                pause.longest = 0.0

    def poll(*args: Any, **kwargs: Any) -> bool:
        with pause.lock:
            if pause.blocked_since is None:
                pause.blocked_since = clock()
                pause.touched = pause.held is not None
        ready = original_poll(*args, **kwargs)
        if not ready:
            return ready
        now = clock()
        record = None
        with pause.lock:
            since, pause.blocked_since = pause.blocked_since, None
            if pause.touched and since is not None:
                pause.longest = max(pause.longest, now - since)
            pause.touched = False
            if pause.kept:
                record, pause.longest, pause.kept = pause.longest, 0.0, False
            elif pause.held is None:
                pause.longest = 0.0
        if record is not None:
            metrics.record_kept_pause(record)
        return ready

    coordinator._on_join_prepare_async = on_join_prepare
    coordinator._on_join_complete_async = on_join_complete
    coordinator.poll = poll
