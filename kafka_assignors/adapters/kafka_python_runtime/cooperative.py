"""Cooperative members that keep reading: KIP-429 as the Java consumer does it (KAFKA-8421).

kafka-python 3.0.12's ``poll()`` returns no records while any rebalance of its member is
under way (``ConsumerCoordinator.poll`` waits in ``ensure_active_group``), so a
cooperative rebalance pauses the partitions a member keeps as long as an eager one.
On a cooperative consumer this module changes four things, on the coordinator instance:

* ``poll`` (with ``ensure_active_group``): while a rebalance of a member that owns
  partitions is due or under way, it advances the rebalance without waiting (prepare,
  JoinGroup/SyncGroup, completion) and lets the consumer fetch the partitions it still
  owns, as Java's ``ConsumerCoordinator.poll(timer, waitForJoinGroup=false)``: the
  coordinator lookup and a pattern subscription's metadata refresh get the poll's time;
  and only while the member is surely still in the group (:mod:`.membership`): once no
  round trip of it is pending and the broker accepted no request of it within
  ``session_timeout_ms`` (its JoinGroup keeps failing, say because the coordinator
  moved), it returns no records until the rejoin completes, as kafka-python does, rather
  than read a partition beside its next owner;
* ``time_to_next_poll``: a short fetch wait during the rebalance, so its completion is
  taken up promptly;
* ``_on_join_complete_async``: partitions the new assignment takes away stop being
  fetched and returned first, their consumed offsets are committed (auto-commit), and
  ``on_partitions_revoked`` runs while they are still assigned (Java's order); only then
  is the assignment replaced and the follow-up round requested;
* heartbeats: for a few seconds after each cooperative round they go out every 100 ms, so
  a follow-up round (the one that hands over revoked partitions) is noticed at once
  rather than at the next ``heartbeat_interval_ms``;
* commits: during the rebalance they go out with the member's current generation (the
  broker accepts them while the group prepares) on a connection of their own (the
  coordinator's connection is held by the pending JoinGroup: a broker answers one
  connection's requests in order), and a REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION met
  while a JoinGroup of this member is under way (or once it holds a newer generation, or,
  for REBALANCE_IN_PROGRESS, once it completed the generation the commit was sent with
  between its JoinGroup and SyncGroup answers) is retried (a sync commit waits for the next
  generation) instead of failing the commit and resetting the member; a fenced or closing
  member gets kafka-python's CommitFailedError;
* commit order and hand-over (:mod:`.commits`): a commit never overtakes an earlier one of
  the same partition that is unsent or in flight on the other connection, and revoked
  partitions are handed over (the follow-up JoinGroup) only once the commits of them issued
  before, including an ``on_partitions_revoked`` listener's ``commit_async``, have finished
  (bounded), as on the Java consumer's single coordinator connection; an asynchronous
  commit that meets the rebalance is retried with the new generation (bounded) for the
  partitions no newer commit covers, where kafka-python would drop it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("kafka_assignors")

#: The coordinator attributes this module reads or replaces (checked before installing).
NEEDS = (
    "poll", "poll_heartbeat", "time_to_next_poll", "_rebalance_protocol", "_subscription",
    "group_id", "_generation", "state", "config", "need_rejoin", "request_rejoin",
    "_on_join_complete_async", "_invoke_rebalance_listener_async",
    "_commit_offsets_sync_async", "_maybe_auto_commit_offsets_async",
    "generation_if_stable", "_send_offset_commit_request", "_handle_offset_commit_response",
    "coordinator", "_cluster", "_manager", "group_instance_id", "heartbeat",
    "ensure_active_group", "close", "rejoining", "_join_task", "_do_commit_offsets_async",
    "_on_join_prepare_async", "_net", "_do_join_and_sync_async",
    "_process_join_group_response", "_process_sync_group_response",
    "_handle_heartbeat_response",
)
SUBSCRIPTION_NEEDS = (
    "assigned_partitions", "all_consumed_offsets", "mark_pending_revocation",
    "assign_from_subscribed", "partitions_auto_assigned", "rebalance_listener",
    "subscribed_pattern",
)
#: Attributes of kafka-python's Heartbeat and cluster metadata read here.
HEARTBEAT_NEEDS = ("time_to_next_heartbeat", "heartbeat_failed", "last_send", "last_reset")
CLUSTER_NEEDS = ("_coordinator_brokers",)
MANAGER_NEEDS = ("send", "wait_for")
#: The OffsetCommitRequest fields (and nested types) a mid-rebalance commit is built with.
COMMIT_REQUEST_FIELDS = (
    "group_id", "generation_id_or_member_epoch", "member_id", "group_instance_id", "topics",
)
COMMIT_TOPIC_FIELDS = ("name", "partitions")
COMMIT_PARTITION_FIELDS = (
    "partition_index", "committed_offset", "committed_leader_epoch", "committed_metadata",
)

#: How long a fetch may wait during a cooperative rebalance before the join is looked at again.
REBALANCE_POLL_S = 0.05
#: Records are held back as soon as the membership is in doubt; a WARNING says so once the
#: doubt has lasted this long (a SyncGroup answered REBALANCE_IN_PROGRESS after a long join
#: leaves it in doubt for the few milliseconds until the next JoinGroup is sent).
DOUBT_WARNING_S = 1.0
#: How long committing the revoked partitions' offsets may take before they are let go anyway.
REVOKE_COMMIT_TIMEOUT_MS = 10_000
#: After a cooperative round, heartbeats this often for this long: the follow-up round starts
#: when the member that revoked partitions rejoins, and the others learn of it by heartbeat.
FAST_HEARTBEAT_S = 0.1
FOLLOW_UP_WINDOW_S = 3.0
#: How long revoked partitions wait for commits of them still in flight before the hand-over,
#: and how long a commit waits for an earlier one of its partitions before it is sent anyway.
COMMIT_ORDER_TIMEOUT_S = 10.0


def install_cooperative(coordinator: Any) -> None:
    """Keep-reading, revoke-first and rebalance-safe commits on one coordinator."""
    from kafka import errors as Errors
    from kafka.coordinator.assignors.abstract import RebalanceProtocol
    from kafka.coordinator.base import MemberState
    from kafka.future import Future
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    from .commits import CommitTracker, wait_done
    from .join import generation_was_reset
    from .membership import MembershipClock

    subscription = coordinator._subscription
    tracker = CommitTracker(Future)

    def cooperative() -> bool:
        return bool(coordinator._rebalance_protocol == RebalanceProtocol.COOPERATIVE)

    def rebalancing() -> bool:
        """A cooperative rebalance of this member is due or under way."""
        return cooperative() and bool(coordinator.need_rejoin()
                                      or coordinator.state is MemberState.REBALANCING)

    membership = MembershipClock(coordinator.config["session_timeout_ms"])
    doubt: list[float | None] = [None, None]  # [since when reading is held back, warned at]

    def keeps_reading() -> bool:
        """Rebalancing while holding partitions of a generation it is surely still a member of."""
        generation = coordinator._generation
        if not (rebalancing() and coordinator.group_id is not None
                and subscription.partitions_auto_assigned()
                and not generation.is_lost()
                and bool(subscription.assigned_partitions())):
            return False
        now = time.monotonic()
        if membership.surely_member():
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
                        membership.unconfirmed_for(), coordinator.config["session_timeout_ms"])
        return False

    # --- poll: advance the rebalance, do not wait for it -------------------------------

    original_poll: Callable[..., bool] = coordinator.poll
    original_time_to_next_poll: Callable[[], float] = coordinator.time_to_next_poll
    original_ensure_active_group: Callable[..., bool] = coordinator.ensure_active_group
    advance_only = [False]  # inside a keep-reading poll: the join is advanced, not awaited

    def ensure_active_group(timeout_ms: float | None = None) -> bool:
        return original_ensure_active_group(timeout_ms=0 if advance_only[0] else timeout_ms)

    def poll(timeout_ms: float | None = None) -> bool:
        if not keeps_reading():
            return original_poll(timeout_ms=timeout_ms)
        # Java's poll(timer, waitForJoinGroup=false): the coordinator lookup and a pattern
        # subscription's metadata refresh get the poll's own time, the join none
        advance_only[0] = True
        try:
            if original_poll(timeout_ms=timeout_ms):
                return True  # the rebalance completed in this call
            if subscription.subscribed_pattern is not None:
                # kafka-python asks for new metadata at every poll and waits for it with the
                # poll's time: a short poll would never start the join
                original_ensure_active_group(timeout_ms=0)
        finally:
            advance_only[0] = False
        coordinator.poll_heartbeat()
        coordinator._maybe_auto_commit_offsets_async()
        # fetch what the member still owns (the prepare step may have revoked some)
        return bool(subscription.assigned_partitions())

    def time_to_next_poll() -> float:
        if keeps_reading():
            return REBALANCE_POLL_S
        return original_time_to_next_poll()

    # --- membership: what the broker accepted, and round trips pending ----------------

    original_round_trip: Callable[[], Coroutine[Any, Any, Any]] = (
        coordinator._do_join_and_sync_async)
    original_process_join: Callable[..., Any] = coordinator._process_join_group_response
    original_process_sync: Callable[..., Any] = coordinator._process_sync_group_response
    original_heartbeat_response: Callable[..., Any] = coordinator._handle_heartbeat_response

    async def do_join_and_sync() -> Any:
        # the broker holds a member whose JoinGroup or SyncGroup is pending
        membership.round_trip_started()
        try:
            return await original_round_trip()
        finally:
            membership.round_trip_ended()

    def process_join_group_response(response: Any, send_time: float) -> Any:
        joined = original_process_join(response, send_time)  # raises on an error
        membership.confirm(send_time)
        return joined

    def process_sync_group_response(response: Any, send_time: float) -> Any:
        assignment = original_process_sync(response, send_time)  # raises on an error
        membership.confirm(send_time)
        return assignment

    def handle_heartbeat_response(response: Any, send_time: float) -> Any:
        try:
            answer = original_heartbeat_response(response, send_time)
        except Errors.RebalanceInProgressError:
            membership.confirm(send_time)  # the broker counted it (kafka-python does too)
            raise
        membership.confirm(send_time)
        return answer

    # --- heartbeats: notice the follow-up round promptly --------------------------------

    heartbeat = coordinator.heartbeat
    original_time_to_next_heartbeat: Callable[[], float] = heartbeat.time_to_next_heartbeat
    fast_until = [0.0]

    def time_to_next_heartbeat() -> float:
        left = original_time_to_next_heartbeat()
        now = time.monotonic()
        if now >= fast_until[0] or heartbeat.heartbeat_failed:
            return left
        since = now - float(max(heartbeat.last_send, heartbeat.last_reset))
        return max(0.0, min(left, FAST_HEARTBEAT_S - since))

    # --- completion: stop, commit and report revoked partitions before letting go -------

    original_complete: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_complete_async)

    async def on_join_complete(generation: int, member_id: str, protocol: str,
                               assignment_bytes: bytes) -> None:
        if not cooperative() or generation_was_reset(generation, member_id):
            # (a result whose generation was lost meanwhile is dropped by the join fix)
            return await original_complete(generation, member_id, protocol, assignment_bytes)
        assigned = set(ConsumerProtocolAssignment.decode(assignment_bytes).partitions())
        revoked = set(subscription.assigned_partitions()) - assigned
        listener_error: BaseException | None = None
        if revoked:
            # no more fetches or returned records for them (buffered ones are dropped)
            subscription.mark_pending_revocation(revoked)
            await _commit_revoked(revoked)
            if subscription.rebalance_listener is not None:
                try:
                    await coordinator._invoke_rebalance_listener_async(
                        "on_partitions_revoked", revoked)
                except Exception as exc:  # kafka-python's rule: finish, then raise
                    log.exception("rebalance listener failed in on_partitions_revoked(%s)",
                                  sorted(revoked))
                    listener_error = exc
            await _commits_landed(revoked)
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
        fast_until[0] = time.monotonic() + FOLLOW_UP_WINDOW_S
        if listener_error is not None:
            raise Errors.KafkaError("User rebalance callback throws an error") from listener_error

    async def _commits_landed(revoked: set[Any]) -> None:
        """Hand revoked partitions over only once the commits of them issued so far finished."""
        pending = tracker.covering(revoked)
        if not pending:
            return
        started = time.monotonic()
        if await wait_done(coordinator._manager, pending, COMMIT_ORDER_TIMEOUT_S,
                           time.monotonic):
            log.info("group %s: waited %.3f s for %d commit(s) of revoked partitions before "
                     "handing them over", coordinator.group_id, time.monotonic() - started,
                     len(pending))
        else:
            log.warning("group %s: commits of the revoked partitions %s still in flight after "
                        "%.0f s; handing them over anyway", coordinator.group_id,
                        sorted(revoked), COMMIT_ORDER_TIMEOUT_S)

    original_prepare: Callable[..., Coroutine[Any, Any, None]] = (
        coordinator._on_join_prepare_async)

    async def on_join_prepare(generation: int, member_id: str,
                              timeout_ms: float | None = None) -> None:
        before = set(subscription.assigned_partitions())
        lost = coordinator._generation.is_lost()
        try:
            await original_prepare(generation, member_id, timeout_ms=timeout_ms)
        finally:
            # partitions given up before the JoinGroup (eager, or no longer subscribed)
            given_up = before if not cooperative() else before - set(
                subscription.assigned_partitions())
            if given_up and not lost:
                await _commits_landed(given_up)

    async def _commit_revoked(revoked: set[Any]) -> None:
        if not coordinator.config.get("enable_auto_commit"):
            return  # manual commits: on_partitions_revoked is where the application commits
        offsets = {tp: om for tp, om in subscription.all_consumed_offsets().items()
                   if tp in revoked}
        if not offsets:
            return
        try:
            await coordinator._commit_offsets_sync_async(
                offsets, timeout_ms=REVOKE_COMMIT_TIMEOUT_MS)
            log.debug("committed %d revoked partition(s) before handing them over",
                      len(offsets))
        except Exception as exc:
            log.warning("group %s: could not commit the revoked partitions %s before "
                        "handing them over (%s); their new owner re-reads from the last "
                        "commit", coordinator.group_id, sorted(offsets), exc)

    # --- commits during the rebalance ---------------------------------------------------

    original_generation_if_stable: Callable[[], Any] = coordinator.generation_if_stable
    original_send: Callable[[Any], Coroutine[Any, Any, Any]] = (
        coordinator._send_offset_commit_request)
    original_handle: Callable[..., Any] = coordinator._handle_offset_commit_response
    sent: dict[int, tuple[int, bool]] = {}  # id(offsets) -> (generation, sent mid-rebalance)

    def generation_if_stable() -> Any:
        stable = original_generation_if_stable()
        if stable is None and rebalancing() and not coordinator._generation.is_lost():
            # the broker takes commits of the current generation while the group prepares
            return coordinator._generation
        return stable

    original_do_commit_async: Callable[..., Any] = coordinator._do_commit_offsets_async

    def do_commit_offsets_async(offsets: Any, callback: Any = None) -> Any:
        # known before kafka-python schedules the send: its IO thread may start it at once
        commit = tracker.issued(offsets, asynchronous=True)
        try:
            future = original_do_commit_async(offsets, callback)
        except BaseException:
            tracker.withdraw(commit)
            raise
        tracker.finish_with(commit, future)
        return future

    async def send_commit(offsets: Any) -> Any:
        commit = tracker.start(offsets)
        deadline = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
        try:
            while True:
                try:
                    return await _send_in_order(commit, offsets)
                except (RebalanceCommitRetry, Errors.NodeNotReadyError):
                    # a sync commit is retried by kafka-python's loop; an async one would be
                    # lost, and the partition's next owner re-read what it covered (Java holds
                    # a request for a busy connection until it is ready, it does not fail it)
                    if not commit.asynchronous or time.monotonic() >= deadline:
                        raise
                tracker.sending(commit, None)  # newer commits of its partitions wait again
                await coordinator._net.sleep(coordinator.config["retry_backoff_ms"] / 1000)
                offsets = tracker.still_newest(commit, offsets)
                if not offsets:
                    return None  # newer commits cover every partition: nothing stale is sent
        finally:
            tracker.finish(commit)

    async def _send_in_order(commit: Any, offsets: Any) -> Any:
        deadline = time.monotonic() + COMMIT_ORDER_TIMEOUT_S
        while True:
            mid_rebalance = rebalancing()
            node = _commit_node(coordinator) if mid_rebalance else None
            generation = generation_if_stable()
            ours = node is not None and generation is not None and bool(offsets)
            route = node if ours else "coordinator"
            blockers = tracker.blockers(commit, route)
            if not blockers or time.monotonic() >= deadline:
                break
            # an earlier commit of these partitions is unsent or on the other connection
            await wait_done(coordinator._manager, blockers[:1],
                            deadline - time.monotonic(), time.monotonic)
        # from here to the send nothing yields: the route is the one the request takes
        tracker.sending(commit, route)
        sent[id(offsets)] = (coordinator._generation.generation_id, mid_rebalance)
        try:
            if not ours:
                return await original_send(offsets)
            request = _commit_request(coordinator, offsets, generation)
            send_time = time.monotonic()
            response = await coordinator._manager.send(request, node_id=node)
            return handle_commit(offsets, send_time, response)
        finally:
            sent.pop(id(offsets), None)

    retry_codes = {Errors.RebalanceInProgressError.errno, Errors.IllegalGenerationError.errno}

    def taking_part() -> bool:
        """A JoinGroup of this member, of a generation it still holds, is pending or answered."""
        return (not closing[0] and not coordinator._generation.is_lost()
                and bool(coordinator.rejoining or coordinator._join_task is not None))

    def handle_commit(offsets: Any, send_time: float, response: Any) -> Any:
        generation, mid_rebalance = sent.get(id(offsets), (None, False))
        current = coordinator._generation
        codes = _error_codes(response)
        in_good_standing = not current.is_lost() and not closing[0]
        # the member already holds a newer generation than the one the broker turned down
        moved_on = (generation is not None and generation != current.generation_id
                    and in_good_standing)
        # sent between its JoinGroup and SyncGroup answers (the group was completing that
        # generation), answered once the member had completed it: the broker takes it now
        completed = (mid_rebalance and generation == current.generation_id and in_good_standing
                     and Errors.RebalanceInProgressError.errno in codes)
        if cooperative() and (taking_part() or moved_on or completed) and codes & retry_codes:
            raise RebalanceCommitRetry(
                f"group {coordinator.group_id} was between generations when the commit "
                "arrived; retrying with the member's current one")
        # otherwise the member is fenced (or closing): kafka-python's handling, which resets
        # the generation and raises CommitFailedError at once, as Java does
        return original_handle(offsets, send_time, response)

    original_close: Callable[..., Any] = coordinator.close
    closing = [False]

    def close(*args: Any, **kwargs: Any) -> Any:
        closing[0] = True  # a closing member's commits are not retried into the next generation
        return original_close(*args, **kwargs)

    coordinator._do_join_and_sync_async = do_join_and_sync
    coordinator._process_join_group_response = process_join_group_response
    coordinator._process_sync_group_response = process_sync_group_response
    coordinator._handle_heartbeat_response = handle_heartbeat_response
    coordinator.poll = poll
    coordinator.ensure_active_group = ensure_active_group
    coordinator.close = close
    heartbeat.time_to_next_heartbeat = time_to_next_heartbeat
    coordinator.time_to_next_poll = time_to_next_poll
    coordinator._on_join_complete_async = on_join_complete
    coordinator.generation_if_stable = generation_if_stable
    coordinator._send_offset_commit_request = send_commit
    coordinator._do_commit_offsets_async = do_commit_offsets_async
    coordinator._on_join_prepare_async = on_join_prepare
    coordinator._handle_offset_commit_response = handle_commit


def _commit_node(coordinator: Any) -> str | None:
    """A second connection to the group coordinator's broker, for commits mid-rebalance.

    kafka-python sends group requests on a dedicated ``coordinator-<id>`` connection; the
    JoinGroup a rebalance keeps pending there would hold a commit until it completes.
    """
    node_id = coordinator.coordinator()
    cluster = coordinator._cluster
    brokers = getattr(cluster, "_coordinator_brokers", None)
    if not isinstance(brokers, dict) or brokers.get(node_id) is None:
        return None
    broker = brokers[node_id]
    commit_id = f"{node_id}-commits"
    known = brokers.get(commit_id)
    if known is None or (known.host, known.port) != (broker.host, broker.port):
        brokers[commit_id] = type(broker)(commit_id, broker.host, broker.port, None)
    return commit_id


def _commit_request(coordinator: Any, offsets: Any, generation: Any) -> Any:
    """An OffsetCommit request for ``offsets`` under ``generation`` (what kafka-python sends)."""
    from kafka.protocol.consumer import OffsetCommitRequest

    topic_type = OffsetCommitRequest.OffsetCommitRequestTopic
    partition_type = topic_type.OffsetCommitRequestPartition
    by_topic: dict[str, list[Any]] = {}
    for tp, om in offsets.items():
        by_topic.setdefault(tp.topic, []).append(partition_type(
            partition_index=tp.partition, committed_offset=om.offset,
            committed_leader_epoch=om.leader_epoch, committed_metadata=om.metadata))
    return OffsetCommitRequest(
        max_version=8,
        group_id=coordinator.group_id,
        generation_id_or_member_epoch=generation.generation_id,
        member_id=generation.member_id,
        group_instance_id=coordinator.group_instance_id,
        topics=[topic_type(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def _error_codes(response: Any) -> set[int]:
    return {code for _topic, partitions in response.topics for _p, code in partitions}


def _retry_error_base() -> tuple[type[BaseException], ...]:
    from kafka import errors as Errors

    return (Errors.RebalanceInProgressError, Errors.RetriableError)


class RebalanceCommitRetry(*_retry_error_base()):  # type: ignore[misc]
    """A commit that met the group between two generations: retried, not failed.

    A ``RebalanceInProgressError`` (what the broker said) that is also retriable, so
    ``consumer.commit()`` retries it until the rebalance completes or its timeout ends.
    """
