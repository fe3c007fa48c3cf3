"""Cooperative members that keep reading: KIP-429 as the Java consumer does it (KAFKA-8421).

kafka-python 3.0.12's ``poll()`` returns no records while any rebalance of its member is
under way (``ConsumerCoordinator.poll`` waits in ``ensure_active_group``), so a
cooperative rebalance pauses the partitions a member keeps as long as an eager one.
On a cooperative consumer :class:`KeepReadingMixin` overrides:

* ``poll`` (with ``join_group_async``): while a rebalance of a member that owns partitions
  is due or under way, it advances the rebalance without waiting for it (the join gets
  0 ms; the coordinator lookup and the prepare step's commit get the poll's own time, as
  kafka-python gives them) and lets the consumer fetch the partitions it still owns, as
  Java's ``ConsumerCoordinator.poll(timer, waitForJoinGroup=false)``; and only while the
  member is surely still in the group (:mod:`.membership`): once no round trip of it is
  pending and the broker accepted no request of it within ``session_timeout_ms`` (its
  JoinGroup keeps failing, say because the coordinator moved), it returns no records
  until the rejoin completes, as kafka-python does, rather than read a partition beside
  its next owner;
* ``time_to_next_poll``: a short fetch wait during the rebalance, so its completion is
  taken up promptly;
* ``_on_join_complete_async``: for partitions the new assignment takes away, first their
  consumed offsets are committed (auto-commit,
  asynchronously: the commit goes out before the follow-up JoinGroup on the same
  connection) and ``on_partitions_revoked`` runs while they are still assigned (Java's
  order); only then is the assignment replaced and the follow-up round requested;
* commits during the rebalance go on kafka-python's coordinator connection, in order: while
  this member's JoinGroup/SyncGroup round trip is pending none is sent (Java sends none then
  either; it would wait behind the JoinGroup), a sync one is retried by kafka-python's loop
  and an asynchronous one here (bounded, for the partitions no newer commit covers and the
  member still holds or is handing over); once the round trip is answered they go out with
  the member's new generation, which the broker accepts, although kafka-python would refuse
  to send them until the poll takes the result up; a member that closes during the
  rebalance commits what it read through it: once its pending round trip is answered (the
  wait bounded: ``CLOSE_COMMIT_WAIT_S``), or at once with its generation if none is
  pending (kafka-python would refuse to send either, and the next owner re-read them);
* hand-over (:mod:`.commits`): the follow-up JoinGroup that hands revoked partitions over
  waits (bounded, and never longer than the poll's own time: the member keeps reading
  meanwhile) for the commits of them issued before, including an
  ``on_partitions_revoked`` listener's ``commit_async``.

Nothing here blocks a ``poll(timeout_ms=...)`` longer than kafka-python alone would.
Threads: the state the application's thread reads (``keeps_reading``) is read under
kafka-python's coordinator lock, which the IO thread's writers hold.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from . import join, probes
from .commits import CommitTracker, wait_done
from .compose import RuntimeMixin

log = logging.getLogger("kafka_assignors")

#: How long a fetch may wait during a cooperative rebalance before the join is looked at again.
REBALANCE_POLL_S = 0.05
#: Records are held back as soon as the membership is in doubt; a WARNING says so once the
#: doubt has lasted this long (a SyncGroup answered REBALANCE_IN_PROGRESS after a long join
#: leaves it in doubt for the few milliseconds until the next JoinGroup is sent).
DOUBT_WARNING_S = 1.0
#: How long revoked partitions wait for commits of them still in flight before the hand-over,
#: and how long an asynchronous commit that met the rebalance is retried once the member's
#: JoinGroup is answered (newer commits of its partitions end its retries earlier).
COMMIT_ORDER_TIMEOUT_S = 10.0
#: How long a close during a rebalance holds its commit for the member's pending JoinGroup/
#: SyncGroup (the other members rejoin within a poll and a heartbeat; one that is slow to
#: would keep close() waiting): after that the commit gets kafka-python's handling (refused).
CLOSE_COMMIT_WAIT_S = 10.0

_STATE = "_kafka_assignors_keep_reading"


class KeepReadingState:
    """Per coordinator: the poll in progress, the revoked partitions not handed over yet, the
    commits in flight, and since when reading is held back."""

    def __init__(self) -> None:
        self.tracker = CommitTracker()
        #: inside a poll of this coordinator: that poll's timeout (inf: none); else None
        self.polling: float | None = None
        #: inside a join that a keep-reading poll advances: the poll's timeout; else None
        self.advancing: float | None = None
        #: revoked partitions not handed over yet, and until when their commits are waited for
        self.handing_over: set[Any] = set()
        self.hand_over_by = 0.0
        self.doubt_since: float | None = None  # since when reading is held back
        self.doubt_warned: float | None = None
        self.closing = False
        self.close_waits: float | None = None  # since when the close's commit has waited
        self.sync_commit_held = False  # the last sync commit attempt was held for the join


def state_of(coordinator: Any) -> KeepReadingState:
    state: KeepReadingState = getattr(coordinator, _STATE)
    return state


class KeepReadingMixin(RuntimeMixin):
    """Cooperative members keep reading the partitions they keep, as Java (KAFKA-8421).

    kafka-python returns no records during any rebalance (docs/upstream.md#3). Needs
    :class:`~.join.JoinFixMixin` below it (its state says where the join is).
    """

    FEATURE = "keep_reading"
    TITLE = "keep-reading"

    @classmethod
    def kafka_assignors_setup(cls, coordinator: Any) -> None:
        setattr(coordinator, _STATE, KeepReadingState())

    @property
    def _keep_reading(self) -> KeepReadingState:
        return state_of(self)

    def _cooperative(self) -> bool:
        return join.state_of(self).cooperative

    def _rebalancing(self) -> bool:
        """A cooperative rebalance of this member is due or under way."""
        from kafka.coordinator.base import MemberState

        return self._cooperative() and bool(self.need_rejoin()
                                            or self.state is MemberState.REBALANCING)

    def _keeps_reading(self) -> bool:
        """Rebalancing while holding partitions of a generation it is surely still a member of."""
        own = self._keep_reading
        membership = join.state_of(self).membership
        with self._lock:  # one consistent view of what the IO thread writes
            if not (self._rebalancing() and not self._generation.is_lost()
                    and bool(self._subscription.assigned_partitions())):
                return False
            sure = membership.surely_member()
            unconfirmed = membership.unconfirmed_for()
        now = time.monotonic()
        if sure:
            since, warned = own.doubt_since, own.doubt_warned
            if since is not None:
                own.doubt_since = own.doubt_warned = None
                (log.info if warned is not None else log.debug)(
                    "group %s: the broker confirmed the membership again after %.2f s; reading "
                    "the kept partitions through the rebalance again", self.group_id,
                    now - since)
            return True
        if own.doubt_since is None:
            # held back at once; said only if it lasts (the next rejoin may settle it)
            own.doubt_since = now
        if own.doubt_warned is None and now - own.doubt_since >= DOUBT_WARNING_S:
            own.doubt_warned = now
            log.warning("group %s: no heartbeat, JoinGroup or SyncGroup of this member was "
                        "accepted for %.1f s (session_timeout_ms %d) and none is pending: the "
                        "broker may have given its partitions to another member, so no records "
                        "are returned until the rejoin completes", self.group_id,
                        unconfirmed, self.config["session_timeout_ms"])
        return False

    def _reads_through_rebalance(self) -> bool:
        """Keeps reading, unless the installed kafka-python fetches during a cooperative
        rebalance itself (its own fix found by :mod:`.probes`: then its poll is left alone;
        the revoke-first order below stays, docs/upstream.md#3)."""
        return probes.workaround_needed("keep-reading-during-rebalance") and self._keeps_reading()

    # --- poll: advance the rebalance, do not wait for it -------------------------------

    async def join_group_async(self, timeout_ms: float | None = None,
                               *args: Any, **kwargs: Any) -> bool:
        """While the member keeps reading, the join gets 0 ms and the poll goes on to fetch,
        as Java's ``poll(timer, waitForJoinGroup=false)`` (docs/upstream.md#3)."""
        from kafka import errors as Errors

        # Decided here, when kafka-python's poll asks for the join, not when the poll began:
        # the heartbeat that finds the rebalance often lands between the two (the poll's
        # coordinator lookup waits for the IO thread that handles it), and deciding at the
        # start let such a poll wait out the whole join, every member's JoinGroup included.
        own = self._keep_reading
        if own.polling is None or not self._reads_through_rebalance():
            return bool(await super().join_group_async(timeout_ms, *args, **kwargs))
        own.advancing = own.polling
        try:
            # (KafkaTimeoutError: the prepare step waits for the hand-over's commits; a later
            # poll goes on with it)
            with contextlib.suppress(Errors.KafkaTimeoutError):
                await super().join_group_async(0, *args, **kwargs)
        finally:
            own.advancing = None
        # the group counts as active for kafka-python's poll, which then goes on as after a
        # join (poll_heartbeat: max_poll_interval_ms; auto-commit) and lets the consumer fetch
        return True

    def poll(self, timeout_ms: float | None = None, *args: Any, **kwargs: Any) -> bool:
        """Remembers the poll's own time: the coordinator lookup, a pattern subscription's
        metadata and the prepare step get it, the join none (docs/upstream.md#3)."""
        own = self._keep_reading
        own.polling = float("inf") if timeout_ms is None else timeout_ms
        try:
            return bool(super().poll(timeout_ms, *args, **kwargs))
        finally:
            own.polling = None

    def time_to_next_poll(self, *args: Any, **kwargs: Any) -> float:
        """A short fetch wait during the rebalance, so its completion is taken up promptly."""
        if self._reads_through_rebalance():
            return REBALANCE_POLL_S
        return float(super().time_to_next_poll(*args, **kwargs))

    # --- completion: stop, commit and report revoked partitions before letting go -------

    async def _on_join_complete_async(self, generation: int, member_id: str, protocol: str,
                                      assignment: bytes, *args: Any, **kwargs: Any) -> None:
        """Revoke first: commit (auto-commit) and report the partitions taken away while
        they are still assigned, then apply the assignment and join the follow-up round
        (Java's order; kafka-python reports them after replacing the assignment)."""
        from kafka import errors as Errors
        from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

        def original() -> Any:
            return super(KeepReadingMixin, self)._on_join_complete_async(
                generation, member_id, protocol, assignment, *args, **kwargs)

        if not self._cooperative() or join.generation_was_reset(generation, member_id):
            # (a result whose generation was lost meanwhile is dropped by the join fix)
            return await original()  # type: ignore[no-any-return]
        subscription = self._subscription
        assigned = set(ConsumerProtocolAssignment.decode(assignment).partitions())
        if any(tp.topic not in subscription.subscription for tp in assigned):
            # kafka-python rejects it (the subscription changed mid-rebalance) before any
            # listener runs: its own handling, and nothing revoked
            return await original()  # type: ignore[no-any-return]
        revoked = set(subscription.assigned_partitions()) - assigned
        listener_error: BaseException | None = None
        if revoked:
            own = self._keep_reading
            # (no fetch can return them meanwhile: the application's thread is inside the
            # poll that runs this; their buffered records are dropped once they go below)
            with self._lock:
                own.handing_over.update(revoked)
                own.hand_over_by = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
            self._commit_revoked(revoked)
            if subscription.rebalance_listener is not None:
                try:
                    await self._invoke_rebalance_listener_async("on_partitions_revoked", revoked)
                except Exception as exc:  # kafka-python's rule: finish, then raise
                    log.exception("rebalance listener failed in on_partitions_revoked(%s)",
                                  sorted(revoked))
                    listener_error = exc
            subscription.assign_from_subscribed(
                sorted(set(subscription.assigned_partitions()) - revoked))
            log.info("group %s: revoked %d partition(s) before handing them over; joining "
                     "the follow-up round", self.group_id, len(revoked))
            self.request_rejoin()  # kafka-python's step sees nothing revoked any more
        # kafka-python's step applies the assignment and reports the added partitions
        await original()
        if listener_error is not None:
            raise Errors.KafkaError("User rebalance callback throws an error") from listener_error

    def _commit_revoked(self, revoked: set[Any]) -> None:
        if not self.config.get("enable_auto_commit"):
            return  # manual commits: on_partitions_revoked is where the application commits
        offsets = {tp: om for tp, om in self._subscription.all_consumed_offsets().items()
                   if tp in revoked}
        if not offsets:
            return
        group_id = self.group_id

        def landed(_offsets: Any, result: Any) -> None:
            if isinstance(result, Exception):
                log.warning("group %s: could not commit the revoked partitions %s before "
                            "handing them over (%s); their new owner re-reads from the last "
                            "commit", group_id, sorted(offsets), result)

        # asynchronous: on the coordinator connection before the follow-up JoinGroup, which
        # also waits for it (the prepare step's hand-over gate)
        self._do_commit_offsets_async(offsets, landed)

    async def _on_join_prepare_async(self, generation: int, member_id: str,
                                     timeout_ms: float | None = None,
                                     *args: Any, **kwargs: Any) -> None:
        """The follow-up JoinGroup that hands revoked partitions over waits (bounded, never
        longer than the poll's own time) for the commits of them issued before."""
        from kafka import errors as Errors

        own = self._keep_reading
        if own.advancing is not None:
            timeout_ms = own.advancing  # the poll's own time, as kafka-python gives it
        with self._lock:
            waiting = own.tracker.covering(own.handing_over) if own.handing_over else []
            left = own.hand_over_by - time.monotonic()
        if waiting and left > 0 and not self._generation.is_lost():
            wait_s = left if timeout_ms is None else min(left, timeout_ms / 1000)
            if not await wait_done(self._net.sleep, waiting, wait_s, time.monotonic):
                if time.monotonic() < own.hand_over_by:
                    # not yet: this poll goes on reading, a later one hands them over
                    raise Errors.KafkaTimeoutError("commits of revoked partitions in flight")
                log.warning("group %s: commits of the revoked partitions %s still in flight "
                            "after %.0f s; handing them over anyway", self.group_id,
                            sorted(own.handing_over), COMMIT_ORDER_TIMEOUT_S)
        with self._lock:
            own.handing_over.clear()
        await super()._on_join_prepare_async(generation, member_id, *args,
                                             timeout_ms=timeout_ms, **kwargs)

    # --- commits during the rebalance ---------------------------------------------------

    def _synced(self) -> bool:
        """This member's SyncGroup was answered and no poll has taken the result up yet: the
        broker holds the new generation (the member's), kafka-python still says REBALANCING."""
        joined = join.state_of(self)
        return joined.completing and joined.membership.in_flight == 0

    def _closing_between_rounds(self) -> bool:
        """Closing during a rebalance with no round trip of this member pending: the broker
        still holds the member's generation (it takes commits of it while the group prepares
        the rebalance, and refuses them once it has moved on)."""
        return (self._keep_reading.closing and join.state_of(self).membership.in_flight == 0
                and not self._generation.is_lost())

    def generation_if_stable(self, *args: Any, **kwargs: Any) -> Any:
        """Once the SyncGroup is answered, commits go out with the new generation, which the
        broker accepts (kafka-python refuses to send them until a poll takes the result up)."""
        with self._lock:
            stable = super().generation_if_stable(*args, **kwargs)
            if stable is None and self._cooperative() and (
                    self._synced() or self._closing_between_rounds()):
                return self._generation
            return stable

    def _do_commit_offsets_async(self, offsets: Any, *args: Any, **kwargs: Any) -> Any:
        """Known to the commit tracker before kafka-python schedules the send (its IO thread
        may start it at once)."""
        own = self._keep_reading
        commit = own.tracker.issued(offsets, asynchronous=True)
        try:
            return super()._do_commit_offsets_async(offsets, *args, **kwargs)
        except BaseException:
            own.tracker.withdraw(commit)
            raise

    def _hold_commit(self) -> bool:
        """This member is rejoining and its SyncGroup is not answered yet: a commit sent now
        would wait behind its JoinGroup on the coordinator connection (past its own request
        timeout if the join is long) or meet the group between generations. Java sends none
        then either. Only while the round trip is pending: a failed one is retried by the
        next poll, which a held commit would keep from running. A closing member has read
        the partitions it keeps through the rebalance (which kafka-python alone does not), so
        its close commits them once the round trip is answered (bounded:
        ``CLOSE_COMMIT_WAIT_S``) rather than leave them to be read twice."""
        from kafka.coordinator.base import MemberState

        own = self._keep_reading
        with self._lock:
            if not (self._cooperative() and self.state is MemberState.REBALANCING) \
                    or self._synced():
                return False
            task = self._join_task
            pending = (join.state_of(self).membership.in_flight > 0
                       or (task is not None and not task.is_done))
            if not pending:
                # the round trip failed: only the next poll rejoins, so a commit held now
                # would hold the application's thread (a sync commit()) until its timeout
                # while the member drops out of the group; kafka-python's handling instead
                return False
            if not own.closing:
                return True
        now = time.monotonic()
        if own.close_waits is None:
            own.close_waits = now
            log.info("group %s: closing during a rebalance: the commit of what this member read "
                     "waits (at most %.0f s) for its JoinGroup/SyncGroup to be answered, then "
                     "goes out with the new generation", self.group_id, CLOSE_COMMIT_WAIT_S)
        return now - own.close_waits < CLOSE_COMMIT_WAIT_S

    async def _send_offset_commit_request(self, offsets: Any, *args: Any, **kwargs: Any) -> Any:
        """A commit made while this member's JoinGroup/SyncGroup is pending waits for the
        answer (retried, not failed); an asynchronous one is retried here (kafka-python
        would drop it), for the partitions no newer commit covers."""
        from kafka import errors as Errors

        own = self._keep_reading
        commit = own.tracker.start(offsets)
        deadline = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
        try:
            while True:
                try:
                    if self._hold_commit():
                        # the wait for the round trip is the group's, not this commit's
                        deadline = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
                        if not commit.asynchronous:
                            own.sync_commit_held = True
                        raise RebalanceCommitRetry(
                            f"group {self.group_id} is joining; the commit goes out "
                            "once its SyncGroup is answered")
                    if not commit.asynchronous:
                        own.sync_commit_held = False
                    return await super()._send_offset_commit_request(offsets, *args, **kwargs)
                except (RebalanceCommitRetry, Errors.NodeNotReadyError):
                    # a sync commit is retried by kafka-python's loop; an async one would be
                    # lost, and the partition's next owner re-read what it covered (Java holds
                    # a request for a busy connection until it is ready, it does not fail it)
                    if not commit.asynchronous or time.monotonic() >= deadline:
                        raise
                await self._net.sleep(self.config["retry_backoff_ms"] / 1000)
                with self._lock:
                    held = set(self._subscription.assigned_partitions()) | own.handing_over
                offsets = {tp: om for tp, om in own.tracker.still_newest(commit, offsets).items()
                           if tp in held}
                if not offsets:
                    return None  # newer commits cover them, or they are someone else's now
        finally:
            own.tracker.finish(commit)

    async def _commit_offsets_sync_async(self, offsets: Any, timeout_ms: float | None = None,
                                         *args: Any, **kwargs: Any) -> Any:
        """A ``commit()`` whose time ran out while it waited for this member's join raises
        ``RebalanceInProgressError``, what kafka-python raises for a commit during a rebalance
        (at once there), not the timeout kafka-python's retry loop would raise."""
        from kafka import errors as Errors

        own = self._keep_reading
        own.sync_commit_held = False
        try:
            return await super()._commit_offsets_sync_async(offsets, timeout_ms, *args, **kwargs)
        except Errors.KafkaTimeoutError as exc:
            if not own.sync_commit_held:
                raise
            raise Errors.RebalanceInProgressError(
                f"group {self.group_id} is rebalancing: the commit waited for this member's "
                "JoinGroup/SyncGroup until its timeout") from exc
        finally:
            own.sync_commit_held = False

    def close(self, *args: Any, **kwargs: Any) -> Any:
        """Its asynchronous commits are not retried into the next generation."""
        self._keep_reading.closing = True
        return super().close(*args, **kwargs)


def _retry_error_base() -> tuple[type[BaseException], ...]:
    from kafka import errors as Errors

    # (kafka-python 2.x has no RetriableError; the runtime is refused there, but its modules
    # are imported with the package)
    retriable = getattr(Errors, "RetriableError", None)
    return (Errors.RebalanceInProgressError,) + ((retriable,) if retriable else ())


class RebalanceCommitRetry(*_retry_error_base()):  # type: ignore[misc]
    """A commit that met the group between two generations: retried, not failed.

    A ``RebalanceInProgressError`` (what the broker said) that is also retriable, so
    ``consumer.commit()`` retries it until the rebalance completes or its timeout ends (then
    it raises ``RebalanceInProgressError``).
    """
