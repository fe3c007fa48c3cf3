"""Cooperative members that keep reading: KIP-429 as the Java consumer does it (KAFKA-8421).

kafka-python 3.0.12's ``poll()`` returns no records while any rebalance of its member is
under way (``ConsumerCoordinator.poll`` waits in ``ensure_active_group``), so a
cooperative rebalance pauses the partitions a member keeps as long as an eager one.
On a cooperative consumer this module changes, on the coordinator instance:

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
from collections.abc import Callable, Coroutine
from typing import Any

from . import join

log = logging.getLogger("kafka_assignors")

#: The coordinator attributes this module reads or replaces (checked before installing).
NEEDS = (
    "poll", "time_to_next_poll", "join_group_async", "_net",
    "_on_join_prepare_async", "_on_join_complete_async", "_invoke_rebalance_listener_async",
    "generation_if_stable", "_do_commit_offsets_async", "_send_offset_commit_request",
    "close", "group_id", "_generation", "_subscription",
    "_lock", "state", "config", "need_rejoin", "request_rejoin", "rejoining", "_join_task",
)
SUBSCRIPTION_NEEDS = (
    "assigned_partitions", "all_consumed_offsets", "assign_from_subscribed",
    "rebalance_listener",
)
#: kafka-python's event loop (``coordinator._net``): the retry backoff and the hand-over wait.
NET_NEEDS = ("sleep",)
#: kafka-python's public names used here ("module:attribute"; checked like the others), and
#: the consumer configuration keys read (kafka-python's documented options).
PUBLIC_NEEDS = (
    "kafka.errors:RebalanceInProgressError", "kafka.errors:RetriableError",
    "kafka.errors:NodeNotReadyError", "kafka.errors:KafkaTimeoutError", "kafka.errors:KafkaError",
    "kafka.coordinator.base:MemberState",
    "kafka.protocol.consumer.metadata:ConsumerProtocolAssignment.decode",
)
CONFIG_KEYS = ("session_timeout_ms", "enable_auto_commit", "retry_backoff_ms")

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


def missing(coordinator: Any) -> tuple[str, ...]:
    """The names this module needs that ``coordinator`` (and its objects) lack."""
    lacking = join._missing(coordinator, NEEDS)
    if lacking:
        return lacking
    return (join._missing(coordinator._subscription, SUBSCRIPTION_NEEDS, "SubscriptionState.")
            + join._missing(coordinator._net, NET_NEEDS, "KafkaNet.")
            + join.public_missing(PUBLIC_NEEDS))


def install_cooperative(coordinator: Any) -> None:
    """Keep-reading, revoke-first and rebalance-safe commits on one coordinator (after the
    join fix, whose state it reads)."""
    from kafka import errors as Errors
    from kafka.coordinator.base import MemberState
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    from .commits import CommitTracker, wait_done

    lock = coordinator._lock
    joined = join.state_of(coordinator)
    subscription = coordinator._subscription
    membership = joined.membership
    tracker = CommitTracker()

    def cooperative() -> bool:
        return joined.cooperative

    def rebalancing() -> bool:
        """A cooperative rebalance of this member is due or under way."""
        return cooperative() and bool(coordinator.need_rejoin()
                                      or coordinator.state is MemberState.REBALANCING)

    doubt: list[float | None] = [None, None]  # [since when reading is held back, warned at]

    def keeps_reading() -> bool:
        """Rebalancing while holding partitions of a generation it is surely still a member of."""
        with lock:  # one consistent view of what the IO thread writes
            if not (rebalancing() and not coordinator._generation.is_lost()
                    and bool(subscription.assigned_partitions())):
                return False
            sure = membership.surely_member()
            unconfirmed = membership.unconfirmed_for()
        now = time.monotonic()
        if sure:
            since, warned = doubt
            if since is not None:
                doubt[0] = doubt[1] = None
                (log.info if warned is not None else log.debug)(
                    "group %s: the broker confirmed the membership again after %.2f s; reading "
                    "the kept partitions through the rebalance again", coordinator.group_id,
                    now - since)
            return True
        since = doubt[0]
        if since is None:
            # held back at once; said only if it lasts (the next rejoin may settle it)
            since = doubt[0] = now
        if doubt[1] is None and now - since >= DOUBT_WARNING_S:
            doubt[1] = now
            log.warning("group %s: no heartbeat, JoinGroup or SyncGroup of this member was "
                        "accepted for %.1f s (session_timeout_ms %d) and none is pending: the "
                        "broker may have given its partitions to another member, so no records "
                        "are returned until the rejoin completes", coordinator.group_id,
                        unconfirmed, coordinator.config["session_timeout_ms"])
        return False

    # --- poll: advance the rebalance, do not wait for it -------------------------------

    original_poll: Callable[..., bool] = coordinator.poll
    original_time_to_next_poll: Callable[[], float] = coordinator.time_to_next_poll
    original_join: Callable[..., Coroutine[Any, Any, bool]] = coordinator.join_group_async
    #: inside a poll of this coordinator: that poll's timeout (inf: none); else None
    polling: list[float | None] = [None]
    #: inside a join that a keep-reading poll advances: the poll's timeout; else None
    advancing: list[float | None] = [None]

    async def join_group_async(timeout_ms: float | None = None) -> bool:
        # Decided here, when kafka-python's poll asks for the join, not when the poll began:
        # the heartbeat that finds the rebalance often lands between the two (the poll's
        # coordinator lookup waits for the IO thread that handles it), and deciding at the
        # start let such a poll wait out the whole join, every member's JoinGroup included.
        if polling[0] is None or not keeps_reading():
            return await original_join(timeout_ms)
        advancing[0] = polling[0]
        try:
            # (KafkaTimeoutError: the prepare step waits for the hand-over's commits; a later
            # poll goes on with it)
            with contextlib.suppress(Errors.KafkaTimeoutError):
                await original_join(0)
        finally:
            advancing[0] = None
        # the group counts as active for kafka-python's poll, which then goes on as after a
        # join (poll_heartbeat: max_poll_interval_ms; auto-commit) and lets the consumer fetch
        return True

    def poll(timeout_ms: float | None = None) -> bool:
        # Java's poll(timer, waitForJoinGroup=false) once the member keeps reading: the
        # coordinator lookup, a pattern subscription's metadata refresh and the prepare step
        # get the poll's time, the join none
        polling[0] = float("inf") if timeout_ms is None else timeout_ms
        try:
            return original_poll(timeout_ms=timeout_ms)
        finally:
            polling[0] = None

    def time_to_next_poll() -> float:
        if keeps_reading():
            return REBALANCE_POLL_S
        return original_time_to_next_poll()

    # --- completion: stop, commit and report revoked partitions before letting go -------

    original_complete: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_complete_async)
    #: revoked partitions not handed over yet, and until when their commits are waited for
    handing_over: set[Any] = set()
    hand_over_by = [0.0]

    async def on_join_complete(generation: int, member_id: str, protocol: str,
                               assignment_bytes: bytes) -> None:
        if not cooperative() or join.generation_was_reset(generation, member_id):
            # (a result whose generation was lost meanwhile is dropped by the join fix)
            return await original_complete(generation, member_id, protocol, assignment_bytes)
        assigned = set(ConsumerProtocolAssignment.decode(assignment_bytes).partitions())
        revoked = set(subscription.assigned_partitions()) - assigned
        listener_error: BaseException | None = None
        if revoked:
            # (no fetch can return them meanwhile: the application's thread is inside the
            # poll that runs this; their buffered records are dropped once they go below)
            with lock:
                handing_over.update(revoked)
                hand_over_by[0] = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
            _commit_revoked(revoked)
            if subscription.rebalance_listener is not None:
                try:
                    await coordinator._invoke_rebalance_listener_async(
                        "on_partitions_revoked", revoked)
                except Exception as exc:  # kafka-python's rule: finish, then raise
                    log.exception("rebalance listener failed in on_partitions_revoked(%s)",
                                  sorted(revoked))
                    listener_error = exc
            try:
                subscription.assign_from_subscribed(
                    sorted(set(subscription.assigned_partitions()) - revoked))
            except ValueError as exc:  # the subscription changed mid-rebalance: as kafka-python
                log.warning("Cooperative assignment rejected: %s. Probably due to a deleted "
                            "topic. Requesting re-join.", exc)
                coordinator.request_rejoin()
                return
            log.info("group %s: revoked %d partition(s) before handing them over; joining "
                     "the follow-up round", coordinator.group_id, len(revoked))
            coordinator.request_rejoin()  # the original sees nothing revoked any more
        # the original applies the assignment and reports the added partitions
        await original_complete(generation, member_id, protocol, assignment_bytes)
        if listener_error is not None:
            raise Errors.KafkaError("User rebalance callback throws an error") from listener_error

    def _commit_revoked(revoked: set[Any]) -> None:
        if not coordinator.config.get("enable_auto_commit"):
            return  # manual commits: on_partitions_revoked is where the application commits
        offsets = {tp: om for tp, om in subscription.all_consumed_offsets().items()
                   if tp in revoked}
        if not offsets:
            return

        def landed(_offsets: Any, result: Any) -> None:
            if isinstance(result, Exception):
                log.warning("group %s: could not commit the revoked partitions %s before "
                            "handing them over (%s); their new owner re-reads from the last "
                            "commit", coordinator.group_id, sorted(offsets), result)

        # asynchronous: on the coordinator connection before the follow-up JoinGroup, which
        # also waits for it (the prepare step's hand-over gate)
        coordinator._do_commit_offsets_async(offsets, landed)

    original_prepare: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_prepare_async)

    async def on_join_prepare(generation: int, member_id: str,
                              timeout_ms: float | None = None) -> None:
        if advancing[0] is not None:
            timeout_ms = advancing[0]  # the poll's own time, as kafka-python gives it
        with lock:
            waiting = tracker.covering(handing_over) if handing_over else []
            left = hand_over_by[0] - time.monotonic()
        if waiting and left > 0 and not coordinator._generation.is_lost():
            wait_s = left if timeout_ms is None else min(left, timeout_ms / 1000)
            if not await wait_done(coordinator._net.sleep, waiting, wait_s, time.monotonic):
                if time.monotonic() < hand_over_by[0]:
                    # not yet: this poll goes on reading, a later one hands them over
                    raise Errors.KafkaTimeoutError("commits of revoked partitions in flight")
                log.warning("group %s: commits of the revoked partitions %s still in flight "
                            "after %.0f s; handing them over anyway", coordinator.group_id,
                            sorted(handing_over), COMMIT_ORDER_TIMEOUT_S)
        with lock:
            handing_over.clear()
        await original_prepare(generation, member_id, timeout_ms=timeout_ms)

    # --- commits during the rebalance ---------------------------------------------------

    original_generation_if_stable: Callable[[], Any] = coordinator.generation_if_stable
    original_send: Callable[[Any], Coroutine[Any, Any, Any]] = (
        coordinator._send_offset_commit_request)
    original_do_commit_async: Callable[..., Any] = coordinator._do_commit_offsets_async

    def synced() -> bool:
        """This member's SyncGroup was answered and no poll has taken the result up yet: the
        broker holds the new generation (the member's), kafka-python still says REBALANCING."""
        return joined.completing and membership.in_flight == 0

    def closing_between_rounds() -> bool:
        """Closing during a rebalance with no round trip of this member pending: the broker
        still holds the member's generation (it takes commits of it while the group prepares
        the rebalance, and refuses them once it has moved on)."""
        return (closing[0] and membership.in_flight == 0
                and not coordinator._generation.is_lost())

    def generation_if_stable() -> Any:
        with lock:
            stable = original_generation_if_stable()
            if stable is None and cooperative() and (synced() or closing_between_rounds()):
                return coordinator._generation  # the broker takes commits of it now
            return stable

    def do_commit_offsets_async(offsets: Any, callback: Any = None) -> Any:
        # known before kafka-python schedules the send: its IO thread may start it at once
        commit = tracker.issued(offsets, asynchronous=True)
        try:
            return original_do_commit_async(offsets, callback)
        except BaseException:
            tracker.withdraw(commit)
            raise

    def hold_commit() -> bool:
        """This member is rejoining and its SyncGroup is not answered yet: a commit sent now
        would wait behind its JoinGroup on the coordinator connection (past its own request
        timeout if the join is long) or meet the group between generations. Java sends none
        then either. Only while the round trip is pending: a failed one is retried by the
        next poll, which a held commit would keep from running. A closing member has read
        the partitions it keeps through the rebalance (which kafka-python alone does not), so
        its close commits them once the round trip is answered (bounded:
        ``CLOSE_COMMIT_WAIT_S``) rather than leave them to be read twice."""
        with lock:
            if not (cooperative() and coordinator.state is MemberState.REBALANCING) or synced():
                return False
            task = coordinator._join_task
            pending = membership.in_flight > 0 or (task is not None and not task.is_done)
            if not pending:
                # the round trip failed: only the next poll rejoins, so a commit held now
                # would hold the application's thread (a sync commit()) until its timeout
                # while the member drops out of the group; kafka-python's handling instead
                return False
            if not closing[0]:
                return True
        now = time.monotonic()
        since = close_waits[0]
        if since is None:
            since = close_waits[0] = now
            log.info("group %s: closing during a rebalance: the commit of what this member read "
                     "waits (at most %.0f s) for its JoinGroup/SyncGroup to be answered, then "
                     "goes out with the new generation", coordinator.group_id,
                     CLOSE_COMMIT_WAIT_S)
        return now - since < CLOSE_COMMIT_WAIT_S

    async def send_commit(offsets: Any) -> Any:
        commit = tracker.start(offsets)
        deadline = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
        try:
            while True:
                try:
                    if hold_commit():
                        # the wait for the round trip is the group's, not this commit's
                        deadline = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
                        raise RebalanceCommitRetry(
                            f"group {coordinator.group_id} is joining; the commit goes out "
                            "once its SyncGroup is answered")
                    return await original_send(offsets)
                except (RebalanceCommitRetry, Errors.NodeNotReadyError):
                    # a sync commit is retried by kafka-python's loop; an async one would be
                    # lost, and the partition's next owner re-read what it covered (Java holds
                    # a request for a busy connection until it is ready, it does not fail it)
                    if not commit.asynchronous or time.monotonic() >= deadline:
                        raise
                await coordinator._net.sleep(coordinator.config["retry_backoff_ms"] / 1000)
                with lock:
                    held = set(subscription.assigned_partitions()) | handing_over
                offsets = {tp: om for tp, om in tracker.still_newest(commit, offsets).items()
                           if tp in held}
                if not offsets:
                    return None  # newer commits cover them, or they are someone else's now
        finally:
            tracker.finish(commit)

    original_close: Callable[..., Any] = coordinator.close
    closing = [False]
    close_waits: list[float | None] = [None]  # since when the close's commit has waited

    def close(*args: Any, **kwargs: Any) -> Any:
        closing[0] = True  # its asynchronous commits are not retried into the next generation
        return original_close(*args, **kwargs)

    coordinator.join_group_async = join_group_async
    coordinator.poll = poll
    coordinator.close = close
    coordinator.time_to_next_poll = time_to_next_poll
    coordinator._on_join_complete_async = on_join_complete
    coordinator._on_join_prepare_async = on_join_prepare
    coordinator.generation_if_stable = generation_if_stable
    coordinator._send_offset_commit_request = send_commit
    coordinator._do_commit_offsets_async = do_commit_offsets_async


def _retry_error_base() -> tuple[type[BaseException], ...]:
    from kafka import errors as Errors

    # (kafka-python 2.x has no RetriableError; the runtime is refused there, but its modules
    # are imported with the package)
    retriable = getattr(Errors, "RetriableError", None)
    return (Errors.RebalanceInProgressError,) + ((retriable,) if retriable else ())


class RebalanceCommitRetry(*_retry_error_base()):  # type: ignore[misc]
    """A commit that met the group between two generations: retried, not failed.

    A ``RebalanceInProgressError`` (what the broker said) that is also retriable, so
    ``consumer.commit()`` retries it until the rebalance completes or its timeout ends.
    """
