"""Joins that are never dropped, heartbeats through the rebalance: kafka-python's join, wrapped.

kafka-python 3.0.x drives JoinGroup/SyncGroup in ``join_group_async`` as one cached task
per round trip. Four things go wrong there, each fixed here by wrapping one of its own
methods on the coordinator instance (its join logic itself still runs, so upstream fixes
reach our users):

* ``need_rejoin()`` turns False as soon as the JoinGroup request is built (after a
  subscription change) or the leader has assigned (after a metadata change): a poll that
  gave up waiting is never followed by one that takes the result up. Wrapped: a join in
  progress counts as needing a rejoin.
* a round trip that completed between two polls (or in the loop iteration in which the
  poll's wait timed out) is thrown away and a new JoinGroup sent (for a leader, a whole new
  rebalance), with its error, if it failed, never handled. Wrapped: ``join_group_async``
  hands the finished task's outcome back to kafka-python's own loop through
  ``_do_join_and_sync_async``, so kafka-python takes up the result, or handles the error,
  as if the round trip had just completed.
* heartbeats stop when the join starts and come back only when a later poll takes up the
  result; a member that processes records meanwhile (keep-reading makes that the normal
  case) is expelled after ``session_timeout_ms``. Java enables its heartbeat thread again
  as soon as the JoinGroup response arrives (COMPLETING_REBALANCE) and heartbeats through
  SyncGroup and after it. Wrapped: ``_process_join_group_response`` enables heartbeats
  and ``stable()`` (which the heartbeat loop asks) counts that state as joined.
* a result taken up after a heartbeat learned that the member was expelled would be
  applied anyway. Wrapped: ``_on_join_complete_async`` drops it and rejoins, as Java's
  ``joinGroupIfNeeded`` does when the generation was reset meanwhile.
* kafka-python 3.0.0 to 3.0.2 mark the coordinator dead on every error a heartbeat is
  answered with, REBALANCE_IN_PROGRESS included (fixed in 3.0.4, kafka-python #3082): a
  ``commit_async`` made then waits for a second coordinator lookup, the next poll starts the
  join meanwhile, and the commit is refused ("not part of an active group"), so the
  partition's next owner re-reads what it covered. Wrapped: ``_failed_request`` leaves the
  coordinator alone for an error that ``_handle_heartbeat_response`` raised from the broker's
  answer (that method has already acted on it), as 3.0.4 does; a no-op on 3.0.4 and later.

Completion stays in ``poll()``, so rebalance listeners still run only while the application
is inside a consumer call, as kafka-python and Java promise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("kafka_assignors")

#: The coordinator attributes this module reads or wraps (checked before installing).
NEEDS = (
    "need_rejoin", "rejoining", "rejoin_needed", "_join_task", "_generation", "state",
    "config", "join_group_async", "_do_join_and_sync_async", "_process_join_group_response",
    "_on_join_prepare_async", "_on_join_complete_async", "_enable_heartbeat", "stable",
    "request_rejoin", "reset_generation", "_rebalance_protocol", "_subscription",
    "maybe_leave_group_async", "_assignors", "group_id", "_handle_heartbeat_response",
    "_failed_request",
)
#: Attributes of kafka-python's task, generation and subscription objects read here.
TASK_NEEDS = ("is_done", "succeeded", "value", "exception")
GENERATION_NEEDS = ("is_lost", "generation_id", "member_id")

#: A prepare step (the pre-rebalance auto-commit, revocation listeners) gets at least this
#: long even from a poll(timeout_ms=0): kafka-python would fail the commit after 0 ms.
PREPARE_FLOOR_MS = 5_000


def lost_mid_join(coordinator: Any) -> bool:
    """True if a cooperative member still holds partitions although its generation is gone.

    A cooperative member keeps its partitions (and, with this runtime, reads them) while
    it rejoins; once the broker has reset its generation they may already be someone
    else's. Eager members gave them all up in the prepare step already.
    """
    from kafka.coordinator.assignors.abstract import RebalanceProtocol

    return bool(coordinator._rebalance_protocol == RebalanceProtocol.COOPERATIVE
                and coordinator._generation.is_lost()
                and coordinator._subscription.assigned_partitions())


def generation_was_reset(generation: int, member_id: str) -> bool:
    """True for a result kafka-python takes up with the no-generation sentinel's id or member:
    it passes its current generation, which a heartbeat or commit reset after the JoinGroup."""
    return generation < 0 or not member_id


def forget_claims(coordinator: Any) -> None:
    """Our assignors stop announcing partitions this consumer no longer holds."""
    from ..kafka_python import KafkaPythonAssignor

    for assignor in coordinator._assignors.values():
        if isinstance(assignor, KafkaPythonAssignor):
            assignor.forget_owned(coordinator)


class _JoinState:
    """Per coordinator: a finished round trip no poll has taken up, and where the join is."""

    def __init__(self) -> None:
        self.held: Any = None  # the finished task, replayed through kafka-python's loop
        self.completing = False  # JoinGroup answered, SyncGroup or its take-up pending
        self.rejoin_requested = False  # a rejoin was asked for while completing


def install_join_fix(coordinator: Any) -> None:
    """Wrap kafka-python's join methods on this coordinator instance."""
    from kafka.coordinator.base import MemberState

    state = _JoinState()
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
    original_leave: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator.maybe_leave_group_async)
    original_heartbeat_response: Callable[..., Any] = coordinator._handle_heartbeat_response
    original_failed_request: Callable[..., None] = coordinator._failed_request
    answered: list[BaseException | None] = [None]  # the broker's answer to the last heartbeat

    def need_rejoin() -> bool:
        # a join already under way must be driven to its end by the next polls
        return bool(original_need_rejoin() or coordinator.rejoining
                    or coordinator._join_task is not None or state.held is not None)

    async def join_group_async(timeout_ms: float | None = None) -> bool:
        task = coordinator._join_task
        if task is not None and task.is_done:
            # kafka-python would drop it and send a new JoinGroup: hand it back instead
            state.held, coordinator._join_task = task, None
        return await original_join(timeout_ms)

    async def do_join_and_sync() -> Any:
        held, state.held = state.held, None
        if held is None:
            state.completing = state.rejoin_requested = False
            try:
                return await original_round_trip()
            except BaseException:
                _after_failed_round_trip()
                raise
        if held.succeeded():
            return held.value
        _after_failed_round_trip()
        raise held.exception

    def _after_failed_round_trip() -> None:
        state.completing = False
        if lost_mid_join(coordinator):
            # expelled while rejoining: the partitions are lost, not kept; the prepare step
            # runs again (on_partitions_lost) before the member joins as a new member
            coordinator.rejoining = False

    def process_join_group_response(response: Any, send_time: float) -> Any:
        joined = original_process_join(response, send_time)  # raises on an error
        # COMPLETING_REBALANCE: heartbeat from here on, as Java's JoinGroup handler does
        state.completing = True
        coordinator._enable_heartbeat()
        return joined

    def stable() -> bool:
        # the heartbeat loop's question: heartbeats go on while the join completes
        return bool(original_stable() or (
            state.completing and coordinator.state is MemberState.REBALANCING))

    def request_rejoin() -> None:
        if state.completing:
            state.rejoin_requested = True  # kafka-python's take-up would clear it
        original_request_rejoin()

    async def on_join_prepare(generation: int, member_id: str,
                              timeout_ms: float | None = None) -> None:
        lost = coordinator._generation.is_lost() and bool(
            coordinator._subscription.assigned_partitions())
        if timeout_ms is not None:
            timeout_ms = max(timeout_ms, PREPARE_FLOOR_MS)
        try:
            await original_prepare(generation, member_id, timeout_ms=timeout_ms)
        finally:
            if lost:
                forget_claims(coordinator)

    async def on_join_complete(generation: int, member_id: str, protocol: str,
                               assignment: bytes) -> None:
        completed, state.completing = state.completing, False
        rejoin, state.rejoin_requested = state.rejoin_requested, False
        if generation_was_reset(generation, member_id):
            # a heartbeat learned meanwhile that the member was expelled: the assignment is
            # someone else's by now (Java: "rebalance failed since the generation/state was
            # modified by heartbeat thread")
            log.info("group %s: dropping a join result taken up after the member lost its "
                     "generation; rejoining", coordinator.group_id)
            coordinator.reset_generation(member_id=coordinator._generation.member_id)
            coordinator.rejoining = False  # prepare again: the owned partitions are lost
            return
        await original_complete(generation, member_id, protocol, assignment)
        if rejoin and completed:
            original_request_rejoin()

    async def maybe_leave_group_async(*args: Any, **kwargs: Any) -> None:
        try:
            await original_leave(*args, **kwargs)
        finally:
            forget_claims(coordinator)  # a member that left is a new member when it rejoins

    def handle_heartbeat_response(response: Any, send_time: float) -> Any:
        try:
            return original_heartbeat_response(response, send_time)
        except BaseException as exc:  # an error code in the response, already acted on
            answered[0] = exc
            raise

    def failed_request(node_id: Any, request: Any, error: BaseException) -> None:
        if error is answered[0]:
            # kafka-python 3.0.0-3.0.2 route the heartbeat's answer here too: the coordinator
            # answered, so it is not dead (3.0.4's behaviour, kafka-python #3082)
            answered[0] = None
            log.debug("group %s: heartbeat answered with %s; the coordinator stays known",
                      coordinator.group_id, type(error).__name__)
            return
        original_failed_request(node_id, request, error)

    coordinator.need_rejoin = need_rejoin
    coordinator.join_group_async = join_group_async
    coordinator._do_join_and_sync_async = do_join_and_sync
    coordinator._process_join_group_response = process_join_group_response
    coordinator.stable = stable
    coordinator.request_rejoin = request_rejoin
    coordinator._on_join_prepare_async = on_join_prepare
    coordinator._on_join_complete_async = on_join_complete
    coordinator.maybe_leave_group_async = maybe_leave_group_async
    coordinator._handle_heartbeat_response = handle_heartbeat_response
    coordinator._failed_request = failed_request
