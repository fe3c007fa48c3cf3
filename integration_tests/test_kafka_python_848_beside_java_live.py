"""kafka-python members on the consumer group protocol beside Kafka's Java consumer on it, in
the same group on the real broker (``kafka_python_848_group.py`` with its Java members,
``java_848_member.py``): the rebalance listener is called as the Java member's is, and a
member killed while the group reconciles loses nothing and shares no partition.

Group sessions are 6 s and heartbeats 1 s apart (``_short_sessions``), so a crash is noticed
within seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .background_producer import BackgroundProducer
from .broker_view import describe
from .conftest import BrokerHandle
from .consumer_protocol_group import require_balanced_sticky
from .java_848_member import JavaMembers
from .kafka_python_848_group import KafkaPythonGroup
from .test_broker_assignor_live import _short_sessions
from .test_kafka_python_consumer_protocol_live import Calls

PARTITIONS = 6
ASSIGNOR = "balanced-sticky"


@pytest.fixture
def group(kafka_broker: BrokerHandle, unique_name: Callable[[str], str]
          ) -> Iterator[KafkaPythonGroup]:
    require_balanced_sticky(kafka_broker.bootstrap)
    made = KafkaPythonGroup(kafka_broker.bootstrap, unique_name("group"))
    _short_sessions(kafka_broker.bootstrap, made.group_id)
    yield made
    made.close_all()


def _java(group: KafkaPythonGroup) -> JavaMembers:
    assert group.java is not None
    return group.java


def _poll_until(group: KafkaPythonGroup, done: Callable[[], bool], what: str,
                timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        group.poll_round()


def _broker_says_stable(bootstrap: str, group_id: str) -> bool:
    from confluent_kafka.admin import AdminClient

    view = describe(AdminClient({"bootstrap.servers": bootstrap}), group_id)
    return not isinstance(view, str) and view.stable


def _no_loss_no_double_ownership(group: KafkaPythonGroup, producer: BackgroundProducer,
                                 topic: str) -> None:
    acked = {(topic, p, o) for p, o in producer.acked}
    group.drain(lambda: acked)
    assert not group.double_owned, f"held by two members at once: {group.double_owned[:5]}"
    crossed = group.double_owned_with_java()
    assert not crossed, f"held by a Java member and another at once: {crossed[:5]}"
    assert acked <= group.all_read(), f"{len(acked - group.all_read())} records never read"


def test_the_listener_is_called_as_the_java_consumer_calls_it_in_the_same_group(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
    tmp_path: Path,
) -> None:
    """A kafka-python member and a Java member, both on the consumer protocol, in one
    group under traffic.  A third member joins: each of the two gives up partitions with
    on_partitions_revoked followed by on_partitions_assigned with nothing new, the same
    calls on both.  Then the kafka-python member's unsubscribe() and the Java member's
    close() each give every partition held to on_partitions_revoked (after committing: no
    record is read twice by the next owner), and nothing is lost."""
    topic = make_topic(PARTITIONS)
    listener = Calls()
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=200,
                                  partitions=PARTITIONS)
    try:
        group.join("kp", [topic], group_remote_assignor=ASSIGNOR).subscribe(
            [topic], listener=listener)
        group.stable(PARTITIONS)
        group.join_java("java", topic, ASSIGNOR, tmp_path)
        group.stable(PARTITIONS)  # 3 each: a third member takes one of each
        java = _java(group)
        ours_since, java_since = len(listener.calls), len(java.calls_of("java"))
        group.join("kp-2", [topic], group_remote_assignor=ASSIGNOR)
        after = group.stable(PARTITIONS)
        _poll_until(group, lambda: len(java.calls_of("java")) >= java_since + 2,
                    "the Java member's two listener calls")
        ours, theirs = listener.calls[ours_since:], java.calls_of("java")[java_since:]
        for calls in (ours, theirs):
            assert [kind for kind, _ in calls] == ["revoked", "assigned"], (ours, theirs)
            assert calls[0][1] and calls[1][1] == frozenset(), (ours, theirs)

        since = len(listener.calls)
        group.members["kp"].unsubscribe()
        assert listener.calls[since:] == [("revoked", after["kp"])]
        group.close("kp")  # nothing held any more: no listener call
        assert listener.calls[since:] == [("revoked", after["kp"])]
        java_since = len(java.calls_of("java"))
        group.close("java")
        assert java.calls_of("java")[java_since:] == [("revoked", after["java"])]
        assert group.stable(PARTITIONS)["kp-2"] == {(topic, p) for p in range(PARTITIONS)}
    finally:
        producer.stop()
    _no_loss_no_double_ownership(group, producer, topic)
    assert group.read_twice() == 0
    assert not java.errors, java.errors


def test_a_member_killed_while_the_group_reconciles_loses_nothing_and_the_group_settles(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str], group: KafkaPythonGroup,
    tmp_path: Path,
) -> None:
    """A kafka-python member and a Java member (its revocation callback takes 5 s) on the
    consumer protocol, under traffic, 3 partitions each.  A second kafka-python member
    joins, so each gives one up; while the Java member is inside on_partitions_revoked (the
    group reconciling: not Stable), its JVM is killed (no commit, no leave).  The broker
    drops it when its session expires and the two kafka-python members share every
    partition: the group settles complete, no
    partition was ever held by two members at once (the Java member's included, up to the
    kill), and every acknowledged record is read."""
    topic = make_topic(PARTITIONS)
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, rate=200,
                                  partitions=PARTITIONS)
    try:
        group.join("kp-1", [topic], group_remote_assignor=ASSIGNOR)
        group.join_java("java", topic, ASSIGNOR, tmp_path, revoke_delay_ms=5000)
        before = group.stable(PARTITIONS)  # 3 each: a third member takes one of each
        java = _java(group)
        since = len(java.calls_of("java"))
        group.join("kp-2", [topic], group_remote_assignor=ASSIGNOR)
        _poll_until(group, lambda: any(kind == "revoked"
                                       for kind, _ in java.calls_of("java")[since:]),
                    "the Java member asked to give up partitions")
        assert not _broker_says_stable(kafka_broker.bootstrap, group.group_id), (
            "the group was not reconciling at the kill")
        java.kill()
        settled = group.stable(PARTITIONS, timeout=45)
        assert set(settled) == {"kp-1", "kp-2"}
        assert all(settled.values()) and before["java"], (before, settled)
    finally:
        producer.stop()
    _no_loss_no_double_ownership(group, producer, topic)
