"""The runtime's wrappers of kafka-python's join, heartbeat and commit handling, driven through
kafka-python's own code on a real consumer object (no broker: nothing is sent)."""

from __future__ import annotations

from collections import namedtuple
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import errors as Errors
from kafka.coordinator.base import Generation, MemberState
from kafka.future import Future
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.adapters.kafka_python_runtime import cooperative, manifest
from kafka_assignors.kafka_python import KafkaConsumer

_Broker = namedtuple("_Broker", "node_id host port rack")  # a coordinator's metadata
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


@pytest.mark.parametrize("code", [Errors.RebalanceInProgressError.errno,
                                  Errors.IllegalGenerationError.errno])
def test_a_heartbeat_answered_with_an_error_keeps_the_coordinator(code: int) -> None:
    """kafka-python 3.0.0-3.0.2 mark the coordinator dead when a heartbeat is answered with
    an error (a commit made then waits for a new lookup and meets the join); with the runtime
    the coordinator stays known on every tested release and kafka-python's own handling of
    the answer still runs (a rejoin is requested)."""
    consumer = _consumer(BalancedStickyAssignor)
    coordinator = consumer._coordinator
    try:
        coordinator.state = MemberState.STABLE
        coordinator._generation = Generation(3, "m", "balanced-sticky")
        coordinator.rejoin_needed = False

        async def answer(request: Any, node_id: Any = None) -> Any:
            return SimpleNamespace(error_code=code)

        consumer._coordinator._manager.send = answer
        with pytest.raises(Errors.for_code(code)):
            consumer._net.run(coordinator._send_heartbeat_request)
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


@pytest.mark.parametrize("in_join", [True, False], ids=["joining", "fenced"])
def test_illegal_generation_is_retried_only_for_a_member_in_the_rebalance(in_join: bool) -> None:
    """ILLEGAL_GENERATION on a commit is retried while a JoinGroup of this member is under way;
    a member with no join under way is fenced and gets CommitFailedError at once."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        coordinator._generation = Generation(4, "m", "cooperative-balanced-sticky")
        coordinator.state = MemberState.REBALANCING if in_join else MemberState.STABLE
        coordinator.rejoining = in_join
        offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
        response = _commit_response(Errors.IllegalGenerationError.errno)
        if in_join:
            with pytest.raises(cooperative.RebalanceCommitRetry):
                coordinator._handle_offset_commit_response(offsets, 0.0, response)
        else:
            with pytest.raises(Errors.CommitFailedError):
                coordinator._handle_offset_commit_response(offsets, 0.0, response)
            assert coordinator._generation.is_lost()
    finally:
        _close(consumer)


def test_a_closing_member_commit_is_not_retried() -> None:
    """close() during a rebalance does not retry its commit into the next generation."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    coordinator._generation = Generation(4, "m", "cooperative-balanced-sticky")
    coordinator.rejoining = True
    _close(consumer)
    offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
    with pytest.raises(Errors.CommitFailedError):
        coordinator._handle_offset_commit_response(
            offsets, 0.0, _commit_response(Errors.RebalanceInProgressError.errno))


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


def test_ownership_claims_are_cleared_on_unsubscribe() -> None:
    """unsubscribe() clears what the member announces as owned when it subscribes again."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    try:
        claims = _claims(consumer)
        claims.owned, claims.generation = {"t": [0]}, 4
        consumer.unsubscribe()
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


def test_an_async_commit_answered_rebalancing_once_its_join_completed_is_retried() -> None:
    """A commit_async sent between the member's JoinGroup and SyncGroup answers (the broker
    answers REBALANCE_IN_PROGRESS while the group completes the generation) and answered only
    after the member completed that generation is sent again, not failed: the partitions it
    covers may be about to be handed over. Its send is taken up by the IO thread before
    commit_async returns (it did so under load): the retry must still be made."""
    consumer = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    coordinator = consumer._coordinator
    try:
        coordinator._generation = Generation(5, "m", "cooperative-balanced-sticky")
        coordinator.state = MemberState.REBALANCING  # JoinGroup answered, SyncGroup pending
        coordinator.rejoining = True
        broker = _Broker("no-such-node", "127.0.0.1", 1, None)
        coordinator._cluster._coordinator_brokers = {"no-such-node": broker}
        requests: list[tuple[str, int]] = []

        async def send(request: Any, node_id: str | None = None) -> Any:
            requests.append((str(node_id), request.generation_id_or_member_epoch))
            if len(requests) == 1:
                # the SyncGroup answer is taken up before this commit's answer
                coordinator.state, coordinator.rejoining = MemberState.STABLE, False
                coordinator.rejoin_needed = False
                return _commit_response(Errors.RebalanceInProgressError.errno)
            return _commit_response(0)

        def call_soon(fn: Any, *args: Any) -> Any:  # the IO thread starts the send at once
            try:
                return _done(consumer._net.run(fn, *args))
            except Exception as exc:
                return _done(error=exc)

        coordinator._manager.send = send
        coordinator._manager.call_soon = call_soon
        offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
        future = coordinator._do_commit_offsets_async(offsets)
        assert future.succeeded(), future.exception
        # sent again with the generation it completed (here on the commits connection: this
        # member, which never really joined, still counts as rejoining to kafka-python)
        assert requests == [("no-such-node-commits", 5), ("no-such-node-commits", 5)]
    finally:
        _close(consumer)
