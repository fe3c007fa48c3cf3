"""The keep-reading guard: a cooperative member reads through a rebalance only while the broker
cannot have expelled it (kafka_python_runtime.membership), driven through kafka-python's own
code on a real consumer object (no broker: nothing is sent)."""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka import errors as Errors
from kafka.coordinator.base import Generation, MemberState
from kafka.structs import TopicPartition

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer
from kafka_assignors.kafka_python.runtime import cooperative
from kafka_assignors.kafka_python.runtime.membership import MembershipClock

from .test_kafka_python_runtime_join import _close

SESSION_MS = 10_000


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_member_is_sure_only_within_the_session_timeout_of_an_accepted_send() -> None:
    clock = Clock()
    membership = MembershipClock(SESSION_MS, clock)
    assert not membership.surely_member()  # nothing accepted yet
    membership.confirm(99.0)
    assert membership.surely_member()
    clock.now = 108.9
    assert membership.surely_member()
    clock.now = 109.0  # the broker may expire the session from here on
    assert not membership.surely_member()
    membership.confirm(50.0)  # an older answer arriving late changes nothing
    assert membership.confirmed_at == 99.0 and not membership.surely_member()


def test_a_pending_round_trip_keeps_the_member_sure() -> None:
    clock = Clock()
    membership = MembershipClock(SESSION_MS, clock)
    membership.round_trip_started()
    clock.now += 60  # a JoinGroup the broker holds while other members join
    assert membership.surely_member()
    membership.round_trip_ended()
    assert not membership.surely_member()
    membership.round_trip_ended()  # an extra end never makes the count negative
    membership.round_trip_started()
    assert membership.surely_member()


@given(sends=st.lists(st.floats(0, 1000), min_size=1), now=st.floats(0, 2000))
def test_surely_member_is_exactly_the_session_window_of_the_latest_send(
    sends: list[float], now: float,
) -> None:
    clock = Clock()
    membership = MembershipClock(SESSION_MS, clock)
    for send in sends:
        membership.confirm(send)
    clock.now = now
    assert membership.surely_member() == (now - max(sends) < SESSION_MS / 1000)


def _rebalancing_member() -> Any:
    """A cooperative member holding t-0 and t-1 of generation 4 that is due to rejoin."""
    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                             partition_assignment_strategy=[CooperativeBalancedStickyAssignor],
                             enable_auto_commit=False, session_timeout_ms=SESSION_MS)
    consumer.subscribe(["t"])
    coordinator = consumer._coordinator
    coordinator.coordinator_unknown = lambda: False
    coordinator.coordinator_id = "no-such-node"
    coordinator._generation = Generation(4, "m", "cooperative-balanced-sticky")
    coordinator.state = MemberState.STABLE
    coordinator._subscription.assign_from_subscribed([TopicPartition("t", 0),
                                                      TopicPartition("t", 1)])
    coordinator.rejoin_needed = True
    return consumer


def _heard_from(coordinator: Any, seconds_ago: float = 0.0) -> None:
    """The broker accepted a heartbeat sent ``seconds_ago``."""
    coordinator._handle_heartbeat_response(SimpleNamespace(error_code=0),
                                           time.monotonic() - seconds_ago)


#: a heartbeat accepted longer ago than the session: the member is in doubt
STALE_S = SESSION_MS / 1000 + 1


def _keeps_reading(coordinator: Any) -> bool:
    # the poll wait the runtime uses while it reads through a rebalance
    return bool(coordinator.time_to_next_poll() == cooperative.REBALANCE_POLL_S)


def test_a_recent_heartbeat_lets_the_member_read_through_the_rebalance() -> None:
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        _heard_from(coordinator)
        assert _keeps_reading(coordinator)
    finally:
        _close(consumer)


def test_rebalance_in_progress_counts_as_an_accepted_heartbeat() -> None:
    """REBALANCE_IN_PROGRESS is the broker counting the heartbeat: kafka-python requests the
    rejoin and the heartbeat counts as successful (as kafka-python 3.0.4 and later count it)."""
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        coordinator.rejoin_needed = False

        async def answer(request: Any, node_id: Any = None) -> Any:
            return SimpleNamespace(error_code=Errors.RebalanceInProgressError.errno)

        coordinator._manager.send = answer
        coordinator.heartbeat.last_receive = before = time.monotonic() - 1
        consumer._net.run(coordinator._do_heartbeat)  # kafka-python's heartbeat step
        assert coordinator.heartbeat.last_receive > before
        assert coordinator.need_rejoin()
        assert _keeps_reading(coordinator)
    finally:
        _close(consumer)


def test_no_accepted_request_for_a_session_stops_reading_with_one_warning(
    caplog: Any, monkeypatch: Any,
) -> None:
    """Its last heartbeat was accepted more than a session ago and no round trip is pending
    (the JoinGroup failed): the broker may have expelled it, so it returns nothing, as
    kafka-python does, and says why once the doubt has lasted; an accepted request lets it
    read again."""
    monkeypatch.setattr(cooperative, "DOUBT_WARNING_S", 0.0)
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        _heard_from(coordinator, STALE_S)
        with caplog.at_level(logging.INFO, logger="kafka_assignors"):
            assert not _keeps_reading(coordinator)
            assert not _keeps_reading(coordinator)
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING
                        and "may have given its partitions" in r.getMessage()]
            assert len(warnings) == 1
            _heard_from(coordinator)
            assert _keeps_reading(coordinator)
        assert any("confirmed the membership again" in r.getMessage() for r in caplog.records)
    finally:
        _close(consumer)


def test_a_short_doubt_holds_records_back_without_a_warning(caplog: Any) -> None:
    """A SyncGroup answered REBALANCE_IN_PROGRESS after a join that waited longer than the
    session leaves the member in doubt until its next JoinGroup goes out, milliseconds later:
    records are held back meanwhile, and no WARNING cries wolf."""
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        _heard_from(coordinator, STALE_S)
        with caplog.at_level(logging.DEBUG, logger="kafka_assignors"):
            assert not _keeps_reading(coordinator)
            _heard_from(coordinator)
            assert _keeps_reading(coordinator)
        said = [r for r in caplog.records if r.name == "kafka_assignors"
                and ("membership" in r.getMessage() or "partitions to another" in r.getMessage())]
        assert said and all(r.levelno == logging.DEBUG for r in said)
    finally:
        _close(consumer)


def test_a_failed_round_trip_is_not_pending_any_more() -> None:
    """A JoinGroup that could not be sent ends the round trip: only the last accepted request
    counts then, and that was more than a session ago."""
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        _heard_from(coordinator, STALE_S)

        async def unreachable(request: Any, node_id: Any = None, **_: Any) -> Any:
            raise Errors.KafkaConnectionError("gone")

        coordinator._manager.send = unreachable
        with pytest.raises(Errors.KafkaConnectionError):
            consumer._net.run(coordinator._do_join_and_sync_async)
        assert not _keeps_reading(coordinator)
    finally:
        _close(consumer)


def test_an_accepted_join_and_sync_confirm_the_membership() -> None:
    """A member in doubt whose JoinGroup and SyncGroup are accepted is sure again: the round
    trip's requests count as heartbeats do."""
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        _heard_from(coordinator, STALE_S)
        assert not _keeps_reading(coordinator)
        join = SimpleNamespace(error_code=0, protocol_type="consumer", generation_id=5,
                               member_id="m", protocol_name="cooperative-balanced-sticky",
                               leader="other", members=[])
        sync = SimpleNamespace(error_code=0, protocol_type="consumer",
                               protocol_name="cooperative-balanced-sticky", assignment=b"")
        answers = iter([join, sync])

        async def broker(request: Any, node_id: Any = None, **_: Any) -> Any:
            return next(answers)

        coordinator._manager.send = broker
        consumer._net.run(coordinator._do_join_and_sync_async)
        assert coordinator._generation.generation_id == 5
        assert _keeps_reading(coordinator)  # until the next poll takes the result up
    finally:
        _close(consumer)


def _blocks_while_held(lock: Any, call: Any) -> tuple[bool, bool]:
    """Run ``call`` on another thread while ``lock`` is held: (finished while held, finished)."""
    import threading

    finished = threading.Event()
    with lock:
        def run() -> None:
            call()
            finished.set()

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        early = finished.wait(0.3)
    worker.join(30)
    return early, finished.is_set()


def test_what_the_io_thread_writes_is_read_under_kafka_pythons_coordinator_lock() -> None:
    """kafka-python's IO thread changes the generation, the state and the membership under
    the coordinator's own lock (BaseCoordinator._lock): the application thread's keep-reading
    decision, the join fix's need_rejoin and the membership clock wait for it, so they never
    see a change half made."""
    consumer = _rebalancing_member()
    coordinator = consumer._coordinator
    try:
        _heard_from(coordinator)
        lock = coordinator._lock
        assert _blocks_while_held(lock, coordinator.time_to_next_poll) == (False, True)
        assert _blocks_while_held(lock, coordinator.need_rejoin) == (False, True)
        assert _blocks_while_held(lock, lambda: _heard_from(coordinator)) == (False, True)
    finally:
        _close(consumer)


def test_the_membership_clock_uses_the_lock_it_is_given() -> None:
    import threading

    lock = threading.RLock()
    membership = MembershipClock(SESSION_MS, Clock(), lock=lock)
    for call in (membership.surely_member, lambda: membership.confirm(1.0),
                 membership.round_trip_started, membership.round_trip_ended):
        assert _blocks_while_held(lock, call) == (False, True)
