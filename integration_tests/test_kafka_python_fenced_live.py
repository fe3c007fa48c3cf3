"""A static member fenced by a newer instance with the same ``group_instance_id`` stops, as
the Java consumer does (Kafka's system test ``fencing_static_consumer``): its next ``poll()``
raises ``FencedInstanceIdError`` within a session timeout, and the group goes on with every
partition owned once. Beside it, the same workload on kafka-python alone, whose fenced member
polls on (printed, not judged: that is kafka-python's behaviour to keep or change)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import kafka
import pytest
from kafka import errors as Errors

from kafka_assignors import BalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer

PARTITIONS = 4
SESSION_MS = 6_000
#: what the members are given: heartbeats every 0.5 s, no auto-commit (a fenced auto-commit
#: would make kafka-python's own poll raise too, on its next commit only)
CONFIG = {"session_timeout_ms": SESSION_MS, "heartbeat_interval_ms": 500,
          "enable_auto_commit": False, "auto_offset_reset": "earliest",
          "partition_assignment_strategy": [BalancedStickyAssignor]}


def _held(consumer: Any) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def _stable(consumer: Any) -> bool:
    return str(consumer._coordinator.state).strip("<>").upper() == "STABLE"


def _settle(members: list[Any], seconds: float) -> bool:
    """Poll every member until they are stable and own each partition once."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for member in members:
            member.poll(timeout_ms=100)
        held = [_held(m) for m in members]
        if (all(_stable(m) for m in members) and sum(map(len, held)) == PARTITIONS
                and set().union(*held) == set(range(PARTITIONS))):
            return True
    return False


def _run(cls: Any, bootstrap: str, topic: str, group: str,
         form_s: float) -> tuple[float | None, list[Any]]:
    """Members ``first`` (static-1) and ``other`` (static-2) form the group; ``newer`` joins as
    static-1. Returns how long after ``newer`` was built ``first``'s poll raised (None if it
    did not within a session timeout and a half) and the members left (two if the group did
    not form within ``form_s``)."""
    def member(instance: str) -> Any:
        return cls(topic, bootstrap_servers=bootstrap, group_id=group,
                   group_instance_id=instance, **CONFIG)

    first, other = member("static-1"), member("static-2")
    members = [first, other]
    try:
        if not _settle(members, form_s):
            return None, members
        newer = member("static-1")
        members.append(newer)
        started = time.monotonic()
        raised_after: float | None = None
        deadline = started + 1.5 * SESSION_MS / 1000
        while time.monotonic() < deadline and raised_after is None:
            newer.poll(timeout_ms=100)
            other.poll(timeout_ms=100)
            try:
                first.poll(timeout_ms=100)
            except Errors.FencedInstanceIdError:
                raised_after = time.monotonic() - started
        return raised_after, members
    except BaseException:
        for m in members:
            m.close(autocommit=False)
        raise


@pytest.mark.timeout(240)
def test_a_fenced_static_member_poll_raises_and_the_group_goes_on(
    kafka_broker: Any, make_topic: Callable[..., str], unique_name: Callable[[str], str],
) -> None:
    topic = make_topic(PARTITIONS)
    raised_after, members = _run(KafkaConsumer, kafka_broker.bootstrap, topic,
                                 unique_name("group"), 60)
    if len(members) < 3:
        for m in members:
            m.close(autocommit=False)
        pytest.fail("the group did not form")
    first, other, newer = members
    try:
        assert raised_after is not None and raised_after < SESSION_MS / 1000, (
            f"the fenced member's poll did not raise within {SESSION_MS} ms")
        with pytest.raises(Errors.FencedInstanceIdError):
            first.poll(timeout_ms=0)  # and it stays stopped
        assert _settle([other, newer], 30), (
            f"not every partition owned once: {_held(other)} {_held(newer)}")
        print(f"runtime: the fenced member's poll raised {raised_after:.2f} s after the newer "
              "instance was built")
    finally:
        for m in (first, other, newer):
            m.close(autocommit=False)

    plain_topic = make_topic(PARTITIONS)
    plain_raised, plain_members = _run(kafka.KafkaConsumer, kafka_broker.bootstrap, plain_topic,
                                       unique_name("group"), 30)
    for m in plain_members:
        m.close(autocommit=False)
    if len(plain_members) < 3:  # kafka-python 3.0.x alone can hang in a join (upstream.md#1)
        print("kafka-python alone: the group did not form within 30 s")
    else:
        print("kafka-python alone: the fenced member's poll "
              + (f"raised after {plain_raised:.2f} s" if plain_raised is not None
                 else f"did not raise within {1.5 * SESSION_MS / 1000:.0f} s (it polls on)"))
