"""The rebalance and assignment-quality metrics of one kafka-python 3 consumer.

Registered in the consumer's own ``kafka.metrics`` registry (``consumer.metrics()`` and
``metric_reporters`` see them; none with ``metrics_enabled=False``), under kafka-python's
``<metric_group_prefix>-coordinator-metrics`` group (Java's ``consumer-coordinator-metrics``
by default) and ``kafka-assignors-assignment-metrics``. Events are taken by two mixins
whose overrides call kafka-python's own coordinator methods (nothing of theirs is copied):
:class:`RebalanceEventsMixin`, innermost, and :class:`KeptPauseMixin`, outermost:

* ``_do_join_and_sync_async`` (one JoinGroup/SyncGroup round trip, Java's join future),
  under the join fix, so a result the fix replays is not counted twice: its start
  starts a rebalance, its result succeeds it, its exception fails it (a cancelled one, a
  closing consumer, counts neither way);
* ``_invoke_rebalance_listener_async``: the application's listener calls, timed;
* ``_perform_assignment``: after the leader's assignor ran, its report;
* ``_on_join_prepare_async`` / ``_on_join_complete_async`` / ``poll`` (above the rest of
  the runtime, so they see what the consumer sees): the kept-partition pause. A rebalance of this
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
from collections.abc import Callable
from typing import Any

from ...metrics import GroupMetrics
from ..assignor import KafkaPythonAssignor
from . import compose
from .compose import RuntimeMixin

log = logging.getLogger("kafka_assignors")

#: Coordinator attributes the metrics' overrides call or read (checked before they go on).
NEEDS = (
    "config", "group_id", "_subscription", "_generation", "poll", "_do_join_and_sync_async",
    "_invoke_rebalance_listener_async", "_perform_assignment", "_lookup_assignor",
    "_on_join_prepare_async", "_on_join_complete_async",
)
_MARK = "_kafka_assignors_metrics"
_PAUSE = "_kafka_assignors_pause"
_LISTENER_KINDS = {"on_partitions_revoked": "revoked", "on_partitions_assigned": "assigned",
                   "on_partitions_lost": "lost"}
_warned: set[str] = set()


def metrics_for(coordinator: Any) -> GroupMetrics | None:
    """The GroupMetrics installed on ``coordinator`` (None if none)."""
    found = getattr(coordinator, _MARK, None)
    return found if isinstance(found, GroupMetrics) else None


def _warn_once(key: str, message: str, *args: Any) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message, *args)


def install(coordinator: Any, clock: Callable[[], float] = time.monotonic,
            ) -> GroupMetrics | None:
    """Register the metrics in the consumer's registry and give ``coordinator`` the metrics'
    mixins; idempotent. None (one log line, nothing changed) with ``metrics_enabled=False``,
    on a coordinator lacking a name the mixins use, or if registering fails: the metrics
    never fail the consumer."""
    done = metrics_for(coordinator)
    if done is not None or getattr(coordinator, _MARK, None) is False:
        return done
    missing = [n for n in NEEDS if not hasattr(coordinator, n)]
    if not missing:
        missing = ([f"Generation.{n}" for n in ("is_lost",)
                    if not hasattr(coordinator._generation, n)]
                   + [f"SubscriptionState.{n}" for n in ("assigned_partitions",)
                      if not hasattr(coordinator._subscription, n)])
    if missing:
        _mark(coordinator, False)
        _warn_once("missing", "kafka-assignors metrics: this kafka-python's coordinator has no "
                   "%s; no rebalance metrics", ", ".join(missing))
        return None
    registry = coordinator.config.get("metrics")
    if registry is None:
        _mark(coordinator, False)
        log.info("kafka-assignors metrics on consumer group %s: none (metrics_enabled=False)",
                 coordinator.group_id)
        return None
    # kafka-python's own coordinator metrics' group: Java's name with the default prefix
    prefix = coordinator.config.get("metric_group_prefix", "consumer")
    try:
        metrics = GroupMetrics(registry, clock=clock,
                               coordinator_group=f"{prefix}-coordinator-metrics")
    except Exception as exc:  # e.g. kafka-python registers a metric of the same name itself
        _mark(coordinator, False)
        _warn_once("register", "kafka-assignors metrics: registering the rebalance metrics in "
                   "the consumer's registry failed (%r); no rebalance metrics", exc)
        return None
    if not _mark(coordinator, metrics):
        return None
    try:
        compose.enable(coordinator, {"metrics"})
    except compose.IncompatibleCoordinatorError as exc:
        _mark(coordinator, False)
        _warn_once("layout", "kafka-assignors metrics: %s; no rebalance metrics", exc)
        return None
    return metrics


def _mark(coordinator: Any, value: object) -> bool:
    try:
        setattr(coordinator, _MARK, value)
    except AttributeError:
        return False
    return True


class RebalanceEventsMixin(RuntimeMixin):
    """Java's rebalance events, taken from kafka-python's own round trip, listener calls
    and the leader's assignment (innermost: a round trip the join fix replays counts once)."""

    FEATURE = "metrics"
    TITLE = "rebalance metrics"

    @property
    def _group_metrics(self) -> GroupMetrics:
        found = metrics_for(self)
        if found is None:  # install() sets it before the class changes
            raise RuntimeError("kafka-assignors metrics: no GroupMetrics on this coordinator")
        return found

    async def _do_join_and_sync_async(self, *args: Any, **kwargs: Any) -> Any:
        """A round trip starts a rebalance (PREPARING_REBALANCE), its result succeeds it,
        its error fails it; a cancelled one counts neither way."""
        metrics = self._group_metrics
        metrics.rebalance_started()
        try:
            result = await super()._do_join_and_sync_async(*args, **kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException:
            metrics.rebalance_failed()
            raise
        metrics.rebalance_succeeded()  # SyncGroup answered without error
        return result

    async def _invoke_rebalance_listener_async(self, method_name: str, *args: Any,
                                               **kwargs: Any) -> None:
        """Times the application's listener calls by kind (recorded if they return)."""
        kind = _LISTENER_KINDS.get(method_name)
        if kind is None:
            await super()._invoke_rebalance_listener_async(method_name, *args, **kwargs)
            return
        with self._group_metrics.listener(kind):  # type: ignore[arg-type]
            await super()._invoke_rebalance_listener_async(method_name, *args, **kwargs)

    def _perform_assignment(self, leader_id: Any, protocol: Any, *args: Any,
                            **kwargs: Any) -> Any:
        """After the leader's assignor ran: its report (moves, spreads, time)."""
        result = super()._perform_assignment(leader_id, protocol, *args, **kwargs)
        assignor = self._lookup_assignor(protocol)
        if isinstance(assignor, KafkaPythonAssignor):
            report: Any = assignor.report_for(self)
            if report is not None:
                self._group_metrics.record_leader(report)
        return result


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


class KeptPauseMixin(RuntimeMixin):
    """How long the partitions a member keeps pause in a rebalance (outermost: what the
    consumer sees, keep-reading included)."""

    FEATURE = "metrics"
    TITLE = "rebalance metrics"

    @classmethod
    def kafka_assignors_setup(cls, coordinator: Any) -> None:
        setattr(coordinator, _PAUSE, _Pause())

    @property
    def _pause(self) -> _Pause:
        pause: _Pause = getattr(self, _PAUSE)
        return pause

    async def _on_join_prepare_async(self, *args: Any, **kwargs: Any) -> None:
        """The rebalance's first prepare opens its window (lost partitions: nothing kept)."""
        pause = self._pause
        held = set(self._subscription.assigned_partitions())
        lost = self._generation.is_lost() and bool(held)
        with pause.lock:
            if pause.held is None:
                pause.held, pause.lost, pause.touched = held, False, True
            pause.lost = pause.lost or lost
        await super()._on_join_prepare_async(*args, **kwargs)

    async def _on_join_complete_async(self, *args: Any, **kwargs: Any) -> None:
        """The take-up closes the window (a listener that raised: applied all the same)."""
        try:
            await super()._on_join_complete_async(*args, **kwargs)
        finally:
            self._close_pause_window()

    def _close_pause_window(self) -> None:
        pause = self._pause
        with pause.lock:
            held, pause.held = pause.held, None
            if held is None or pause.lost or self._generation.is_lost():
                return  # not a window of ours, or the result was dropped (rejoining)
            pause.kept = bool(held & set(self._subscription.assigned_partitions()))
            if not pause.kept:
                pause.longest = 0.0

    def poll(self, *args: Any, **kwargs: Any) -> bool:
        """A stretch of polls not ready to fetch, overlapping a window, is a pause."""
        pause = self._pause
        clock = self._group_metrics_clock()
        with pause.lock:
            if pause.blocked_since is None:
                pause.blocked_since = clock()
                pause.touched = pause.held is not None
        ready = bool(super().poll(*args, **kwargs))
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
            found = metrics_for(self)
            if found is not None:
                found.record_kept_pause(record)
        return ready

    def _group_metrics_clock(self) -> Callable[[], float]:
        found = metrics_for(self)
        return found.clock if found is not None else time.monotonic
