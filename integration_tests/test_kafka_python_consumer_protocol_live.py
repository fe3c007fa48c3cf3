"""kafka-python members on the consumer group protocol (KIP-848), against the real broker.

``kafka_assignors.kafka_python.KafkaConsumer(..., group_protocol="consumer")``: the broker
assigns (our ``balanced-sticky`` plugin, or Kafka's ``uniform``), the member reconciles in
``poll()``.  Groups are waited for by the broker's Stable state and every member's own view
(``kafka_python_848_group.py``); the group's session is 6 s and heartbeats 1 s apart (group
configs the test broker allows), so a member's changes show within seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import ConsumerRebalanceListener

from .background_producer import BackgroundProducer
from .broker_view import describe
from .conftest import BrokerHandle
from .consumer_protocol_group import require_balanced_sticky
from .kafka_python_848_group import TP, KafkaPythonGroup
from .test_broker_assignor_live import SESSION_MS, _short_sessions

PARTITIONS = 6


class Calls(ConsumerRebalanceListener):  # type: ignore[misc]
    """The listener calls of one member, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, frozenset[TP]]] = []

    def _add(self, kind: str, tps: Any) -> None:
        self.calls.append((kind, frozenset((tp.topic, tp.partition) for tp in tps)))

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._add("revoked", revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._add("assigned", assigned)

    def on_partitions_lost(self, lost: Any) -> None:
        self._add("lost", lost)

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


@pytest.fixture
def group(kafka_broker: BrokerHandle, unique_name: Callable[[str], str]
          ) -> Iterator[KafkaPythonGroup]:
    made = KafkaPythonGroup(kafka_broker.bootstrap, unique_name("group"))
    _short_sessions(kafka_broker.bootstrap, made.group_id)
    yield made
    made.close_all()


def _members_on_broker(bootstrap: str, group_id: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for _ in range(20):  # only a coordinator still loading makes describe fail
        view = describe(admin, group_id)
        if not isinstance(view, str):
            return set(view.members)
        time.sleep(0.5)
    pytest.fail(f"cannot describe group {group_id}")


@pytest.mark.parametrize("assignor", ["balanced-sticky", "uniform"])
def test_members_join_and_leave_under_traffic_with_nothing_lost_or_read_twice(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
    assignor: str,
) -> None:
    """Two members, a third joins, one closes, records flowing all along: every stable
    assignment is complete and disjoint and names the assignor asked for, no partition is
    ever held by two members, the member that keeps partitions reads them while the group
    reconciles, a closed member is gone from the group at once, and every acknowledged
    record is read exactly once."""
    if assignor == "balanced-sticky":
        require_balanced_sticky(kafka_broker.bootstrap)
    topic = make_topic(PARTITIONS)
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=200,
                                  partitions=PARTITIONS)
    try:
        for name in ("m1", "m2"):
            group.join(name, [topic], group_remote_assignor=assignor)
        before = group.stable(PARTITIONS)
        from confluent_kafka.admin import AdminClient

        view = describe(AdminClient({"bootstrap.servers": kafka_broker.bootstrap}),
                        group.group_id)
        assert not isinstance(view, str) and view.group_type == "CONSUMER"
        assert view.assignor == assignor

        start = time.monotonic()
        group.join("m3", [topic], group_remote_assignor=assignor)
        after = group.stable(PARTITIONS)
        end = time.monotonic()
        kept = before["m1"] & after["m1"]
        read_while_reconciling = {tp for at, tp in group.reads["m1"].by_partition_at
                                  if start <= at < end and tp in kept}
        assert kept and read_while_reconciling, (
            f"m1 kept {sorted(kept)} but read none of them while the group reconciled")

        group.close("m2")
        assert "m2" not in _members_on_broker(kafka_broker.bootstrap, group.group_id)
        group.stable(PARTITIONS)
    finally:
        producer.stop()
    acked = {(topic, p, o) for p, o in producer.acked}
    group.drain(lambda: acked)
    assert not group.double_owned, f"held by two members at once: {group.double_owned[:5]}"
    assert acked <= group.all_read(), f"{len(acked - group.all_read())} records never read"
    assert group.read_twice() == 0


def test_a_fenced_member_loses_its_partitions_and_rejoins_at_epoch_0(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
) -> None:
    """A member whose epoch the broker does not know (FENCED_MEMBER_EPOCH) gives up its
    partitions through on_partitions_lost, never on_partitions_revoked, and joins again;
    the group is whole afterwards."""
    topic = make_topic(PARTITIONS)
    listener = Calls()
    group.join("m1", [topic]).subscribe([topic], listener=listener)
    group.join("m2", [topic])
    held = group.stable(PARTITIONS)["m1"]
    coordinator = group.members["m1"]._coordinator
    since = len(listener.calls)
    with coordinator._lock:
        coordinator._membership.member_epoch += 7  # an epoch the broker never gave
    coordinator._heartbeat_wakeup.notify()
    deadline = time.monotonic() + 20
    while "lost" not in listener.kinds() and time.monotonic() < deadline:
        group.poll_round()
    assert ("lost", held) in listener.calls[since:], listener.calls
    assert "revoked" not in listener.kinds()[since:]
    group.stable(PARTITIONS)


def test_a_member_that_stops_polling_leaves_then_rejoins(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
) -> None:
    """No poll() for max_poll_interval_ms: the member leaves (its partitions go to the
    other at once, well before the session would expire), and its next poll() reports them
    lost and rejoins, as the Java consumer does."""
    topic = make_topic(PARTITIONS)
    listener = Calls()
    group.join("m1", [topic], max_poll_interval_ms=3000).subscribe([topic], listener=listener)
    group.join("m2", [topic])
    held = group.stable(PARTITIONS)["m1"]
    since = len(listener.calls)
    group.held.pop("m1")
    assert group.stable(PARTITIONS, skip=frozenset({"m1"}))["m2"] == {
        (topic, p) for p in range(PARTITIONS)}
    group.poll_round()
    assert listener.calls[since:since + 1] == [("lost", held)], listener.calls
    group.stable(PARTITIONS)


def test_subscribe_right_after_unsubscribe_rejoins_with_the_same_member_id(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
) -> None:
    """unsubscribe() releases everything (on_partitions_revoked with all it held) and leaves;
    subscribe() straight after joins again at epoch 0 with the same member id (the Java
    consumer keeps its id for the consumer's life, KIP-1082), and the group settles with the
    member holding partitions again."""
    topic = make_topic(PARTITIONS)
    listener = Calls()
    m1 = group.join("m1", [topic])
    m1.subscribe([topic], listener=listener)
    group.join("m2", [topic])
    held = group.stable(PARTITIONS)["m1"]
    member_id = m1._coordinator._membership.member_id
    since = len(listener.calls)
    m1.unsubscribe()
    assert listener.calls[since:] == [("revoked", held)], listener.calls
    assert m1.assignment() == set()
    m1.subscribe([topic], listener=listener)
    after = group.stable(PARTITIONS)
    assert after["m1"] and after["m2"]
    assert m1._coordinator._membership.member_id == member_id
    assert listener.kinds()[since + 1:] and listener.kinds()[since + 1] == "assigned"
    assert _members_on_broker(kafka_broker.bootstrap, group.group_id) == {"m1", "m2"}


def test_a_static_member_keeps_its_partitions_across_a_restart(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
) -> None:
    """A static member (group_instance_id) closes with epoch -2: the broker keeps it and
    its partitions; the same instance started again gets the same partitions back and the
    other member's never changed."""
    topic = make_topic(PARTITIONS)
    group.join("s1", [topic], group_instance_id="instance-1")
    group.join("m2", [topic])
    before = group.stable(PARTITIONS)
    group.close("s1")
    assert "s1" in _members_on_broker(kafka_broker.bootstrap, group.group_id)
    restart_by = time.monotonic() + SESSION_MS / 1000 / 2
    while time.monotonic() < restart_by:
        group.poll_round()
        assert group.held["m2"] == before["m2"]
    group.join("s1", [topic], group_instance_id="instance-1")
    assert group.stable(PARTITIONS) == before


def test_explain_shows_a_group_of_kafka_python_members_on_the_broker_plugin(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``kafka-assignors explain`` on a KIP-848 group of kafka-python members assigned by
    balanced-sticky: the broker's assignor, the epochs, each member with its epoch, rack,
    subscription and the assignment it holds itself, and the lag after its commits."""
    import json

    from kafka_assignors.cli import main

    require_balanced_sticky(kafka_broker.bootstrap)
    topic = make_topic(PARTITIONS)
    for name, rack in (("m1", "r1"), ("m2", "r2")):
        group.join(name, [topic], group_remote_assignor="balanced-sticky", client_rack=rack)
    own = group.stable(PARTITIONS)
    for consumer in group.members.values():
        consumer.commit()
    code = main(["explain", "--bootstrap", kafka_broker.bootstrap, "--group", group.group_id,
                 "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["group_type"] == "consumer" and doc["strategy"] == "balanced-sticky"
    assert doc["state"] == "Stable" and doc["group_epoch"] == doc["assignment_epoch"] > 0
    by_client = {m["client_id"]: m for m in doc["members"]}
    assert set(by_client) == {"m1", "m2"}
    for name, held in own.items():
        member = by_client[name]
        coordinator = group.members[name]._coordinator
        assert member["member_id"] == coordinator._membership.member_id
        assert member["member_epoch"] == coordinator._membership.member_epoch > 0
        assert member["member_type"] == "consumer" and member["topics"] == [topic]
        assert member["rack"] == {"m1": "r1", "m2": "r2"}[name]
        assert member["assignment"] == member["target_assignment"] == {
            topic: sorted(p for _, p in held)}
    assert doc["unassigned"] == [] and doc["total_lag"] == 0
    assert main(["explain", "--bootstrap", kafka_broker.bootstrap,
                 "--group", group.group_id]) == 0
    assert "assignor   balanced-sticky (on the broker)" in capsys.readouterr().out


@pytest.mark.parametrize("assignor", ["balanced-sticky", "uniform"])
def test_a_mixed_group_of_kafka_python_java_confluent_and_classic_members(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
    assignor: str, tmp_path: Path,
) -> None:
    """One group: a kafka-python member on the consumer protocol, a classic kafka-python
    member (the broker's mixed group), a confluent-kafka member with group.protocol=consumer
    and Kafka's Java consumer with group.protocol=consumer, joining and leaving one by one
    under traffic: every stable assignment is complete, no partition is held twice (within
    the Python process by snapshots, against the Java member by the moments it provably held
    its partitions), the group stays a consumer-protocol group on the assignor asked for,
    and every acknowledged record is read."""
    from confluent_kafka.admin import AdminClient

    from kafka_assignors import CooperativeBalancedStickyAssignor

    if assignor == "balanced-sticky":
        require_balanced_sticky(kafka_broker.bootstrap)
    topic = make_topic(PARTITIONS)
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=200,
                                  partitions=PARTITIONS)
    try:
        group.join("kp-848", [topic], group_remote_assignor=assignor)
        group.stable(PARTITIONS)
        group.join("kp-classic", [topic], group_protocol="classic",
                   partition_assignment_strategy=[CooperativeBalancedStickyAssignor])
        group.stable(PARTITIONS)
        group.join_confluent("cf-848", [topic], **{"group.remote.assignor": assignor})
        group.stable(PARTITIONS)
        group.join_java("java-848", topic, assignor, tmp_path)
        together = group.stable(PARTITIONS)
        assert set(together) == {"kp-848", "kp-classic", "cf-848", "java-848"}
        assert all(together.values()), f"a member with nothing among four: {together}"
        view = describe(admin, group.group_id)
        assert not isinstance(view, str)
        assert (view.group_type, view.assignor) == ("CONSUMER", assignor)
        group.close("kp-classic")
        group.stable(PARTITIONS)
        group.close("java-848")
        group.stable(PARTITIONS)
        group.close("cf-848")
        assert group.stable(PARTITIONS)["kp-848"] == {(topic, p) for p in range(PARTITIONS)}
    finally:
        producer.stop()
    acked = {(topic, p, o) for p, o in producer.acked}
    group.drain(lambda: acked)
    assert not group.double_owned, f"held by two members at once: {group.double_owned[:5]}"
    crossed = group.double_owned_with_java()
    assert not crossed, f"held by the Java member and another at once: {crossed[:5]}"
    assert group.java is not None and group.java.read().get("java-848"), "Java read nothing"
    assert not group.java.errors, group.java.errors
    assert acked <= group.all_read(), f"{len(acked - group.all_read())} records never read"


def test_online_migration_classic_to_consumer_and_back_member_by_member(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
) -> None:
    """A group of three classic kafka-python members is restarted one member at a time on
    the consumer protocol (the broker turns it into a consumer-protocol group with the
    first), then one at a time back on the classic protocol (a classic group again once the
    last consumer-protocol member left), records flowing all along: every step settles
    complete, no partition is ever held twice, every acknowledged record is read."""
    from confluent_kafka.admin import AdminClient

    from kafka_assignors import CooperativeBalancedStickyAssignor

    require_balanced_sticky(kafka_broker.bootstrap)
    topic = make_topic(PARTITIONS)
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    classic = {"group_protocol": "classic",
               "partition_assignment_strategy": [CooperativeBalancedStickyAssignor]}
    consumer = {"group_protocol": "consumer", "group_remote_assignor": "balanced-sticky"}
    names = ("m1", "m2", "m3")
    types: list[str] = []
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=200,
                                  partitions=PARTITIONS)
    try:
        for name in names:
            group.join(name, [topic], **classic)
        group.stable(PARTITIONS)
        for options in (consumer, classic):
            for name in names:
                group.close(name)
                group.join(name, [topic], **options)
                group.stable(PARTITIONS)
                view = describe(admin, group.group_id)
                types.append("?" if isinstance(view, str) else view.group_type)
    finally:
        producer.stop()
    assert types == ["CONSUMER"] * 5 + ["CLASSIC"], types
    acked = {(topic, p, o) for p, o in producer.acked}
    group.drain(lambda: acked)
    assert not group.double_owned, f"held by two members at once: {group.double_owned[:5]}"
    assert acked <= group.all_read(), f"{len(acked - group.all_read())} records never read"


def test_a_broker_with_the_consumer_protocol_turned_off_is_named_before_anything_joins(
    kafka_broker: BrokerHandle, unique_name: Callable[[str], str],
) -> None:
    """A broker started with group.coordinator.rebalance.protocols=classic lists
    ConsumerGroupHeartbeat but refuses it: the member's first poll() raises
    ConsumerProtocolUnavailableError saying what the broker lacks, and the group never had
    a member."""
    from kafka_assignors.embedded import start_single_broker
    from kafka_assignors.kafka_python import KafkaConsumer
    from kafka_assignors.kafka_python.consumer_group import ConsumerProtocolUnavailableError

    if kafka_broker.byo:
        pytest.skip("starts a broker of its own (not in bring-your-own-cluster mode)")
    cluster = start_single_broker(
        extra_env={"KAFKA_GROUP_COORDINATOR_REBALANCE_PROTOCOLS": "classic"})
    try:
        consumer = KafkaConsumer("orders", bootstrap_servers=cluster.bootstrap,
                                 group_id=unique_name("group"), group_protocol="consumer")
        try:
            with pytest.raises(ConsumerProtocolUnavailableError,
                               match=r"rebalance\.protocols"):
                for _ in range(100):  # bounded: the first heartbeat's answer ends it
                    consumer.poll(timeout_ms=200)
            assert consumer.assignment() == set()
        finally:
            consumer.close(autocommit=False)
    finally:
        cluster.close()


def test_a_pattern_subscription_is_resolved_by_the_broker(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
) -> None:
    """subscribe(pattern=...) sends the pattern to the broker (SubscribedTopicRegex), which
    resolves it: two members share the partitions of both matching topics and none of the
    topic that does not match."""
    a, b = make_topic(3), make_topic(2)
    prefix = a.rsplit("-", 1)[0]
    assert b.startswith(prefix)
    other = make_topic(2)  # its name has the same slug: a pattern on a's full stem excludes it
    pattern = f"{prefix}-({a.rsplit('-', 1)[1]}|{b.rsplit('-', 1)[1]})"
    for name in ("m1", "m2"):
        group.join(name, []).subscribe(pattern=pattern)
    held = group.stable(5)
    topics = {t for tps in held.values() for t, _ in tps}
    assert topics == {a, b} and other not in topics
    assert group.members["m1"]._coordinator._membership.regex == pattern  # sent as a regex
