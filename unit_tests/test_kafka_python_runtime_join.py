"""The runtime's wrappers of kafka-python's join, heartbeat and commit handling, driven through
kafka-python's own code on a real consumer object (no broker: nothing is sent)."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import ConsumerRebalanceListener
from kafka import errors as Errors
from kafka.coordinator.base import Generation, MemberState
from kafka.future import Future
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer
from kafka_assignors.kafka_python.runtime import cooperative, manifest, probes

COOP_GEN = Generation(4, "m", "cooperative-balanced-sticky")


def _consumer(strategy: Any, **config: Any) -> Any:
    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                             partition_assignment_strategy=[strategy], **config)
    consumer.subscribe(["t"])
    coordinator = consumer._coordinator
    coordinator.coordinator_unknown = lambda: False  # as if the coordinator were known
    coordinator.coordinator_id = "no-such-node"
    return consumer


def _close(consumer: Any) -> None:
    """Close without a LeaveGroup to the coordinator that does not exist."""
    coordinator = consumer._coordinator
    coordinator.coordinator_unknown = lambda: True
    coordinator.coordinator_id = None
    consumer.close(autocommit=False)


def _done(value: Any = None, error: BaseException | None = None) -> Any:
    future = Future()
    return future.failure(error) if error is not None else future.success(value)


def _assignment(*partitions: int) -> bytes:
    encoded: bytes = ConsumerProtocolAssignment(
        version=0, assigned_partitions=[("t", list(partitions))], user_data=b"").encode()
    return encoded


def _mid_join(coordinator: Any, task: Any, generation: Generation) -> None:
    """A round trip of this member finished while no poll was waiting for it."""
    coordinator.rejoining = True
    coordinator.state = MemberState.REBALANCING
    coordinator._generation = generation
    coordinator._join_task = task


@pytest.mark.parametrize("strategy", [BalancedStickyAssignor, CooperativeBalancedStickyAssignor])
def test_a_round_trip_that_finished_between_polls_is_taken_up_by_a_zero_ms_poll(
    strategy: Any,
) -> None:
    """kafka-python drops a finished task and sends a new JoinGroup; the runtime hands its result
    to kafka-python's own loop, which applies it even when the poll gives the join 0 ms."""
    consumer = _consumer(strategy, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        _mid_join(coordinator, _done(_assignment(0, 1)), Generation(4, "m", strategy.name))
        assert consumer._net.run(coordinator.join_group_async, 0) is True
        assert coordinator.state is MemberState.STABLE and coordinator._join_task is None
        assert sorted(tp.partition for tp in consumer.assignment()) == [0, 1]
    finally:
        _close(consumer)


def test_a_failed_round_trip_gets_kafka_pythons_handling() -> None:
    """A round trip that failed between polls with a fatal error raises it from the next poll
    (kafka-python would have dropped it and sent a new JoinGroup)."""
    consumer = _consumer(BalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        error = Errors.GroupAuthorizationFailedError("g")
        _mid_join(coordinator, _done(error=error), Generation(4, "m", "balanced-sticky"))
        with pytest.raises(Errors.GroupAuthorizationFailedError):
            consumer._net.run(coordinator.join_group_async, 0)
        assert coordinator._join_task is None
    finally:
        _close(consumer)


def test_an_infinite_timeout_is_kafka_pythons_to_handle() -> None:
    """The iterator's timeout_ms=inf reaches kafka-python's join as is (no int() of it)."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        _mid_join(coordinator, _done(_assignment(2)), COOP_GEN)
        assert consumer._net.run(coordinator.join_group_async, float("inf")) is True
        assert [tp.partition for tp in consumer.assignment()] == [2]
    finally:
        _close(consumer)


def test_a_result_taken_up_after_the_generation_was_lost_is_dropped() -> None:
    """A heartbeat that learned the member was expelled (generation reset) before the poll took
    the result up: the assignment is not applied and the member rejoins as Java does."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        _mid_join(coordinator, _done(_assignment(0, 1)), COOP_GEN)
        coordinator.reset_generation()  # what the heartbeat's UNKNOWN_MEMBER_ID does
        coordinator.state = MemberState.REBALANCING
        consumer._net.run(coordinator.join_group_async, 0)
        assert consumer.assignment() == set()
        assert coordinator.state is MemberState.UNJOINED and coordinator.need_rejoin()
        assert coordinator.rejoining is False  # the prepare step runs again
    finally:
        _close(consumer)


def test_heartbeats_go_on_from_the_join_group_response() -> None:
    """After a successful JoinGroup response the heartbeat is enabled and counts the member as
    joined while SyncGroup and the take-up are pending; a new round trip turns that off."""
    consumer = _consumer(CooperativeBalancedStickyAssignor)
    coordinator = consumer._coordinator
    try:
        coordinator.state = MemberState.REBALANCING
        coordinator._disable_heartbeat()
        assert not coordinator.stable()
        response = SimpleNamespace(error_code=0, protocol_type="consumer", generation_id=7,
                                   member_id="m", protocol_name="cooperative-balanced-sticky")
        coordinator._process_join_group_response(response, 0.0)
        assert coordinator._heartbeat_enabled and coordinator.stable()
        assert coordinator._generation.generation_id == 7
        coordinator._join_task = None
        with pytest.raises(Errors.KafkaError):  # nowhere to send: the round trip fails
            consumer._net.run(coordinator._do_join_and_sync_async)
        assert not coordinator.stable()
    finally:
        _close(consumer)


def test_a_heartbeat_answered_rebalance_in_progress_keeps_the_coordinator() -> None:
    """kafka-python 3.0.0-3.0.2 mark the coordinator dead when a heartbeat is answered
    REBALANCE_IN_PROGRESS (a commit made then waits for a new lookup and meets the join). Where
    the probe finds that defect, the runtime returns normally from the answer's handling; where
    kafka-python fixed it (3.0.4 and later), the runtime steps aside and kafka-python's own
    heartbeat treats the answer as success. Either way the coordinator stays known, the
    heartbeat counts and a rejoin is requested (scripts/test-kafka-python-versions.sh runs
    both branches: 3.0.2 has the defect, 3.0.4 and later do not)."""
    defect_present = probes.workaround_needed("heartbeat-rebalance-keeps-coordinator")
    consumer = _consumer(BalancedStickyAssignor)
    coordinator = consumer._coordinator
    try:
        coordinator.state = MemberState.STABLE
        coordinator._generation = Generation(3, "m", "balanced-sticky")
        coordinator.rejoin_needed = False

        async def answer(request: Any, node_id: Any = None) -> Any:
            return SimpleNamespace(error_code=Errors.RebalanceInProgressError.errno)

        consumer._coordinator._manager.send = answer
        if defect_present:
            assert consumer._net.run(coordinator._send_heartbeat_request) is None
        else:
            with pytest.raises(Errors.RebalanceInProgressError):
                consumer._net.run(coordinator._send_heartbeat_request)
        before = coordinator.heartbeat.last_receive
        consumer._net.run(coordinator._do_heartbeat)
        assert coordinator.heartbeat.last_receive > before  # counted as a successful one
        assert coordinator.coordinator_id == "no-such-node"
        assert coordinator.need_rejoin()
    finally:
        _close(consumer)


def test_a_heartbeat_that_could_not_be_sent_still_marks_the_coordinator_dead() -> None:
    """A failure to reach the coordinator is kafka-python's to handle, as before."""
    consumer = _consumer(BalancedStickyAssignor)
    coordinator = consumer._coordinator
    try:
        coordinator.state = MemberState.STABLE
        coordinator._generation = Generation(3, "m", "balanced-sticky")

        async def unreachable(request: Any, node_id: Any = None) -> Any:
            raise Errors.KafkaConnectionError("gone")

        consumer._coordinator._manager.send = unreachable
        with pytest.raises(Errors.KafkaConnectionError):
            consumer._net.run(coordinator._send_heartbeat_request)
        assert coordinator.coordinator_id is None
    finally:
        _close(consumer)


def _commit_response(code: int) -> Any:
    return SimpleNamespace(topics=[("t", [(0, code)])])


@pytest.mark.parametrize("code", [Errors.IllegalGenerationError.errno,
                                  Errors.RebalanceInProgressError.errno])
def test_a_commit_that_meets_a_rebalance_gets_kafka_pythons_handling(code: int) -> None:
    """A commit the broker turns down because the group moved on (a rebalance this member has
    not joined yet, or a generation it was fenced from) gets kafka-python's handling at once:
    CommitFailedError (and a reset generation for ILLEGAL_GENERATION), as Java does."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
        coordinator._generation = Generation(4, "m", "cooperative-balanced-sticky")
        coordinator.state = MemberState.STABLE
        coordinator._manager.send = _Broker(coordinator, [code]).send
        offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
        with pytest.raises(Errors.CommitFailedError):
            consumer._net.run(coordinator._send_offset_commit_request, offsets)
        assert coordinator._generation.is_lost() == (code == Errors.IllegalGenerationError.errno)
    finally:
        _close(consumer)


def _rebalancing(consumer: Any) -> list[Any]:
    """The member holds t-0 (read up to 3) in generation 4 and is REBALANCING; what it sends
    from here on is recorded (and answered without error)."""
    coordinator = consumer._coordinator
    consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
    consumer._subscription.seek(TopicPartition("t", 0), 3)
    coordinator._generation = Generation(4, "m", "cooperative-balanced-sticky")
    coordinator.state = MemberState.REBALANCING
    coordinator.rejoining = True
    sent: list[Any] = []

    def send(request: Any, node_id: Any = None, **_: Any) -> Any:  # kafka-python's Future
        sent.append(request)
        return _done(SimpleNamespace(error_code=0, members=[], topics=[]))

    coordinator._manager.send = send
    return sent


def test_a_closing_member_commit_waits_for_its_round_trip_a_bounded_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """close() while the member's JoinGroup is pending: its final auto-commit waits for the
    round trip at most CLOSE_COMMIT_WAIT_S; one that never completes leaves it kafka-python's
    handling (refused: not part of an active group)."""
    from kafka_assignors.kafka_python.runtime import cooperative
    from kafka_assignors.kafka_python.runtime.join import state_of

    monkeypatch.setattr(cooperative, "CLOSE_COMMIT_WAIT_S", 1.0)
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=True)
    sent = _rebalancing(consumer)
    state_of(consumer._coordinator).membership.round_trip_started()  # the JoinGroup is pending
    started = time.monotonic()
    consumer.close()
    took = time.monotonic() - started
    # waited for the round trip, and not without bound (a loaded machine's stall is not
    # mistaken for an unbounded wait: the bound is far above CLOSE_COMMIT_WAIT_S)
    assert 1.0 <= took < 30.0, took
    assert "OffsetCommitRequest" not in [type(r).__name__ for r in sent]  # refused


def test_a_member_closing_between_two_round_trips_commits_with_its_generation() -> None:
    """close() during a rebalance with no round trip of the member pending: the broker still
    holds its generation, so its final auto-commit goes out with it (kafka-python would
    refuse to send it, and the next owner re-read what it covers)."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=True)
    sent = _rebalancing(consumer)
    consumer.close()
    commits = [r for r in sent if type(r).__name__ == "OffsetCommitRequest"]
    assert commits, [type(r).__name__ for r in sent]
    first = commits[0]
    assert getattr(first, "generation_id_or_member_epoch",
                   getattr(first, "generation_id", None)) == 4


def _claims(consumer: Any) -> Any:
    assignor = next(iter(consumer._coordinator._assignors.values()))
    return assignor._own_state


def test_ownership_claims_are_cleared_when_the_partitions_are_lost() -> None:
    """The lost path of the prepare step (generation reset while holding partitions) clears
    what the member announces as owned in its next JoinGroup."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
        claims = _claims(consumer)
        claims.owned, claims.generation = {"t": [0]}, 4
        coordinator.reset_generation()
        consumer._net.run(coordinator._on_join_prepare_async, -1, "", 0)
        assert claims.owned == {} and consumer.assignment() == set()
    finally:
        _close(consumer)


def test_ownership_claims_are_cleared_before_the_join_after_unsubscribe() -> None:
    """unsubscribe() leaves the group (kafka-python resets the generation): the prepare step of
    the next join, when the member subscribes again, clears what it announces as owned."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        claims = _claims(consumer)
        claims.owned, claims.generation = {"t": [0]}, 4
        consumer.unsubscribe()
        consumer.subscribe(["t"])
        consumer._net.run(coordinator._on_join_prepare_async, -1, "", 0)
        assert claims.owned == {}
    finally:
        _close(consumer)


def test_every_private_name_is_checked_on_this_kafka_python() -> None:
    """The deep check (Generation, Future, Heartbeat, cluster, OffsetCommitRequest fields)
    finds everything on the installed kafka-python."""
    consumer = _consumer(CooperativeBalancedStickyAssignor)
    try:
        assert manifest.missing(consumer._coordinator) == ()
    finally:
        _close(consumer)


class _Broker:
    """The coordinator connection: answers commits in order with the given error codes."""

    def __init__(self, coordinator: Any, answers: list[int]) -> None:
        self.coordinator, self.answers = coordinator, answers
        self.commits: list[int] = []  # the generation each commit was sent with

    async def send(self, request: Any, node_id: str | None = None, **_: Any) -> Any:
        self.commits.append(request.generation_id_or_member_epoch)
        return _commit_response(self.answers.pop(0) if self.answers else 0)


def _run_io_at_once(consumer: Any) -> None:
    """kafka-python's IO thread starts a scheduled send at once (it did so under load)."""
    def call_soon(fn: Any, *args: Any) -> Any:
        try:
            return _done(consumer._net.run(fn, *args))
        except Exception as exc:
            return _done(error=exc)

    consumer._coordinator._manager.call_soon = call_soon


def test_a_commit_after_the_sync_group_answer_goes_out_with_the_new_generation() -> None:
    """Once this member's SyncGroup is answered the broker holds its new generation, while
    kafka-python still says REBALANCING until a poll takes the result up (and would refuse the
    commit): the runtime sends it with the new generation."""
    from kafka_assignors.kafka_python.runtime.join import state_of

    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
        coordinator._generation = Generation(5, "m", "cooperative-balanced-sticky")
        coordinator.state = MemberState.REBALANCING
        coordinator.rejoining = True
        state_of(coordinator).completing = True  # JoinGroup and SyncGroup answered
        broker = _Broker(coordinator, [])
        coordinator._manager.send = broker.send
        _run_io_at_once(consumer)
        future = coordinator._do_commit_offsets_async(
            {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)})
        assert future.succeeded(), future.exception
        assert broker.commits == [5]
    finally:
        _close(consumer)


def test_a_commit_waits_for_the_round_trip_instead_of_queueing_behind_it() -> None:
    """While this member's JoinGroup/SyncGroup round trip is pending, a commit is not sent (it
    would wait behind the JoinGroup on the coordinator connection, past its own request timeout
    if the join is long): an async one goes out once the SyncGroup is answered, a sync one is
    retried by kafka-python's own loop."""
    from kafka_assignors.kafka_python.runtime.join import state_of

    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
        coordinator._generation = Generation(5, "m", "cooperative-balanced-sticky")
        coordinator.state = MemberState.REBALANCING
        coordinator.rejoining = True
        joined = state_of(coordinator)
        joined.membership.round_trip_started()  # the JoinGroup is pending
        broker = _Broker(coordinator, [])
        coordinator._manager.send = broker.send
        offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
        with pytest.raises(cooperative.RebalanceCommitRetry):  # retriable: commit() retries
            consumer._net.run(coordinator._send_offset_commit_request, offsets)
        task = coordinator._do_commit_offsets_async(offsets)
        consumer._net.run(consumer._net.sleep, 0.3)
        assert broker.commits == [] and not task.is_done
        joined.completing = True  # the JoinGroup is answered
        consumer._net.run(consumer._net.sleep, 0.3)
        assert broker.commits == [] and not task.is_done  # the SyncGroup is not
        joined.membership.round_trip_ended()
        consumer._net.run(consumer._manager.wait_for, task, 2000)
        assert broker.commits == [5]
    finally:
        _close(consumer)


class _Lost(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[int]]] = []

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append(("revoked", sorted(tp.partition for tp in revoked)))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append(("assigned", sorted(tp.partition for tp in assigned)))

    def on_partitions_lost(self, lost: Any) -> None:
        self.calls.append(("lost", sorted(tp.partition for tp in lost)))


def _holding(consumer: Any, listener: Any, *partitions: int) -> None:
    consumer.subscribe(["t"], listener=listener)
    state = consumer._subscription
    state.assign_from_subscribed([TopicPartition("t", p) for p in partitions])
    for tp in state.assigned_partitions():
        state.seek(tp, 0)


@pytest.mark.parametrize("strategy", [CooperativeBalancedStickyAssignor, BalancedStickyAssignor])
def test_a_dropped_stale_result_leaves_nothing_to_fetch(strategy: Any) -> None:
    """kafka-python reports the join as done when the runtime drops a result taken up after a
    heartbeat reset the generation, and the same poll() fetches next: no partition the member
    held may be fetchable then (another member may own it by now). A cooperative member gives
    them up as lost first (on_partitions_lost, as Java's onJoinPrepare does before any fetch);
    an eager one, which reported them revoked when the rebalance began, just lets them go."""
    consumer = _consumer(strategy, enable_auto_commit=False)
    coordinator = consumer._coordinator
    listener = _Lost()
    try:
        _holding(consumer, listener, 0, 1)
        _mid_join(coordinator, _done(_assignment(0, 1)), Generation(4, "m", strategy.name))
        coordinator.reset_generation()  # what the heartbeat's UNKNOWN_MEMBER_ID does
        coordinator.state = MemberState.REBALANCING
        assert consumer._net.run(coordinator.join_group_async, 0) is True  # "joined"
        state = consumer._subscription
        assert consumer.assignment() == set()
        assert not [tp for tp in state.assigned_partitions() if state.is_fetchable(tp)]
        cooperative_member = strategy is CooperativeBalancedStickyAssignor
        assert listener.calls == ([("lost", [0, 1])] if cooperative_member else [])
        assert coordinator.state is MemberState.UNJOINED and coordinator.need_rejoin()
    finally:
        _close(consumer)


class _Silent:
    """A coordinator that never answers: every request stays in flight."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, request: Any, node_id: Any = None, **_: Any) -> Any:
        self.sent.append(type(request).__name__)
        await Future()  # never resolved


def _rebalancing_cooperative_member(**config: Any) -> Any:
    """Holds t-0 and t-1 (consumed up to offset 3), generation 4, due to rejoin; heard from."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, session_timeout_ms=10_000, **config)
    coordinator = consumer._coordinator
    _holding(consumer, _Lost(), 0, 1)
    for tp in consumer.assignment():
        consumer._subscription.seek(tp, 3)
    coordinator._generation = COOP_GEN
    coordinator.state = MemberState.STABLE
    coordinator.rejoin_needed = True
    coordinator._handle_heartbeat_response(SimpleNamespace(error_code=0), time.monotonic())
    return consumer


def test_a_zero_ms_poll_during_a_rebalance_does_not_wait_for_the_prepare_commit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """poll(timeout_ms=0) of a cooperative member whose pre-rebalance auto-commit gets no answer
    returns at once, as kafka-python alone would (which gives that commit the poll's time); it
    still fetches the partitions it keeps."""
    from kafka.coordinator.consumer import ConsumerCoordinator

    given: list[float | None] = []  # the time kafka-python's prepare step (its commit) gets
    prepare = ConsumerCoordinator._on_join_prepare_async

    async def recorded(self: Any, generation: int, member_id: str,
                       timeout_ms: float | None = None) -> None:
        given.append(timeout_ms)
        await prepare(self, generation, member_id, timeout_ms=timeout_ms)

    monkeypatch.setattr(ConsumerCoordinator, "_on_join_prepare_async", recorded)
    consumer = _rebalancing_cooperative_member(enable_auto_commit=True)
    coordinator = consumer._coordinator
    silent = _Silent()
    coordinator._manager.send = silent.send
    try:
        assert coordinator.poll(timeout_ms=0) is True  # fetch the kept partitions
        assert given == [0]  # the poll's own time (it used to get at least 5 s)
        deadline = time.monotonic() + 5.0
        while "OffsetCommitRequest" not in "".join(silent.sent) and time.monotonic() < deadline:
            consumer._net.run(consumer._net.sleep, 0.05)
        assert "OffsetCommitRequest" in "".join(silent.sent)  # the commit did go out
    finally:
        _close(consumer)


def test_completing_a_cooperative_round_does_not_wait_for_the_revoked_commit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Completion commits the revoked partitions asynchronously and returns without waiting
    for the answer; the follow-up JoinGroup (the hand-over) waits for it, without blocking a
    poll longer than its own time (its prepare step gives up, the member keeps reading)."""
    from kafka_assignors.kafka_python.runtime import cooperative

    # the hand-over would wait up to 120 s for the commit's answer, which never comes here:
    # bounds far below that, so that a loaded machine's stall is not mistaken for waiting
    monkeypatch.setattr(cooperative, "COMMIT_ORDER_TIMEOUT_S", 120.0)
    consumer = _rebalancing_cooperative_member(enable_auto_commit=True)
    coordinator = consumer._coordinator
    silent = _Silent()
    coordinator._manager.send = silent.send
    try:
        started = time.monotonic()
        consumer._net.run(coordinator._on_join_complete_async, 4, "m",
                          "cooperative-balanced-sticky", _assignment(1))
        assert time.monotonic() - started < 60.0
        assert sorted(tp.partition for tp in consumer.assignment()) == [1]
        # (kafka-python's own metadata refreshes may go out meanwhile: not what is checked)
        def group_requests() -> list[str]:
            return [name for name in silent.sent if name != "MetadataRequest"]

        deadline = time.monotonic() + 5.0
        while not group_requests() and time.monotonic() < deadline:  # the IO loop sends it
            consumer._net.run(consumer._net.sleep, 0.05)
        assert group_requests() == ["OffsetCommitRequest"]
        started = time.monotonic()
        with pytest.raises(Errors.KafkaTimeoutError):  # the hand-over waits for the commit
            consumer._net.run(coordinator._on_join_prepare_async, 4, "m", 0)
        assert time.monotonic() - started < 60.0
        assert group_requests() == ["OffsetCommitRequest"]  # no JoinGroup yet
    finally:
        _close(consumer)


def test_a_commit_is_not_held_once_the_round_trip_failed() -> None:
    """commit() while the member is REBALANCING but no JoinGroup/SyncGroup of it is pending
    (the last one failed; only the next poll rejoins): not held until its timeout, which would
    keep that poll from running while the member drops out of the group; kafka-python's
    handling at once (refused: not part of an active group)."""
    from kafka.errors import KafkaError, KafkaTimeoutError

    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    try:
        _rebalancing(consumer)
        started = time.monotonic()
        with pytest.raises(KafkaError) as refused:
            consumer.commit(timeout_ms=60_000)
        # refused, not retried until the timeout (far above the bound: a loaded machine's
        # stall is not mistaken for holding)
        assert not isinstance(refused.value, KafkaTimeoutError), refused.value
        assert time.monotonic() - started < 30.0
    finally:
        _close(consumer)
