"""``ConsumerProtocolCoordinator``: a kafka-python 3 member of a KIP-848 consumer group.

kafka-python's ``KafkaConsumer`` talks to its ``_coordinator`` (``poll``, the commits and
offset fetches, ``close``, ``maybe_leave_group``); this subclass of its ``ConsumerCoordinator``
keeps that surface and replaces group membership: no JoinGroup / SyncGroup / Heartbeat, one
ConsumerGroupHeartbeat on kafka-python's IO thread instead, and reconciliation in the
caller's ``poll()``, where the rebalance listener runs (as the Java consumer runs it in the
application thread):

* heartbeats (:meth:`_heartbeat_loop`): join at epoch 0, then at the broker's interval, at
  once to acknowledge a reconciliation or a new subscription; the broker's answers move the
  state machine (:class:`.membership.Membership`); fenced -> FENCED; ``max_poll_interval_ms``
  without a poll -> a leave heartbeat and STALE, as Java;
* ``poll()``: FENCED / STALE -> ``on_partitions_lost`` and a rejoin; RECONCILING -> revoke
  what moves (its consumed offsets committed first when auto-commit is on, then
  ``on_partitions_revoked``), then assign what is new (``on_partitions_assigned``); the
  partitions kept are never paused, so their records keep flowing;
* commits and offset fetches carry the member id and epoch (OffsetCommit v9, OffsetFetch
  v9): a fenced member's commit is refused by the broker;
* leaving (``close()``, ``unsubscribe()``): a heartbeat with epoch -1, or -2 for a static
  member (``group_instance_id``), whose partitions the broker then keeps for its session.

:func:`.install` puts the class on an existing coordinator (``coordinator.__class__``) and
calls :meth:`_init_consumer_protocol`; every kafka-python name used is in :mod:`.manifest`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import time
from collections.abc import Iterable
from typing import Any

import kafka.errors as Errors
from kafka.coordinator.base import Generation
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.protocol.consumer import IsolationLevel
from kafka.structs import MemberState as ClassicState
from kafka.structs import TopicPartition

from .errors import StaleMemberEpochRetry, classify, protocol_unavailable
from .membership import IN_GROUP, Heartbeat, Membership, MemberState
from .messages import heartbeat_request, new_member_id, result_of
from .metrics import rebalance_metrics
from .offsets import commit_request, fetch_request
from .reconciliation import NamedPartition, plan

log = logging.getLogger(__name__)


class ConsumerProtocolCoordinator(ConsumerCoordinator):  # type: ignore[misc]
    """kafka-python's ``ConsumerCoordinator`` speaking the consumer group protocol (KIP-848)."""

    _membership: Membership
    _topic_names: dict[str, str]
    _broker_regex: bool
    _retry_at: float
    _metrics: Any

    def _init_consumer_protocol(self, *, remote_assignor: str | None, rack: str | None,
                                broker_regex: bool) -> None:
        """The member's own state (called once, right after the class is put in place)."""
        self._membership = Membership(
            new_member_id(), instance_id=self.group_instance_id, rack_id=rack or None,
            rebalance_timeout_ms=int(self.config["max_poll_interval_ms"]),
            server_assignor=remote_assignor)
        self._topic_names = {}  # topic id -> name, of the partitions owned
        self._broker_regex = broker_regex
        self._retry_at = 0.0  # no heartbeat before (monotonic): after an error, the backoff
        self._metrics = rebalance_metrics(self)
        if self._metrics is not None:
            self._membership.on_transition = self._metrics.transition
        self._sync_generation()

    # -- what the consumer calls -----------------------------------------------------------

    @property
    def member_state(self) -> MemberState:
        return self._membership.state

    def poll(self, timeout_ms: Any = None, *args: Any, **kwargs: Any) -> bool:
        """Find the coordinator, follow the subscription, release lost partitions,
        reconcile, auto-commit; never waits for the group (records of kept partitions
        flow on while the broker moves others)."""
        if self.group_id is None:
            return True
        self._invoke_completed_offset_commit_callbacks()
        self._raise_if_fatal()
        if not self.ensure_coordinator_ready(timeout_ms=timeout_ms):
            return False
        if self._subscription.partitions_auto_assigned():
            self._follow_subscription()
            self._maybe_start_heartbeat_loop()
            self.poll_heartbeat()  # marks the poll for max_poll_interval_ms
            self._release_if_lost()
            self._reconcile_if_needed()
        self._maybe_auto_commit_offsets_async()
        return True

    def need_rejoin(self, *args: Any, **kwargs: Any) -> bool:
        return self._membership.state in (MemberState.JOINING, MemberState.FENCED,
                                          MemberState.STALE)

    def time_to_next_poll(self, *args: Any, **kwargs: Any) -> float:
        if self._membership.state in (MemberState.RECONCILING, MemberState.FENCED,
                                      MemberState.STALE):
            return 0.0
        return float(super().time_to_next_poll(*args, **kwargs))

    def reset_generation(self, *args: Any, **kwargs: Any) -> None:
        """kafka-python's commit handler calls this on UNKNOWN_MEMBER_ID: the member is
        fenced (its next ``poll()`` loses its partitions and rejoins)."""
        with self._lock:
            self._membership.fenced()
            self._sync_generation()

    # -- heartbeats (kafka-python's IO thread) ---------------------------------------------

    async def _heartbeat_loop(self, *args: Any, **kwargs: Any) -> None:
        """One ConsumerGroupHeartbeat at a time, until the consumer closes."""
        while not self._heartbeat_closed:
            try:
                delay: float | None = await self._heartbeat_step()
            except Exception:  # the loop must outlive any one heartbeat
                log.exception("Consumer group heartbeat for group %s failed", self.group_id)
                delay = self.config["retry_backoff_ms"] / 1000
            if delay is None or delay > 0:
                await self._heartbeat_wakeup(delay)

    async def _heartbeat_step(self) -> float | None:
        """Send a heartbeat if one is due; how long to wait (None: until woken)."""
        with self._lock:
            if self._membership.state not in IN_GROUP:
                return None
            now = self._membership.heartbeat_now
        backoff = float(self.config["retry_backoff_ms"]) / 1000
        wait = self._retry_at - time.monotonic()
        if wait > 0:
            return wait
        if self.coordinator_unknown():
            try:
                await self.lookup_coordinator()
            except Errors.KafkaError:
                return backoff
            return 0.0
        if self.heartbeat.session_timeout_expired():
            self.coordinator_dead("Heartbeat session expired")
            return 0.0
        if self.heartbeat.poll_timeout_expired():
            log.warning("Consumer group %s: no poll() for max_poll_interval_ms (%s ms): "
                        "leaving the group, as the Java consumer does; the next poll() "
                        "loses its partitions and rejoins.", self.group_id,
                        self.config["max_poll_interval_ms"])
            await self._leave_async("max_poll_interval_ms exceeded", None, stale=True)
            return None
        if not (now and not self.heartbeat.heartbeat_failed) and \
                not self.heartbeat.should_heartbeat():
            return float(self.heartbeat.time_to_next_heartbeat())
        await self._send_heartbeat_async()
        return 0.0

    async def _send_heartbeat_async(self) -> None:
        with self._lock:
            beat = self._membership.heartbeat()
        request = heartbeat_request(self.group_id, beat)
        self.heartbeat.sent_heartbeat()
        node_id = self.coordinator_id
        try:
            response = await self._manager.send(request, node_id=node_id)
        except Errors.KafkaError as exc:
            self._failed_request(node_id, request, exc)
            self._heartbeat_failed(beat)
            if isinstance(exc, (Errors.UnsupportedVersionError,
                                Errors.IncompatibleBrokerVersion)):
                self._fail(protocol_unavailable(str(exc)))
            else:
                log.debug("Consumer group heartbeat failed: %s", exc)
            return
        self._handle_consumer_heartbeat(response, beat)

    def _handle_consumer_heartbeat(self, response: Any, beat: Heartbeat) -> None:
        result = result_of(response)
        kind = classify(result.error_code)
        if kind == "ok":
            self.heartbeat.received_heartbeat()
            with self._lock:
                if result.interval_ms > 0:
                    self.heartbeat.config["heartbeat_interval_ms"] = result.interval_ms
                before = self._membership.state
                self._membership.on_response(result.member_id, result.member_epoch,
                                             result.assignment, beat)
                self._sync_generation()
                after = self._membership.state
            if before is not after:
                log.debug("Member %s of group %s: %s -> %s (epoch %s)", beat.member_id,
                          self.group_id, before.value, after.value, result.member_epoch)
            return
        error = Errors.for_code(result.error_code)(result.error_message or "")
        if isinstance(error, Errors.UnsupportedVersionError):
            # a broker that lists the API but has the protocol turned off answers this
            error = protocol_unavailable(result.error_message or "UNSUPPORTED_VERSION")
        self._heartbeat_failed(beat)
        if kind == "fenced":
            log.warning("Member %s of group %s fenced (%s): its partitions are lost; it "
                        "rejoins at epoch 0", beat.member_id, self.group_id, error)
            with self._lock:
                self._membership.fenced()
                self._sync_generation()
        elif kind == "coordinator":
            self.coordinator_dead(error)
        elif kind == "retry":
            log.info("Consumer group heartbeat for group %s: %s; retrying", self.group_id,
                     error)
        else:
            self._fail(error)

    def _heartbeat_failed(self, beat: Heartbeat) -> None:
        self.heartbeat.fail_heartbeat()
        # finding the coordinator again resets kafka-python's failure flag: keep the backoff
        self._retry_at = time.monotonic() + float(self.config["retry_backoff_ms"]) / 1000
        if beat.acknowledges:
            with self._lock:
                self._membership.ack_sent = False  # send the acknowledgement again

    def _fail(self, error: BaseException) -> None:
        log.error("Consumer group %s: %s", self.group_id, error)
        with self._lock:
            self._membership.fail(error)
            self._sync_generation()

    # -- leaving ----------------------------------------------------------------------------

    async def maybe_leave_group_async(self, reason: Any = None, timeout_ms: Any = None,
                                      *args: Any, **kwargs: Any) -> None:
        """Leave with epoch -1 (-2 when static), as ``close()`` and ``unsubscribe()`` ask."""
        await self._leave_async(reason, timeout_ms, stale=False)

    async def _leave_async(self, reason: Any, timeout_ms: Any, *, stale: bool) -> None:
        with self._lock:
            member = self._membership
            if member.state not in IN_GROUP:
                if not stale and member.state in (MemberState.FENCED, MemberState.STALE):
                    member.left()
                return
            member.prepare_leaving()
            member.leaving()
            beat = member.heartbeat()
        if not self.coordinator_unknown():
            log.info("Leaving consumer group %s (member %s, epoch %s)%s", self.group_id,
                     beat.member_id, beat.member_epoch, f": {reason}" if reason else "")
            try:
                future = self._manager.send(heartbeat_request(self.group_id, beat),
                                            node_id=self.coordinator_id)
                response = await self._manager.wait_for(future, timeout_ms)
                code = result_of(response).error_code
                if code:
                    log.info("Leave heartbeat of group %s: %s", self.group_id,
                             Errors.for_code(code).__name__)
            except Errors.KafkaError as exc:
                log.warning("Leave heartbeat of group %s failed: %s", self.group_id, exc)
        with self._lock:
            member.stale() if stale else member.left()
            self._sync_generation()

    def release_before_unsubscribe(self) -> Exception | None:
        """What the Java consumer does on ``unsubscribe()`` before it leaves: the consumed
        offsets committed (auto-commit), then ``on_partitions_revoked`` with every partition
        held (``on_partitions_lost`` if the member is no longer in the group).  Called on
        the caller's thread while kafka-python still knows the assignment; the listener's
        exception is returned, to be raised once the member left."""
        if not self._subscription.partitions_auto_assigned():
            return None
        held = set(self._subscription.assigned_partitions())
        if not held:
            return None
        with self._lock:
            member = self._membership
            in_group = member.state in IN_GROUP and member.member_epoch > 0
        self._subscription.mark_pending_revocation(held)
        if in_group:
            self._commit_before_revocation(held)
            error = self._call_listener("on_partitions_revoked", held)
        else:
            error = self._call_listener("on_partitions_lost", held)
        self._subscription.assign_from_subscribed([])
        return error

    # -- the caller's poll: losing and reconciling ----------------------------------------

    def _follow_subscription(self) -> None:
        pattern = self._subscription.subscribed_pattern
        regex = pattern.pattern if pattern is not None and self._broker_regex else None
        topics = frozenset(self._subscription.subscription or ())
        with self._lock:
            changed = self._membership.subscribe(topics, regex)
            joining = self._membership.state is MemberState.JOINING
        if changed or joining:
            self._heartbeat_wakeup.notify()

    def _release_if_lost(self) -> None:
        with self._lock:
            if self._membership.state not in (MemberState.FENCED, MemberState.STALE):
                return
        lost = set(self._subscription.assigned_partitions())
        error = None
        if lost:
            self._subscription.mark_pending_revocation(lost)
            error = self._call_listener("on_partitions_lost", lost)
        self._subscription.assign_from_subscribed([])
        with self._lock:
            self._membership.lost()
            self._topic_names.clear()
            self._sync_generation()
        self.heartbeat.reset_timeouts()
        self._heartbeat_wakeup.notify()
        self._raise_listener_error(error)

    def _reconcile_if_needed(self) -> None:
        with self._lock:
            member = self._membership
            if not member.reconciling:
                return
            current, target, epoch = member.current, member.target, member.target_epoch
            first = member.first_reconciliation
            known = dict(self._topic_names)
        step = plan(current, target, known, self._name_of)
        if step.unresolved:
            self._cluster.request_update()  # names come with the next metadata
            if not step.changes and not first:
                return
        error = None
        if step.revoke:
            revoked = _tps(step.revoke)
            self._subscription.mark_pending_revocation(revoked)
            self._commit_before_revocation(revoked)
            error = self._call_listener("on_partitions_revoked", revoked)
        self._subscribe_to_assigned(step.keep | step.assign)
        self._subscription.assign_from_subscribed(sorted(_tps(step.keep | step.assign)))
        # every reconciliation ends with on_partitions_assigned, with what is new (maybe
        # nothing), as the Java consumer calls onPartitionsAssigned
        error = self._call_listener("on_partitions_assigned", _tps(step.assign)) or error
        with self._lock:
            self._topic_names = dict(step.names)
            member.reconciled(step.owned, epoch)
            self._sync_generation()
        log.info("Member %s of group %s reconciled epoch %s: revoked %s, assigned %s",
                 member.member_id, self.group_id, epoch, sorted(step.revoke),
                 sorted(step.assign))
        self._heartbeat_wakeup.notify()  # acknowledge now
        self._raise_listener_error(error)

    def _name_of(self, topic_id: str) -> str | None:
        import uuid

        name = self._cluster.topic_name_for_id(uuid.UUID(topic_id))
        return None if name is None else str(name)

    def _subscribe_to_assigned(self, partitions: Iterable[NamedPartition]) -> None:
        """A broker-side regex can assign a topic the client's own match has not seen yet:
        add it to the subscription kafka-python checks assignments against."""
        topics = {t for t, _ in partitions}
        missing = topics - set(self._subscription.subscription or ())
        if missing and self._subscription.subscribed_pattern is not None:
            self._subscription.change_subscription(
                sorted(set(self._subscription.subscription or ()) | missing))
            self._cluster.set_topics(self._subscription.group_subscription())

    def _commit_before_revocation(self, revoked: set[TopicPartition]) -> None:
        """With auto-commit, commit what was consumed from the partitions that move before
        they go (as the Java consumer does), so their next owner starts where this one
        stopped; a failure is logged, as Java logs it."""
        if not self.config["enable_auto_commit"]:
            return
        consumed = self._subscription.all_consumed_offsets()
        offsets = {tp: consumed[tp] for tp in revoked if tp in consumed}
        if not offsets:
            return
        try:
            self.commit_offsets_sync(offsets)
        except Errors.KafkaError as exc:
            log.warning("Commit before revoking %s in group %s failed: %s", sorted(offsets),
                        self.group_id, exc)

    def _call_listener(self, method: str, partitions: set[TopicPartition]) -> Exception | None:
        """Run the user's listener on the caller's thread (a coroutine listener on the IO
        loop); its exception is returned, to be raised once the member's state is right."""
        listener = self._subscription.rebalance_listener
        if listener is None:
            return None
        callback = getattr(listener, method)
        timed = contextlib.nullcontext() if self._metrics is None else \
            self._metrics.listener(method.rsplit("_", 1)[-1])
        try:
            with timed:
                if inspect.iscoroutinefunction(callback):
                    self._net.run(callback, partitions)
                else:
                    callback(partitions)
        except Exception as exc:
            log.exception("Rebalance listener %s.%s failed for group %s",
                          type(listener).__name__, method, self.group_id)
            return exc
        return None

    @staticmethod
    def _raise_listener_error(error: Exception | None) -> None:
        if error is not None:
            raise Errors.KafkaError("User rebalance callback throws an error") from error

    def _raise_if_fatal(self) -> None:
        error = self._membership.fatal_error
        if error is not None:
            raise error

    def _sync_generation(self) -> None:
        """Mirror the member into kafka-python's own fields (``group_metadata()``, the close
        path's lost-or-revoked choice), under ``self._lock``."""
        member = self._membership
        if member.state in IN_GROUP and member.member_epoch > 0:
            self._generation = Generation(member.member_epoch, member.member_id, "consumer")
        else:
            self._generation = Generation(-1, member.member_id, None)
        if member.state is MemberState.STABLE:
            self.state = ClassicState.STABLE
        elif member.state in IN_GROUP:
            self.state = ClassicState.REBALANCING
        else:
            self.state = ClassicState.UNJOINED

    # -- commits and offset fetches with the member epoch ----------------------------------

    def _member_fields(self) -> tuple[str | None, int]:
        """(member id, epoch) for OffsetCommit / OffsetFetch; refuses a commit of a
        subscribed member that is not in the group (the broker would refuse it)."""
        if not self._subscription.partitions_auto_assigned():
            return None, -1
        with self._lock:
            member = self._membership
            if member.state not in IN_GROUP or member.member_epoch <= 0:
                raise Errors.CommitFailedError(
                    f"member of group {self.group_id} is {member.state.value}, not in the "
                    "group: its partitions may be another member's now")
            return member.member_id, member.member_epoch

    async def _send_offset_commit_request(self, offsets: Any, *args: Any,
                                          **kwargs: Any) -> None:
        if not offsets:
            return None
        node_id = self.coordinator()
        if node_id is None:
            raise Errors.CoordinatorNotAvailableError()
        member_id, epoch = self._member_fields()
        request = commit_request(self.group_id, member_id, epoch, self.group_instance_id,
                                 offsets)
        send_time = time.monotonic()
        try:
            response = await self._manager.send(request, node_id=node_id)
        except Exception as exc:
            self._failed_request(node_id, request, exc)
            raise
        try:
            self._handle_offset_commit_response(offsets, send_time, response)
        except Errors.StaleMemberEpochError as exc:
            raise StaleMemberEpochRetry(str(exc)) from exc  # retried with the new epoch
        except Errors.FencedMemberEpochError as exc:
            raise Errors.CommitFailedError(
                f"member of group {self.group_id} was fenced: {exc}") from exc

    async def _send_offset_fetch_request(self, partitions: Any, *args: Any,
                                         **kwargs: Any) -> Any:
        if partitions is not None and not partitions:
            return {}
        node_id = self.coordinator()
        if node_id is None:
            raise Errors.CoordinatorNotAvailableError()
        try:
            member_id, epoch = self._member_fields()
        except Errors.CommitFailedError:
            member_id, epoch = None, -1  # not in the group: fetch as a non-member
        request = fetch_request(
            self.group_id, member_id, epoch, partitions,
            require_stable=self._isolation_level == IsolationLevel.READ_COMMITTED)
        try:
            response = await self._manager.send(request, node_id=node_id)
        except Exception as exc:
            self._failed_request(node_id, request, exc)
            raise
        try:
            return self._handle_offset_fetch_response(response)
        except Errors.StaleMemberEpochError as exc:
            raise StaleMemberEpochRetry(str(exc)) from exc


def _tps(pairs: Iterable[NamedPartition]) -> set[TopicPartition]:
    return {TopicPartition(t, p) for t, p in pairs}
