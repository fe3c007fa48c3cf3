"""The group coordinator of a cooperative aiokafka member (KIP-429, as the Java consumer).

aiokafka's ``GroupCoordinator`` is eager: its ``_on_join_prepare`` stops every partition
(``begin_reassignment``: ``getone()``/``getmany()`` return nothing until the group is
stable) and revokes all of them before each JoinGroup. :class:`CooperativeGroupCoordinator`
overrides a few of its steps, as Java's ``ConsumerCoordinator`` does for the cooperative
protocol:

* ``_on_join_prepare``: a member that holds partitions keeps them, and keeps fetching and
  returning their records, through the join (auto-commit still commits what was consumed,
  as Java's ``onJoinPrepare``);
* ``_on_join_complete``: partitions the new assignment takes away are revoked first (they
  stop being returned, their consumed offsets are committed with auto-commit, then
  ``on_partitions_revoked`` runs with only those while they are still assigned), the
  partitions kept carry their positions into the new assignment (nothing re-read, no
  committed-offset fetch), ``on_partitions_assigned`` gets only the added ones, and the
  follow-up round is requested if anything was revoked;
* ``_do_rejoin_group`` and ``commit_offsets``: a commit asked for while this member's
  JoinGroup/SyncGroup round trip is pending goes out once it is answered, with the new
  generation (sent at once it would queue behind the JoinGroup on the coordinator
  connection and be refused: members that keep reading commit during rebalances);
* ``_do_commit_offsets``: an OffsetCommit refused for the generation it was sent with after
  the member has joined a newer one (a user's commit during the rebalance, which a member
  that keeps reading makes likely) fails without resetting the membership, as in Java; and
  ``commit_offsets`` sends such a commit (or one refused REBALANCE_IN_PROGRESS before the
  member joined) again once the member's join completed, if it still holds the partitions;
* ``_maybe_leave_group`` on ``stop()``: ``on_partitions_revoked`` gets what the member holds
  before it leaves, as Java's ``onLeavePrepare`` (aiokafka calls no listener on ``stop()``;
  eager members revoked everything at their last rebalance, cooperative ones did not);
* ``reset_generation`` (the member was expelled, or left): the partitions it held may
  belong to another member already, so records stop at once (``begin_reassignment``) and
  ``on_partitions_revoked`` gets them before the next assignment (aiokafka's listener has no
  ``on_partitions_lost``; aiokafka calls ``on_partitions_revoked`` then too).

Every other case (an eager protocol, a member holding nothing, a subscription change) runs
aiokafka's own step through ``super()``. :mod:`.manifest` lists every internal used here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

from aiokafka import errors as Errors
from aiokafka.consumer.group_coordinator import GroupCoordinator

from . import manifest

log = logging.getLogger("kafka_assignors")


class CooperativeGroupCoordinator(GroupCoordinator):  # type: ignore[misc]
    """aiokafka's ``GroupCoordinator`` with Java's cooperative rebalance steps.

    Built by aiokafka's ``AIOKafkaConsumer.start()``; :meth:`adopt` gives it this class
    before its coordination task first runs.
    """

    #: run the cooperative protocol (every assignor of the consumer supports it); the
    #: class defaults hold until :meth:`adopt` sets them
    _ka_cooperative: bool = False
    #: the partitions this member holds (its last assignment, minus what it revoked)
    _ka_holding: frozenset[Any] = frozenset()
    #: partitions held when the member was found expelled, not yet told to the listener
    _ka_lost: frozenset[Any] = frozenset()
    #: the generation an OffsetCommit in flight was sent with (commits are serialised by
    #: aiokafka's commit lock)
    _ka_commit_generation: int | None = None
    #: the generation the last OffsetCommit was sent with
    _ka_sent_generation: int | None = None
    #: pending while this member's JoinGroup/SyncGroup round trip is
    _ka_round_trip: asyncio.Future[None] | None = None
    #: pending until this member's next join completes (a commit refused because the group
    #: began a rebalance this member had not joined yet waits for it)
    _ka_next_join: asyncio.Future[None] | None = None

    @classmethod
    def adopt(cls, coordinator: Any, *, cooperative: bool) -> CooperativeGroupCoordinator:
        """Give aiokafka's freshly built ``coordinator`` this class (its layout is the
        parent's: no new slots) and bind our assignors to it (their per-consumer state and
        generation). Raises :class:`~.manifest.MissingInternals`, or ``ValueError`` for an
        assignor instance another live consumer uses, before the class changes."""
        lacking = manifest.instance_missing("GroupCoordinator", coordinator)
        if lacking:
            raise manifest.MissingInternals(lacking)
        for assignor in coordinator._assignors:
            bind = getattr(assignor, "bind", None)
            if callable(bind) and not isinstance(assignor, type):
                bind(coordinator)
        coordinator.__class__ = cls
        adopted: CooperativeGroupCoordinator = coordinator
        adopted._ka_cooperative = cooperative  # our class's own state, on the adopted object
        return adopted

    # --- aiokafka's steps ---------------------------------------------------------------

    async def _on_join_prepare(self, previous_assignment: Any) -> None:
        if not self._keeps_through_join(previous_assignment):
            # eager, nothing held, expelled, or a new subscription: revoke everything
            if self._ka_cooperative:
                self._forget_holding()
            await super()._on_join_prepare(previous_assignment)
            self._ka_lost = frozenset()  # (aiokafka's step told the listener)
            return
        self._group_subscription = None  # as aiokafka: the leader sets it again
        if self._enable_auto_commit:
            await self._commit_quietly(previous_assignment,
                                       previous_assignment.all_consumed_offsets())
        log.info("Group %s: cooperative rejoin, keeping %d partition(s) and reading them",
                 self.group_id, len(self._ka_holding))

    async def _do_rejoin_group(self, subscription: Any) -> Any:
        self._ka_round_trip = asyncio.get_running_loop().create_future()
        try:
            return await super()._do_rejoin_group(subscription)
        finally:
            self._round_trip_answered()

    async def commit_offsets(self, assignment: Any, offsets: Any) -> None:
        pending = self._ka_round_trip
        if self._ka_cooperative and pending is not None:
            # Sent now, the commit would wait behind this member's JoinGroup on the
            # coordinator connection and then be refused (REBALANCE_IN_PROGRESS, or
            # ILLEGAL_GENERATION once the group moved on): it goes out once the round trip is
            # answered, with the new generation, before any hand-over of its partitions.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(pending),
                                       self._rebalance_timeout_ms / 1000)
        try:
            await super().commit_offsets(assignment, offsets)
        except Errors.CommitFailedError as exc:
            if not await self._joined_after_refusal(exc, offsets):
                raise
            # refused by a rebalance that did not cost this member the partitions: sent
            # again with the generation it joined, as a commit asked for during its round
            # trip is
            await super().commit_offsets(self._subscription.subscription.assignment, offsets)

    async def _joined_after_refusal(self, refusal: Exception, offsets: Any) -> bool:
        """True once the member completed the join of the rebalance that refused a commit and
        still holds every partition of it; False at once otherwise (the refusal stands).

        Two refusals a cooperative member meets while it keeps reading: REBALANCE_IN_PROGRESS
        (the group began a rebalance this member had not joined yet) and ILLEGAL_GENERATION
        for a commit sent just before its JoinGroup was answered (it is in the newer
        generation: membership kept, :meth:`reset_generation`). Neither cost it its
        partitions, so the commit can go out again with the generation it joined. Any other
        refusal, an eager member, or a member expelled meanwhile: the refusal stands."""
        cause = refusal.__cause__
        refused = self._ka_sent_generation
        rebalancing = isinstance(cause, Errors.RebalanceInProgressError)
        joined_since = (isinstance(cause, Errors.IllegalGenerationError)
                        and refused is not None and refused != self.generation)
        if not (self._ka_cooperative and (rebalancing or joined_since)):
            return False
        if self.generation == refused or self._ka_round_trip is not None:
            # its join is to come or under way: the assignment it brings decides
            if self._ka_next_join is None or self._ka_next_join.done():
                self._ka_next_join = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait_for(asyncio.shield(self._ka_next_join),
                                       self._rebalance_timeout_ms / 1000)
            except TimeoutError:
                return False
        held = set(self._subscription.assigned_partitions())
        kept = self.generation != refused and set(offsets) <= held
        log.info("Group %s: an OffsetCommit of generation %s refused while the group "
                 "rebalanced %s", self.group_id, refused,
                 f"is sent again with generation {self.generation}" if kept else
                 "is not sent again: the member no longer holds its partitions")
        return kept

    async def _on_join_complete(self, generation: int, member_id: str, protocol: str,
                                member_assignment_bytes: bytes) -> None:
        try:
            await self._complete_join(generation, member_id, protocol, member_assignment_bytes)
        finally:
            joined, self._ka_next_join = self._ka_next_join, None
            if joined is not None and not joined.done():
                joined.set_result(None)

    async def _complete_join(self, generation: int, member_id: str, protocol: str,
                             member_assignment_bytes: bytes) -> None:
        self._round_trip_answered()
        if self._ka_lost:
            await self._call_listener("on_partitions_revoked", self._ka_lost)
            self._ka_lost = frozenset()
        if not (self._ka_cooperative and self._ka_holding):
            await super()._on_join_complete(generation, member_id, protocol,
                                            member_assignment_bytes)
            if self._ka_cooperative:
                self._ka_holding = frozenset(self._subscription.assigned_partitions())
            return
        await self._complete_cooperatively(protocol, member_assignment_bytes)

    async def _do_commit_offsets(self, assignment: Any, offsets: Any) -> None:
        self._ka_commit_generation = self._ka_sent_generation = self.generation
        try:
            await super()._do_commit_offsets(assignment, offsets)
        finally:
            self._ka_commit_generation = None

    def reset_generation(self) -> None:
        sent = self._ka_commit_generation
        if self._ka_cooperative and sent is not None and sent != self.generation:
            # A commit sent before this member's JoinGroup was answered, refused for its old
            # generation: the member is in the new one (Java resets only if the generation
            # is unchanged). The commit still fails; membership and partitions stay.
            log.warning("Group %s: an OffsetCommit of generation %s was refused after the "
                        "member joined generation %s; membership kept", self.group_id, sent,
                        self.generation)
            return
        if self._ka_cooperative and self._ka_holding:
            # expelled (or leaving): what it held may be another member's now
            log.warning("Group %s: member %s is no longer in the group; its %d partition(s) "
                        "are lost and no longer read", self.group_id, self.member_id,
                        len(self._ka_holding))
            self._ka_lost = self._ka_holding
            self._forget_holding()
            self._subscription.begin_reassignment()
        super().reset_generation()

    async def _maybe_leave_group(self) -> None:
        if self._ka_cooperative and self._ka_holding and self._closing.done():
            # Java's onLeavePrepare: a closing member revokes what it holds (the eager
            # protocol revoked it at every rebalance; the cooperative one keeps it, so this is
            # the listener's last chance to commit it)
            held = self._ka_holding
            self._forget_holding()
            await self._call_listener("on_partitions_revoked", held)
        await super()._maybe_leave_group()

    # --- the cooperative round ----------------------------------------------------------

    def _round_trip_answered(self) -> None:
        pending, self._ka_round_trip = self._ka_round_trip, None
        if pending is not None and not pending.done():
            pending.set_result(None)

    def _keeps_through_join(self, previous_assignment: Any) -> bool:
        return bool(
            self._ka_cooperative and self._ka_holding and not self._ka_lost
            and previous_assignment is not None and previous_assignment.active
            and set(previous_assignment.tps) >= self._ka_holding)

    async def _complete_cooperatively(self, protocol: str, assignment_bytes: bytes) -> None:
        from aiokafka.coordinator.protocol import ConsumerProtocol

        decoded = ConsumerProtocol.ASSIGNMENT.decode(assignment_bytes)
        new = frozenset(decoded.partitions())
        revoked, added = self._ka_holding - new, new - self._ka_holding
        # heartbeats go on from here (Java enables them once JoinGroup is answered): the
        # revocation listener may take longer than a session
        self._start_heartbeat_task()
        if revoked:
            await self._revoke(revoked)
        if new != self._ka_holding:
            self._assign_keeping_positions(new)
        self._ka_holding = new
        assignor = self._lookup_assignor(protocol)
        if assignor is not None:
            assignor.on_assignment(decoded)
        log.info("Group %s generation %s: kept %d, revoked %s, added %s", self.group_id,
                 self.generation, len(new - added), sorted(revoked), sorted(added))
        await self._call_listener("on_partitions_assigned", added)
        if revoked:
            self.request_rejoin()  # the follow-up round hands them over

    async def _revoke(self, revoked: frozenset[Any]) -> None:
        """Stop returning records of ``revoked`` (paused, as Java's pending revocation),
        commit what was consumed of them, then tell the listener while still assigned."""
        assignment = self._subscription.subscription.assignment
        for tp in revoked:
            self._subscription.pause(tp)
        if self._enable_auto_commit:
            consumed = assignment.all_consumed_offsets()
            await self._commit_quietly(
                assignment, {tp: off for tp, off in consumed.items() if tp in revoked})
        await self._call_listener("on_partitions_revoked", revoked)

    def _assign_keeping_positions(self, new: frozenset[Any]) -> None:
        """Replace the assignment by ``new``; partitions kept go on from their position."""
        old = self._subscription.subscription.assignment
        kept = {tp: old.state_value(tp) for tp in new & set(old.tps)}
        self._subscription.assign_from_subscribed(set(new))
        fresh = self._subscription.subscription.assignment
        # (synchronous from the swap on: no fetch sees the fresh states before they carry on)
        for tp, state in kept.items():
            _carry_on(state, fresh.state_value(tp))
        # (aiokafka's start cancels the task serving the old assignment, which ends anyway)
        self.start_commit_offsets_refresh_task(fresh)

    def _forget_holding(self) -> None:
        self._ka_holding = frozenset()
        for assignor in self._assignors:
            forget = getattr(getattr(assignor, "_inner", None), "forget_owned", None)
            if callable(forget):
                forget()

    async def _commit_quietly(self, assignment: Any, offsets: dict[Any, Any]) -> None:
        from aiokafka.errors import KafkaError

        if not offsets:
            return
        try:
            await self.commit_offsets(assignment, offsets)
        except KafkaError as err:
            log.error("Group %s: OffsetCommit before the hand-over failed: %s",
                      self.group_id, err)

    async def _call_listener(self, method: str, partitions: Iterable[Any]) -> None:
        listener = self._subscription.listener
        if listener is None:
            return
        try:
            result = getattr(listener, method)(set(partitions))
            if asyncio.iscoroutine(result):
                await result
        except Exception:
            log.exception("Group %s: rebalance listener %s failed in %s", self.group_id,
                          listener, method)


def _carry_on(old: Any, fresh: Any) -> None:
    """Give a kept partition's fresh state the old one's position, reset and pause."""
    if old.has_valid_position:
        fresh.seek(old.position)
    elif old.awaiting_reset:
        fresh.await_reset(old.reset_strategy)
    if old.paused:
        fresh.pause()
