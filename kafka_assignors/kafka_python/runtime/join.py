"""Joins that are never dropped, heartbeats through the rebalance: kafka-python's join, wrapped.

kafka-python 3.0.x drives JoinGroup/SyncGroup in ``join_group_async`` as one cached task
per round trip. These things go wrong there, each fixed here by wrapping one of its own
methods on the coordinator instance (its join logic itself still runs, so upstream fixes
reach our users):

* ``need_rejoin()`` turns False as soon as the JoinGroup request is built (after a
  subscription change) or the leader has assigned (after a metadata change): a poll that
  gave up waiting is never followed by one that takes the result up. Wrapped: a join in
  progress counts as needing a rejoin.
* a round trip that completed between two polls (or in the loop iteration in which the
  poll's wait timed out) is thrown away and a new JoinGroup sent (for a leader, a whole new
  rebalance), with its error, if it failed, never handled. Wrapped: ``join_group_async``
  hands the finished task back to kafka-python's own loop through
  ``_do_join_and_sync_async``, so kafka-python takes up the result, or handles the error,
  as if the round trip had just completed.
* heartbeats stop when the join starts and come back only when a later poll takes up the
  result; a member that processes records meanwhile (keep-reading makes that the normal
  case) is expelled after ``session_timeout_ms``. Java enables its heartbeat thread again
  as soon as the JoinGroup response arrives (COMPLETING_REBALANCE) and heartbeats through
  SyncGroup and after it. Wrapped: ``_process_join_group_response`` enables heartbeats
  and ``stable()`` (which the heartbeat loop asks) counts that state as joined.
* a result taken up after a heartbeat learned that the member was expelled would be
  applied anyway. Wrapped: ``_on_join_complete_async`` drops it, gives the partitions up
  as lost before the poll that took it up can fetch them (Java runs ``onPartitionsLost``
  before any fetch) and rejoins, as Java's ``joinGroupIfNeeded`` does when the generation
  was reset meanwhile.
* kafka-python 3.0.0 to 3.0.2 mark the coordinator dead on every error a heartbeat is
  answered with, REBALANCE_IN_PROGRESS included (fixed in 3.0.4, kafka-python #3082): a
  ``commit_async`` made then waits for a second coordinator lookup, the next poll starts the
  join meanwhile, and the commit is refused ("not part of an active group"), so the
  partition's next owner re-reads what it covered. Wrapped: ``_handle_heartbeat_response``
  returns normally for REBALANCE_IN_PROGRESS once kafka-python has acted on it (requested the
  rejoin), so the heartbeat counts as successful, as 3.0.4 and later count it; the same
  outcome on every release (an expelled member's ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID still
  marks the coordinator dead on 3.0.0 to 3.0.2: that member looks it up again as it rejoins).

The same wrappers keep the :class:`~.membership.MembershipClock` (what the broker accepted
from this member, and round trips pending) that :mod:`.cooperative` asks before reading
through a rebalance.

Threads: these wrappers run on kafka-python's IO thread, except ``need_rejoin`` and
``request_rejoin``, which the application's thread calls too; the state they share is read
and written under kafka-python's own coordinator lock (``BaseCoordinator._lock``, which
kafka-python holds for its own state changes).

Completion stays in ``poll()``, so rebalance listeners still run only while the application
is inside a consumer call, as kafka-python and Java promise.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from ..assignor import KafkaPythonAssignor
from .membership import MembershipClock

log = logging.getLogger("kafka_assignors")

#: The coordinator attributes this module reads or wraps (checked before installing).
NEEDS = (
    "need_rejoin", "rejoining", "_join_task", "_generation", "state", "config", "group_id",
    "_lock", "_subscription", "_assignors", "_rebalance_protocol", "join_group_async",
    "_do_join_and_sync_async", "_process_join_group_response", "_on_join_prepare_async",
    "_on_join_complete_async", "_enable_heartbeat", "stable", "request_rejoin",
    "_handle_heartbeat_response",
)
#: Attributes of kafka-python's task, generation and subscription objects read here.
TASK_NEEDS = ("is_done", "__await__")
GENERATION_NEEDS = ("is_lost",)
SUBSCRIPTION_NEEDS = ("assigned_partitions", "assign_from_subscribed")

#: kafka-python's public names used here ("module:attribute"; checked like the others), and
#: the consumer configuration keys read (kafka-python's documented options).
PUBLIC_NEEDS = (
    "kafka.errors:RebalanceInProgressError", "kafka.coordinator.base:MemberState",
    "kafka.coordinator.assignors.abstract:RebalanceProtocol", "kafka.future:Future",
)
CONFIG_KEYS = ("session_timeout_ms",)

_STATE = "_kafka_assignors_join"


def missing(coordinator: Any) -> tuple[str, ...]:
    """The names this module needs that ``coordinator`` (and its objects) lack."""
    lacking = _missing(coordinator, NEEDS)
    if lacking:
        return lacking
    from kafka.future import Future

    return (_missing(coordinator._generation, GENERATION_NEEDS, "Generation.")
            + _missing(Future(), TASK_NEEDS, "Future.")
            + _missing(coordinator._subscription, SUBSCRIPTION_NEEDS, "SubscriptionState.")
            + public_missing(PUBLIC_NEEDS))


def _missing(obj: Any, names: tuple[str, ...], prefix: str = "") -> tuple[str, ...]:
    return tuple(prefix + name for name in names if not hasattr(obj, name))


def public_missing(names: tuple[str, ...]) -> tuple[str, ...]:
    """The ``module:attribute.path`` names of ``names`` this kafka-python lacks."""
    import importlib

    lacking = []
    for name in names:
        module, _, path = name.partition(":")
        try:
            obj: Any = importlib.import_module(module)
            for part in path.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            lacking.append(name)
    return tuple(lacking)


def is_cooperative(coordinator: Any) -> bool:
    """True if the consumer runs the cooperative protocol (kafka-python's choice)."""
    from kafka.coordinator.assignors.abstract import RebalanceProtocol

    return bool(coordinator._rebalance_protocol == RebalanceProtocol.COOPERATIVE)


def generation_was_reset(generation: int, member_id: str) -> bool:
    """True for a result kafka-python takes up with the no-generation sentinel's id or member:
    it passes its current generation, which a heartbeat or commit reset after the JoinGroup."""
    return generation < 0 or not member_id


def forget_claims(coordinator: Any) -> None:
    """Our assignors stop announcing partitions this consumer no longer holds."""
    for assignor in coordinator._assignors.values():
        if isinstance(assignor, KafkaPythonAssignor):
            assignor.forget_owned(coordinator)


class JoinState:
    """Per coordinator: a finished round trip no poll has taken up, where the join is, and
    what the broker accepted. Read and written under kafka-python's coordinator lock."""

    def __init__(self, coordinator: Any) -> None:
        self._coordinator = coordinator
        self.held: Any = None  # the finished task, replayed through kafka-python's loop
        self.completing = False  # JoinGroup answered, SyncGroup or its take-up pending
        self.rejoin_requested = False  # a rejoin was asked for while completing
        self.join_answered_at = 0.0  # when the last JoinGroup answer was taken in
        self.membership = MembershipClock(coordinator.config["session_timeout_ms"],
                                          lock=coordinator._lock)

    @property
    def cooperative(self) -> bool:
        return is_cooperative(self._coordinator)


def state_of(coordinator: Any) -> JoinState:
    """The join fix's state on ``coordinator`` (installed by :func:`install_join_fix`)."""
    state: JoinState = getattr(coordinator, _STATE)
    return state


def install_join_fix(coordinator: Any) -> None:
    """Wrap kafka-python's join methods on this coordinator instance."""
    from kafka import errors as Errors
    from kafka.coordinator.base import MemberState

    lock = coordinator._lock
    state = JoinState(coordinator)
    setattr(coordinator, _STATE, state)
    membership = state.membership
    subscription = coordinator._subscription
    original_need_rejoin: Callable[[], bool] = coordinator.need_rejoin
    original_join: Callable[..., Coroutine[Any, Any, bool]] = coordinator.join_group_async
    original_round_trip: Callable[[], Coroutine[Any, Any, Any]] = (
        coordinator._do_join_and_sync_async)
    original_process_join: Callable[..., Any] = coordinator._process_join_group_response
    original_stable: Callable[[], bool] = coordinator.stable
    original_request_rejoin: Callable[[], None] = coordinator.request_rejoin
    original_prepare: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_prepare_async)
    original_complete: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_complete_async)
    original_heartbeat_response: Callable[..., Any] = coordinator._handle_heartbeat_response

    def need_rejoin() -> bool:
        # a join already under way must be driven to its end by the next polls
        with lock:
            return bool(original_need_rejoin() or coordinator.rejoining
                        or coordinator._join_task is not None or state.held is not None)

    async def join_group_async(timeout_ms: float | None = None) -> bool:
        with lock:
            task = coordinator._join_task
            if task is not None and task.is_done:
                # kafka-python would drop it and send a new JoinGroup: hand it back instead
                state.held, coordinator._join_task = task, None
        return await original_join(timeout_ms)

    async def do_join_and_sync() -> Any:
        with lock:
            held, state.held = state.held, None
            if held is None:
                state.completing = state.rejoin_requested = False
        if held is not None:
            try:
                return await held  # its value, or its error for kafka-python's loop to handle
            except BaseException:
                _after_failed_round_trip()
                raise
        # the broker holds a member whose JoinGroup or SyncGroup is pending
        membership.round_trip_started()
        try:
            assignment = await original_round_trip()
        except BaseException:
            _after_failed_round_trip()
            raise
        finally:
            membership.round_trip_ended()
        # the SyncGroup, accepted, was sent after the JoinGroup's answer was taken in
        membership.confirm(state.join_answered_at)
        return assignment

    def _after_failed_round_trip() -> None:
        with lock:
            state.completing = False
            if (state.cooperative and coordinator._generation.is_lost()
                    and subscription.assigned_partitions()):
                # expelled while rejoining: the partitions are lost, not kept; the prepare
                # step runs again (on_partitions_lost) before the member joins as a new member
                coordinator.rejoining = False

    def process_join_group_response(response: Any, send_time: float) -> Any:
        joined = original_process_join(response, send_time)  # raises on an error
        with lock:
            membership.confirm(send_time)
            state.join_answered_at = time.monotonic()
            # COMPLETING_REBALANCE: heartbeat from here on, as Java's JoinGroup handler does
            state.completing = True
        coordinator._enable_heartbeat()
        return joined

    def stable() -> bool:
        # the heartbeat loop's question: heartbeats go on while the join completes
        with lock:
            return bool(original_stable() or (
                state.completing and coordinator.state is MemberState.REBALANCING))

    def request_rejoin() -> None:
        with lock:
            if state.completing:
                state.rejoin_requested = True  # kafka-python's take-up would clear it
            original_request_rejoin()

    async def on_join_prepare(generation: int, member_id: str,
                              timeout_ms: float | None = None) -> None:
        try:
            await original_prepare(generation, member_id, timeout_ms=timeout_ms)
        finally:
            if coordinator._generation.is_lost():
                # expelled, or left: the member joins as a new member and owns nothing
                forget_claims(coordinator)

    async def on_join_complete(generation: int, member_id: str, protocol: str,
                               assignment: bytes) -> None:
        with lock:
            completed, state.completing = state.completing, False
            rejoin, state.rejoin_requested = state.rejoin_requested, False
        if generation_was_reset(generation, member_id):
            await _drop_stale_result()
            return
        await original_complete(generation, member_id, protocol, assignment)
        if rejoin and completed:
            original_request_rejoin()

    async def _drop_stale_result() -> None:
        # a heartbeat learned meanwhile that the member was expelled: the assignment is
        # someone else's by now (Java: "rebalance failed since the generation/state was
        # modified by heartbeat thread")
        log.info("group %s: dropping a join result taken up after the member lost its "
                 "generation; giving its partitions up as lost and rejoining",
                 coordinator.group_id)
        with lock:
            coordinator.state = MemberState.UNJOINED
            original_request_rejoin()
            coordinator.rejoining = False
        # kafka-python reports this join as done and the same poll() fetches next: the
        # partitions go first (Java runs onPartitionsLost before any fetch)
        if not subscription.assigned_partitions():
            return
        if state.cooperative:
            # kafka-python's own lost path: on_partitions_lost, then nothing assigned
            await coordinator._on_join_prepare_async(-1, "", timeout_ms=0)
            with lock:
                coordinator.rejoining = True  # prepared: the next round trip just joins
        else:
            # eager: on_partitions_revoked already ran for them in this rebalance's prepare
            subscription.assign_from_subscribed([])

    def handle_heartbeat_response(response: Any, send_time: float) -> Any:
        try:
            answer = original_heartbeat_response(response, send_time)
        except Errors.RebalanceInProgressError:
            # kafka-python has acted on it (a rejoin is requested) and the broker counted the
            # heartbeat: a successful one, as 3.0.4 and later treat it (3.0.0 to 3.0.2 would
            # also mark the coordinator dead, kafka-python #3082)
            membership.confirm(send_time)
            return None
        membership.confirm(send_time)
        return answer

    coordinator.need_rejoin = need_rejoin
    coordinator.join_group_async = join_group_async
    coordinator._do_join_and_sync_async = do_join_and_sync
    coordinator._process_join_group_response = process_join_group_response
    coordinator.stable = stable
    coordinator.request_rejoin = request_rejoin
    coordinator._on_join_prepare_async = on_join_prepare
    coordinator._on_join_complete_async = on_join_complete
    coordinator._handle_heartbeat_response = handle_heartbeat_response
