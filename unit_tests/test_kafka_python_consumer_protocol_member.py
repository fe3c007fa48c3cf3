"""The KIP-848 member on a real kafka-python consumer object (no broker: nothing is sent):
heartbeat answers move it, poll-side reconciliation calls the listener with only what moves,
a fenced member loses its partitions, and what it cannot do is refused with a clear error."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import kafka.errors as Errors
import pytest
from kafka import ConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_assignors.kafka_python import KafkaConsumer
from kafka_assignors.kafka_python.consumer_group import (
    ConsumerProtocolUnavailableError,
    MemberState,
)
from kafka_assignors.kafka_python.consumer_group.manifest import missing
from kafka_assignors.kafka_python.consumer_group.messages import ConsumerGroupHeartbeatResponse

ORDERS, PAYMENTS = uuid.UUID(int=1), uuid.UUID(int=2)
Response = ConsumerGroupHeartbeatResponse


class Names:
    """The cluster's topic-id -> name lookup, as metadata would fill it."""

    def __init__(self) -> None:
        self.names = {ORDERS: "orders", PAYMENTS: "payments"}
        self.updates = 0

    def topic_name_for_id(self, topic_id: uuid.UUID) -> str | None:
        return self.names.get(topic_id)

    def request_update(self) -> None:
        self.updates += 1

    def set_topics(self, topics: Any) -> None:
        pass

    def remove_listener(self, listener: Any) -> None:
        pass


class Recorder(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, calls: list[tuple[str, Any]]) -> None:
        self.calls = calls

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append(("revoked", sorted(revoked)))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append(("assigned", sorted(assigned)))

    def on_partitions_lost(self, lost: Any) -> None:
        self.calls.append(("lost", sorted(lost)))


def response(epoch: int, assignment: dict[uuid.UUID, list[int]] | None = None,
             error: int = 0) -> Any:
    tps = None if assignment is None else Response.Assignment(topic_partitions=[
        Response.Assignment.TopicPartitions(topic_id=t, partitions=ps)
        for t, ps in assignment.items()])
    return Response(throttle_time_ms=0, error_code=error, member_epoch=epoch,
                    heartbeat_interval_ms=1000, assignment=tps, version=1)


@pytest.fixture
def calls() -> list[tuple[str, Any]]:
    return []


@pytest.fixture
def consumer(calls: list[tuple[str, Any]]) -> Iterator[Any]:
    made = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(4, 0), group_id="g",
                         group_protocol="consumer", group_remote_assignor="balanced-sticky",
                         enable_auto_commit=True)
    made.subscribe(["orders", "payments"], listener=Recorder(calls))
    coordinator = made._coordinator
    cluster, coordinator._cluster = coordinator._cluster, Names()
    coordinator._follow_subscription()
    yield made
    coordinator._cluster = cluster
    coordinator.coordinator_unknown = lambda: True  # close sends nothing
    coordinator.coordinator_id = None
    made.close(autocommit=False)


def answer(consumer: Any, reply: Any) -> None:
    coordinator = consumer._coordinator
    with coordinator._lock:
        beat = coordinator._membership.heartbeat()
    coordinator._handle_consumer_heartbeat(reply, beat)


def state(consumer: Any) -> MemberState:
    found: MemberState = consumer._coordinator.member_state
    return found


def tps(*pairs: tuple[str, int]) -> list[TopicPartition]:
    return sorted(TopicPartition(t, p) for t, p in pairs)


def test_the_consumer_protocol_puts_the_member_class_on_the_coordinator(consumer: Any) -> None:
    coordinator = consumer._coordinator
    assert type(coordinator).__name__ == "ConsumerProtocolCoordinator"
    assert state(consumer) is MemberState.JOINING
    beat = coordinator._membership.heartbeat()
    assert (beat.member_epoch, beat.server_assignor, beat.topics) == (
        0, "balanced-sticky", frozenset({"orders", "payments"}))


def test_a_target_is_assigned_in_poll_and_acknowledged(consumer: Any,
                                                       calls: list[Any]) -> None:
    coordinator = consumer._coordinator
    answer(consumer, response(2, {ORDERS: [0, 1]}))
    assert state(consumer) is MemberState.RECONCILING
    assert coordinator.time_to_next_poll() == 0  # poll() soon: there is work
    coordinator._reconcile_if_needed()
    assert calls == [("assigned", tps(("orders", 0), ("orders", 1)))]
    assert sorted(consumer.assignment()) == tps(("orders", 0), ("orders", 1))
    assert state(consumer) is MemberState.ACKNOWLEDGING
    assert consumer.group_metadata().generation_id == 2


def test_only_what_moves_is_revoked_after_its_offsets_are_committed(consumer: Any,
                                                                     calls: list[Any]) -> None:
    coordinator = consumer._coordinator
    commits: list[Any] = []

    def commit(offsets: Any, *args: Any, **kwargs: Any) -> None:
        commits.append(dict(offsets))
        calls.append(("commit", sorted(offsets)))

    coordinator.commit_offsets_sync = commit
    answer(consumer, response(2, {ORDERS: [0, 1]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(2))  # the acknowledgement's answer
    consumer.seek(TopicPartition("orders", 0), 40)
    consumer.seek(TopicPartition("orders", 1), 7)
    answer(consumer, response(3, {ORDERS: [1], PAYMENTS: [0]}))
    coordinator._reconcile_if_needed()
    assert calls[1:] == [("commit", tps(("orders", 0))), ("revoked", tps(("orders", 0))),
                         ("assigned", tps(("payments", 0)))]
    assert commits[0][TopicPartition("orders", 0)].offset == 40
    kept = consumer._subscription.assignment[TopicPartition("orders", 1)]
    assert kept.position.offset == 7  # kept: its fetch state was never reset


def test_every_reconciliation_ends_with_on_partitions_assigned_as_in_java(
        consumer: Any, calls: list[Any]) -> None:
    """Java calls onPartitionsAssigned after each reconciliation, with the partitions added
    (maybe none): after a revocation only, and for an empty first target; never for an
    epoch bump that moves nothing (nothing is reconciled)."""
    coordinator = consumer._coordinator
    coordinator.commit_offsets_sync = lambda *args, **kwargs: None
    answer(consumer, response(2, {}))
    coordinator._reconcile_if_needed()
    assert calls == [("assigned", [])]
    answer(consumer, response(2))
    answer(consumer, response(3, {ORDERS: [0, 1]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(3))
    answer(consumer, response(4, {ORDERS: [1]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(4))
    answer(consumer, response(5, {ORDERS: [1]}))  # an epoch bump: nothing to reconcile
    coordinator._reconcile_if_needed()
    assert calls == [("assigned", []), ("assigned", tps(("orders", 0), ("orders", 1))),
                     ("revoked", tps(("orders", 0))), ("assigned", [])]
    assert state(consumer) is MemberState.STABLE


def test_unsubscribe_commits_then_revokes_everything_held_then_leaves(
        consumer: Any, calls: list[Any]) -> None:
    """As the Java consumer leaves on unsubscribe(): the consumed offsets committed, then
    on_partitions_revoked with every partition held, then the leave (epoch -1)."""
    coordinator = consumer._coordinator

    def commit(offsets: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(("commit", sorted(offsets)))

    coordinator.commit_offsets_sync = commit
    answer(consumer, response(2, {ORDERS: [0], PAYMENTS: [1]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(2))
    consumer.seek(TopicPartition("orders", 0), 12)
    consumer.seek(TopicPartition("payments", 1), 3)
    since = len(calls)
    consumer.unsubscribe()
    held = tps(("orders", 0), ("payments", 1))
    assert calls[since:] == [("commit", held), ("revoked", held)]
    assert consumer.assignment() == set()
    assert state(consumer) is MemberState.UNSUBSCRIBED


def test_close_commits_then_revokes_everything_held(consumer: Any, calls: list[Any]) -> None:
    coordinator = consumer._coordinator
    coordinator.commit_offsets_sync = lambda offsets, *a, **k: calls.append(
        ("commit", sorted(offsets)))
    answer(consumer, response(2, {ORDERS: [0]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(2))
    consumer.seek(TopicPartition("orders", 0), 5)
    since = len(calls)
    coordinator.coordinator_unknown = lambda: True  # the leave heartbeat is not sent
    consumer.close()
    assert calls[since:] == [("commit", tps(("orders", 0))), ("revoked", tps(("orders", 0)))]


def test_unsubscribe_of_a_fenced_member_reports_its_partitions_lost(
        consumer: Any, calls: list[Any]) -> None:
    coordinator = consumer._coordinator
    coordinator.commit_offsets_sync = lambda *a, **k: calls.append(("commit", []))
    answer(consumer, response(2, {ORDERS: [0]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(0, error=Errors.FencedMemberEpochError.errno))
    since = len(calls)
    consumer.unsubscribe()
    assert calls[since:] == [("lost", tps(("orders", 0)))]
    assert state(consumer) is MemberState.UNSUBSCRIBED


def test_a_listener_error_on_unsubscribe_is_raised_after_the_member_left(
        consumer: Any) -> None:
    class Failing(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Any) -> None:
            raise ValueError("boom")

        def on_partitions_assigned(self, assigned: Any) -> None:
            pass

    consumer._subscription.rebalance_listener = Failing()
    coordinator = consumer._coordinator
    coordinator.commit_offsets_sync = lambda *args, **kwargs: None
    answer(consumer, response(2, {ORDERS: [0]}))
    coordinator._reconcile_if_needed()
    with pytest.raises(Errors.KafkaError, match="rebalance callback"):
        consumer.unsubscribe()
    assert state(consumer) is MemberState.UNSUBSCRIBED and consumer.assignment() == set()


def test_a_topic_without_a_name_yet_asks_for_metadata_and_is_assigned_later(
        consumer: Any, calls: list[Any]) -> None:
    coordinator = consumer._coordinator
    names = coordinator._cluster
    del names.names[PAYMENTS]
    answer(consumer, response(2, {ORDERS: [0], PAYMENTS: [0]}))
    coordinator._reconcile_if_needed()
    assert names.updates == 1 and calls == [("assigned", tps(("orders", 0)))]
    answer(consumer, response(2))
    assert state(consumer) is MemberState.RECONCILING  # payments still to come
    names.names[PAYMENTS] = "payments"
    coordinator._reconcile_if_needed()
    assert calls[-1] == ("assigned", tps(("payments", 0)))


def test_a_fenced_member_loses_its_partitions_and_rejoins(consumer: Any,
                                                          calls: list[Any]) -> None:
    coordinator = consumer._coordinator
    answer(consumer, response(2, {ORDERS: [0]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(0, error=Errors.FencedMemberEpochError.errno))
    assert state(consumer) is MemberState.FENCED
    with pytest.raises(Errors.CommitFailedError, match="FENCED"):
        coordinator._member_fields()  # a fenced member's commit is refused
    coordinator._release_if_lost()
    assert calls[-1] == ("lost", tps(("orders", 0)))
    assert consumer.assignment() == set()
    assert state(consumer) is MemberState.JOINING
    assert coordinator._membership.heartbeat().member_epoch == 0


def test_an_error_the_member_cannot_recover_from_is_raised_by_poll(consumer: Any) -> None:
    coordinator = consumer._coordinator
    answer(consumer, response(0, error=Errors.UnsupportedAssignorError.errno))
    assert state(consumer) is MemberState.FATAL
    with pytest.raises(Errors.UnsupportedAssignorError):
        coordinator._raise_if_fatal()


def test_the_manifest_finds_every_name_on_kafka_python_and_names_what_is_missing(
        consumer: Any) -> None:
    assert missing(consumer._coordinator) == ()

    class Bare:
        pass

    found = missing(Bare())
    assert "ConsumerCoordinator._send_offset_commit_request" in found
    assert "ConsumerCoordinator.heartbeat.poll_timeout_expired" in found


def test_a_client_side_assignor_with_the_consumer_protocol_is_refused() -> None:
    with pytest.raises(Errors.KafkaConfigurationError, match="group_remote_assignor"):
        KafkaConsumer(bootstrap_servers="127.0.0.1:1", group_id="g",
                      group_protocol="consumer", partition_assignment_strategy=[object()])


def test_a_broker_without_kip_848_is_refused_before_anything_joins() -> None:
    with pytest.raises(ConsumerProtocolUnavailableError, match=r"KIP-848.*\(3\.6\)"):
        KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 6), group_id="g",
                      group_protocol="consumer")


def test_commit_offsets_carry_the_member_epoch(consumer: Any) -> None:
    coordinator = consumer._coordinator
    answer(consumer, response(6, {ORDERS: [0]}))
    assert coordinator._member_fields() == (coordinator._membership.member_id, 6)
    assert OffsetAndMetadata  # the commit request itself is exercised live


def test_rebalance_metrics_have_the_java_consumers_names(consumer: Any) -> None:
    """A join to STABLE is one rebalance with its latency and the listener's; a fence is a
    failed one; all in the consumer's own registry under consumer-coordinator-metrics."""
    from kafka_assignors.metrics import metrics_of

    coordinator = consumer._coordinator
    answer(consumer, response(2, {ORDERS: [0]}))
    coordinator._reconcile_if_needed()
    answer(consumer, response(2))  # the acknowledgement's answer: STABLE
    found = metrics_of(consumer)
    assert found is not None
    values = found.values()["consumer-coordinator-metrics"]
    assert values["rebalance-total"] == 1 and values["failed-rebalance-total"] == 0
    assert values["rebalance-latency-max"] >= 0
    assert values["partition-assigned-latency-max"] >= 0
    answer(consumer, response(0, error=Errors.UnknownMemberIdError.errno))
    assert found.values()["consumer-coordinator-metrics"]["failed-rebalance-total"] == 1
    own = consumer.metrics()["consumer-coordinator-metrics"]
    assert own["rebalance-total"] == 1


def test_a_broker_with_the_protocol_turned_off_is_named_by_the_first_poll(consumer: Any) -> None:
    """A broker that lists ConsumerGroupHeartbeat but refuses it (the consumer protocol
    turned off) fails the member before it joined, with the error that says why."""
    answer(consumer, response(0, error=Errors.UnsupportedVersionError.errno))
    assert state(consumer) is MemberState.FATAL
    with pytest.raises(ConsumerProtocolUnavailableError,
                       match=r"group\.coordinator\.rebalance\.protocols"):
        consumer._coordinator._raise_if_fatal()
