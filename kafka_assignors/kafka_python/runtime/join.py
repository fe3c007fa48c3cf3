"""Joins that are never dropped, heartbeats through the rebalance: kafka-python's join, wrapped.

kafka-python 3.0.x drives JoinGroup/SyncGroup in ``join_group_async`` as one cached task
per round trip. These things go wrong there, each fixed here by an override in
:class:`JoinFixMixin` that calls kafka-python's own method (its join logic itself still
runs, so upstream fixes reach our users):

* ``need_rejoin()`` turns False as soon as the JoinGroup request is built (after a
  subscription change) or the leader has assigned (after a metadata change): a poll that
  gave up waiting is never followed by one that takes the result up. Overridden: a join in
  progress counts as needing a rejoin.
* a round trip that completed between two polls (or in the loop iteration in which the
  poll's wait timed out) is thrown away and a new JoinGroup sent (for a leader, a whole new
  rebalance), with its error, if it failed, never handled. Overridden: ``join_group_async``
  hands the finished task back to kafka-python's own loop through
  ``_do_join_and_sync_async``, so kafka-python takes up the result, or handles the error,
  as if the round trip had just completed.
* heartbeats stop when the join starts and come back only when a later poll takes up the
  result; a member that processes records meanwhile (keep-reading makes that the normal
  case) is expelled after ``session_timeout_ms``. Java enables its heartbeat thread again
  as soon as the JoinGroup response arrives (COMPLETING_REBALANCE) and heartbeats through
  SyncGroup and after it. Overridden: ``_process_join_group_response`` enables heartbeats
  and ``stable()`` (which the heartbeat loop asks) counts that state as joined.
* a result taken up after a heartbeat learned that the member was expelled would be
  applied anyway. Overridden: ``_on_join_complete_async`` drops it, gives the partitions up
  as lost before the poll that took it up can fetch them (Java runs ``onPartitionsLost``
  before any fetch) and rejoins, as Java's ``joinGroupIfNeeded`` does when the generation
  was reset meanwhile.
* kafka-python 3.0.0 to 3.0.2 mark the coordinator dead on every error a heartbeat is
  answered with, REBALANCE_IN_PROGRESS included (fixed in 3.0.4, kafka-python #3082): a
  ``commit_async`` made then waits for a second coordinator lookup, the next poll starts the
  join meanwhile, and the commit is refused ("not part of an active group"), so the
  partition's next owner re-reads what it covered. Overridden: ``_handle_heartbeat_response``
  returns normally for REBALANCE_IN_PROGRESS once kafka-python has acted on it (requested the
  rejoin), so the heartbeat counts as successful, as 3.0.4 and later count it; the same
  outcome on every release (an expelled member's ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID still
  marks the coordinator dead on 3.0.0 to 3.0.2: that member looks it up again as it rejoins).

Each of these overrides asks :mod:`.probes` whether the installed kafka-python still has the
defect; where kafka-python's own fix is found, that part steps aside (one INFO line says so).

The same overrides keep the :class:`~.membership.MembershipClock` (what the broker accepted
from this member, and round trips pending) that :mod:`.cooperative` asks before reading
through a rebalance.

Threads: these overrides run on kafka-python's IO thread, except ``need_rejoin`` and
``request_rejoin``, which the application's thread calls too; the state they share is read
and written under kafka-python's own coordinator lock (``BaseCoordinator._lock``, which
kafka-python holds for its own state changes).

Completion stays in ``poll()``, so rebalance listeners still run only while the application
is inside a consumer call, as kafka-python and Java promise.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ..assignor import KafkaPythonAssignor
from . import probes
from .compose import RuntimeMixin
from .membership import MembershipClock

log = logging.getLogger("kafka_assignors")

_STATE = "_kafka_assignors_join"


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
    """The join fix's state on ``coordinator`` (set up when the join fix was enabled)."""
    state: JoinState = getattr(coordinator, _STATE)
    return state


class JoinFixMixin(RuntimeMixin):
    """Joins that are never dropped and heartbeats from the JoinGroup response, as in Java.

    Each override names the kafka-python defect it works around (docs/upstream.md sections 1,
    2 and 5) and calls kafka-python's own method.
    """

    FEATURE = "join_fix"
    TITLE = "join fix"
    _join_task: Any  # kafka-python's (an annotation for mypy only: no class attribute)

    @classmethod
    def kafka_assignors_setup(cls, coordinator: Any) -> None:
        setattr(coordinator, _STATE, JoinState(coordinator))

    @property
    def _join_state(self) -> JoinState:
        return state_of(self)

    def need_rejoin(self, *args: Any, **kwargs: Any) -> bool:
        """A join under way counts as needing a rejoin, so the next polls drive it to its end.

        kafka-python's turns False once the JoinGroup request is built: a poll that gave up
        waiting is never followed by one that takes the result up (docs/upstream.md#1).
        """
        state = self._join_state
        with self._lock:
            needed = bool(super().need_rejoin(*args, **kwargs))
            if needed or not probes.workaround_needed("drive-join-under-way"):
                return needed or state.held is not None
            return bool(self.rejoining or self._join_task is not None or state.held is not None)

    async def join_group_async(self, *args: Any, **kwargs: Any) -> bool:
        """A round trip that finished between two polls is handed back to kafka-python's loop.

        kafka-python drops it and sends a new JoinGroup, its error never handled
        (docs/upstream.md#1).
        """
        state = self._join_state
        with self._lock:
            task = self._join_task
            if (task is not None and task.is_done
                    and probes.workaround_needed("replay-finished-join")):
                state.held, self._join_task = task, None
        return bool(await super().join_group_async(*args, **kwargs))

    async def _do_join_and_sync_async(self, *args: Any, **kwargs: Any) -> Any:
        """Replays a held round trip's result (or error); keeps the membership clock.

        (docs/upstream.md#1; the clock guards keep-reading, :mod:`.membership`.)
        """
        state = self._join_state
        with self._lock:
            held, state.held = state.held, None
            if held is None:
                state.completing = state.rejoin_requested = False
        if held is not None:
            try:
                return await held  # its value, or its error for kafka-python's loop to handle
            except BaseException:
                self._after_failed_round_trip()
                raise
        # the broker holds a member whose JoinGroup or SyncGroup is pending
        state.membership.round_trip_started()
        try:
            assignment = await super()._do_join_and_sync_async(*args, **kwargs)
        except BaseException:
            self._after_failed_round_trip()
            raise
        finally:
            state.membership.round_trip_ended()
        # the SyncGroup, accepted, was sent after the JoinGroup's answer was taken in
        state.membership.confirm(state.join_answered_at)
        return assignment

    def _after_failed_round_trip(self) -> None:
        state = self._join_state
        with self._lock:
            state.completing = False
            if (state.cooperative and self._generation.is_lost()
                    and self._subscription.assigned_partitions()):
                # expelled while rejoining: the partitions are lost, not kept; the prepare
                # step runs again (on_partitions_lost) before the member joins as a new member
                self.rejoining = False

    def _process_join_group_response(self, response: Any, send_time: float,
                                     *args: Any, **kwargs: Any) -> Any:
        """Heartbeats go on from the JoinGroup response (COMPLETING_REBALANCE), as Java's.

        kafka-python stops them until a later poll takes the result up, and a member that
        processes records meanwhile is expelled (docs/upstream.md#2).
        """
        joined = super()._process_join_group_response(response, send_time, *args, **kwargs)
        state = self._join_state
        with self._lock:
            state.membership.confirm(send_time)
            state.join_answered_at = time.monotonic()
            state.completing = True
        if probes.workaround_needed("heartbeat-after-join-response"):
            self._enable_heartbeat()
        return joined

    def stable(self, *args: Any, **kwargs: Any) -> bool:
        """The heartbeat loop's question: a member completing its join counts as joined
        (docs/upstream.md#2)."""
        from kafka.coordinator.base import MemberState

        state = self._join_state
        with self._lock:
            return bool(super().stable(*args, **kwargs) or (
                state.completing and self.state is MemberState.REBALANCING
                and probes.workaround_needed("heartbeat-after-join-response")))

    def request_rejoin(self, *args: Any, **kwargs: Any) -> None:
        """A rejoin asked for while the join completes survives its take-up (which clears it)."""
        state = self._join_state
        with self._lock:
            if state.completing:
                state.rejoin_requested = True
            super().request_rejoin(*args, **kwargs)

    async def _on_join_prepare_async(self, generation: int, member_id: str,
                                     *args: Any, **kwargs: Any) -> None:
        """A member that lost its generation owns nothing: our assignors forget their claims."""
        try:
            await super()._on_join_prepare_async(generation, member_id, *args, **kwargs)
        finally:
            if self._generation.is_lost():
                forget_claims(self)

    async def _on_join_complete_async(self, generation: int, member_id: str, protocol: str,
                                      assignment: bytes, *args: Any, **kwargs: Any) -> None:
        """A result taken up after a heartbeat learned the member was expelled is dropped:
        the partitions are given up as lost before any fetch and the member rejoins, as
        Java's ``joinGroupIfNeeded`` does (kafka-python applies it, docs/upstream.md#1)."""
        state = self._join_state
        with self._lock:
            completed, state.completing = state.completing, False
            rejoin, state.rejoin_requested = state.rejoin_requested, False
        if generation_was_reset(generation, member_id):
            await self._drop_stale_result()
            return
        await super()._on_join_complete_async(generation, member_id, protocol, assignment,
                                              *args, **kwargs)
        if rejoin and completed:
            super().request_rejoin()

    async def _drop_stale_result(self) -> None:
        from kafka.coordinator.base import MemberState

        log.info("group %s: dropping a join result taken up after the member lost its "
                 "generation; giving its partitions up as lost and rejoining", self.group_id)
        with self._lock:
            self.state = MemberState.UNJOINED
            super().request_rejoin()
            self.rejoining = False
        # kafka-python reports this join as done and the same poll() fetches next: the
        # partitions go first (Java runs onPartitionsLost before any fetch)
        if not self._subscription.assigned_partitions():
            return
        if self._join_state.cooperative:
            # kafka-python's own lost path: on_partitions_lost, then nothing assigned
            await self._on_join_prepare_async(-1, "", timeout_ms=0)
            with self._lock:
                self.rejoining = True  # prepared: the next round trip just joins
        else:
            # eager: on_partitions_revoked already ran for them in this rebalance's prepare
            self._subscription.assign_from_subscribed([])

    def _handle_heartbeat_response(self, response: Any, send_time: float,
                                   *args: Any, **kwargs: Any) -> Any:
        """REBALANCE_IN_PROGRESS is a successful heartbeat once kafka-python has acted on it.

        kafka-python 3.0.0 to 3.0.2 also mark the coordinator dead (docs/upstream.md#5,
        kafka-python #3082); where its own fix is found, its handling is kept as is.
        """
        from kafka import errors as Errors

        membership = self._join_state.membership
        try:
            answer = super()._handle_heartbeat_response(response, send_time, *args, **kwargs)
        except Errors.RebalanceInProgressError:
            membership.confirm(send_time)  # the broker counted the heartbeat
            if probes.workaround_needed("heartbeat-rebalance-keeps-coordinator"):
                return None
            raise
        membership.confirm(send_time)
        return answer
