"""kafka-python's contract kept by the runtime: what listeners hear, what commit() and poll()
raise, and a constructor the metrics never fail (kafka-python's own code on a real consumer
object; no broker: nothing is sent)."""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import ConsumerRebalanceListener
from kafka import KafkaConsumer as PlainConsumer
from kafka import errors as Errors
from kafka.coordinator.base import Generation, MemberState
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer
from kafka_assignors.kafka_python.runtime import metrics as runtime_metrics
from kafka_assignors.kafka_python.runtime import runtime_status
from kafka_assignors.kafka_python.runtime.join import state_of
from kafka_assignors.metrics import GroupMetrics, metrics_of

from .test_kafka_python_runtime_join import _close, _consumer


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[int]]] = []

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append(("revoked", sorted(tp.partition for tp in revoked)))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append(("assigned", sorted(tp.partition for tp in assigned)))


@pytest.mark.parametrize("cls", [KafkaConsumer, PlainConsumer])
def test_an_assignment_kafka_python_rejects_tells_the_listener_nothing(cls: Any) -> None:
    """A cooperative assignment naming a topic no longer subscribed (kafka-python rejects it
    with ValueError and requests a rejoin): no listener hears of a revocation, the partitions
    stay assigned, the join state is reset, as with kafka-python alone."""
    consumer = cls(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                   enable_auto_commit=False,
                   partition_assignment_strategy=[CooperativeBalancedStickyAssignor])
    listener = _Listener()
    coordinator = consumer._coordinator
    try:
        consumer.subscribe(["t"], listener=listener)
        consumer._subscription.assign_from_subscribed([TopicPartition("t", 0),
                                                      TopicPartition("t", 1)])
        coordinator._generation = Generation(4, "m", "cooperative-balanced-sticky")
        coordinator.rejoin_needed = False
        if cls is KafkaConsumer:
            state_of(coordinator).completing = True  # its JoinGroup was answered
        assignment = ConsumerProtocolAssignment(
            version=0, assigned_partitions=[("t", [1]), ("gone", [0])], user_data=b"").encode()
        consumer._net.run(coordinator._on_join_complete_async, 4, "m",
                          "cooperative-balanced-sticky", assignment)
        assert listener.calls == []
        assert sorted(tp.partition for tp in consumer.assignment()) == [0, 1]
        assert coordinator.rejoin_needed is True
        if cls is KafkaConsumer:
            assert state_of(coordinator).completing is False
    finally:
        consumer.close(autocommit=False)


def _rebalancing(consumer: Any) -> None:
    """A cooperative member holding t-0 in generation 5 whose JoinGroup is pending."""
    coordinator = consumer._coordinator
    consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
    coordinator._generation = Generation(5, "m", "cooperative-balanced-sticky")
    coordinator.state = MemberState.REBALANCING
    coordinator.rejoining = True


def test_commit_during_a_cooperative_rebalance_raises_what_kafka_python_raises() -> None:
    """kafka-python refuses a commit while its member rebalances with RebalanceInProgressError;
    the runtime holds it for the member's pending JoinGroup (its answer lets it go out with the
    new generation) and, when commit()'s time ends first, raises the same error, not a
    timeout."""
    offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
    plain = PlainConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                          enable_auto_commit=False,
                          partition_assignment_strategy=[CooperativeBalancedStickyAssignor])
    plain.subscribe(["t"])
    plain._coordinator.coordinator_unknown = lambda: False
    plain._coordinator.coordinator_id = "no-such-node"
    runtime = _consumer(CooperativeBalancedStickyAssignor, enable_auto_commit=False)
    try:
        for consumer in (plain, runtime):
            _rebalancing(consumer)
        state_of(runtime._coordinator).membership.round_trip_started()
        with pytest.raises(Errors.RebalanceInProgressError):
            plain.commit(offsets)
        started = time.monotonic()
        with pytest.raises(Errors.RebalanceInProgressError, match="waited"):
            runtime.commit(offsets, timeout_ms=300)
        assert 0.25 <= time.monotonic() - started < 5
    finally:
        plain._coordinator.coordinator_unknown = lambda: True
        plain._coordinator.coordinator_id = None
        plain.close(autocommit=False)
        _close(runtime)


def test_a_failing_metric_registration_never_fails_the_constructor(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """If registering the rebalance metrics fails (say kafka-python registers the same Java
    names itself one day), the consumer is built with the rest of the runtime and a warning."""
    def clash(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("A metric named 'rebalance-total' already exists")

    monkeypatch.setattr(GroupMetrics, "__init__", clash)
    monkeypatch.setattr(runtime_metrics, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        consumer = _consumer(BalancedStickyAssignor)
    try:
        status = runtime_status(consumer._coordinator)
        assert status is not None and status.join_fix and not status.metrics
        assert metrics_of(consumer) is None
        assert "already exists" in caplog.text
    finally:
        _close(consumer)


def _fenced_heartbeat(consumer: Any) -> None:
    """kafka-python's heartbeat step, answered FENCED_INSTANCE_ID (a newer member took the
    group_instance_id)."""
    coordinator = consumer._coordinator
    coordinator._generation = Generation(3, "m", "balanced-sticky")
    coordinator.state = MemberState.STABLE

    async def fenced(request: Any, node_id: Any = None) -> Any:
        return SimpleNamespace(error_code=Errors.FencedInstanceIdError.errno)

    coordinator._manager.send = fenced
    consumer._net.run(coordinator._do_heartbeat)  # kafka-python only turns its heartbeat off
    assert not coordinator._heartbeat_enabled


def test_a_fenced_static_member_poll_raises_fenced_instance_id_error() -> None:
    """As the Java consumer's poll() raises FencedInstanceIdException: every poll after the
    fencing heartbeat raises kafka-python's FencedInstanceIdError (kafka-python alone polls
    on)."""
    consumer = _consumer(BalancedStickyAssignor, group_instance_id="static-1")
    try:
        _fenced_heartbeat(consumer)
        for _ in range(2):
            with pytest.raises(Errors.FencedInstanceIdError, match="static-1"):
                consumer.poll(timeout_ms=0)
    finally:
        _close(consumer)


def test_kafka_python_alone_polls_on_after_the_fence() -> None:
    """The difference the runtime removes, shown on kafka-python alone."""
    consumer = PlainConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                             group_instance_id="static-1",
                             partition_assignment_strategy=[BalancedStickyAssignor])
    consumer.subscribe(["t"])
    coordinator = consumer._coordinator
    coordinator.coordinator_unknown = lambda: False
    coordinator.coordinator_id = "no-such-node"
    try:
        _fenced_heartbeat(consumer)
        coordinator.coordinator_unknown = lambda: True  # poll(0): no coordinator lookup wait
        assert consumer.poll(timeout_ms=0) == {}
    finally:
        coordinator.coordinator_id = None
        consumer.close(autocommit=False)
