"""Rebalance and assignment metrics of a bridged confluent-kafka consumer, live.

The observed member runs in this process, set up as ``docs/confluent.md`` tells users
(``kafka_assignors.confluent.Consumer`` with ``on_assign``/``on_revoke``/``on_lost``, read
with ``consumer.metrics()``); the other members are ``confluent_member.py`` processes.
The group goes through the first join, a member joining, that member crashing
(SIGKILL), another joining and leaving cleanly, the observed member stalling past
``max.poll.interval.ms`` (it leaves; its partitions are lost, ``on_lost``; it rejoins as a
new member), and a subscription change, once with the cooperative protocol (the bridge's
default) and once eager.  The observed member is the
first, so it leads throughout.

What the test observes itself (:mod:`.wire_witness`): the membership client's
JoinGroup/SyncGroup exchanges on its connection (a spy on kafka-python's network manager,
below every wrapper of ours) and the callbacks, timed by themselves.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .child_members import ChildMembers
from .conftest import BrokerHandle
from .wire_witness import (
    COORD,
    JOIN_GROUP,
    MEMBER_ID_REQUIRED,
    QUALITY,
    SYNC_GROUP,
    TP,
    Call,
    Exchange,
    Expectations,
    Observed,
    Step,
)

MEMBER = Path(__file__).with_name("confluent_member.py")
STEP_TIMEOUT_S = 60.0
MAX_POLL_MS = 4000
pytestmark = pytest.mark.timeout(300)


def spy_on_wire(membership_client: Any, seen: Observed) -> None:
    """Record the membership client's JoinGroup/SyncGroup exchanges as it sends them."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    manager = membership_client._coordinator._manager
    send = manager.send

    def decode(value: Any) -> frozenset[TP]:
        assignment = value if hasattr(value, "partitions") else \
            ConsumerProtocolAssignment.decode(value)
        return frozenset((tp.topic, tp.partition) for tp in assignment.partitions())

    def spying_send(request: Any, *args: Any, **kwargs: Any) -> Any:
        api_key = getattr(request, "API_KEY", None)
        if api_key not in (JOIN_GROUP, SYNC_GROUP):
            return send(request, *args, **kwargs)
        exchange = Exchange(api_key, time.monotonic())
        assignments = list(getattr(request, "assignments", None) or ())
        if api_key == SYNC_GROUP and assignments:
            exchange.assignment = {}
            for item in assignments:
                member, value = (item.member_id, item.assignment) \
                    if hasattr(item, "member_id") else item
                exchange.assignment[member] = decode(value)

        def answered(response: Any) -> None:
            exchange.received = time.monotonic()
            exchange.error = int(response.error_code)

        def failed(_exc: Any) -> None:
            exchange.raised = True

        seen.exchanges.append(exchange)
        future = send(request, *args, **kwargs)
        future.add_callback(answered)
        future.add_errback(failed)
        return future

    manager.send = spying_send


def callbacks(seen: Observed) -> dict[str, Callable[[Any, list[Any]], None]]:
    """The user's rebalance callbacks: each takes a little time, as real ones do."""

    def timed(kind: str) -> Callable[[Any, list[Any]], None]:
        def callback(_consumer: Any, partitions: list[Any]) -> None:
            start = time.monotonic()
            time.sleep(0.02)
            seen.calls.append(Call(kind, start, time.monotonic(),
                                   frozenset((tp.topic, tp.partition) for tp in partitions)))
        return callback

    return {"on_assign": timed("assigned"), "on_revoke": timed("revoked"),
            "on_lost": timed("lost")}


def run_scenario(bootstrap: str, group: str, strategy: str, topic: str, topic2: str,
                 others: ChildMembers) -> tuple[list[Step], Observed, list[frozenset[TP]]]:
    from kafka.structs import MemberState

    from kafka_assignors.confluent import Consumer

    seen = Observed()
    consumer: Any = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": "observed",
        "partition.assignment.strategy": strategy, "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
        "metadata.max.age.ms": 5000, "max.poll.interval.ms": MAX_POLL_MS,
    })
    assert consumer.metrics()[COORD]["rebalance-total"] == 0
    client = consumer._membership.client  # test-only: the membership client's connection
    spy_on_wire(client, seen)
    cbs = callbacks(seen)
    consumer.subscribe([topic], **cbs)
    steps: list[Step] = []
    held: list[frozenset[TP]] = []  # what the observed member held after each step

    def mine() -> frozenset[TP]:
        return frozenset((tp.topic, tp.partition) for tp in consumer.assignment())

    def settled_with(count: int) -> bool:
        return (len(mine()) == count and not consumer._steps
                and client.group_metadata().state == MemberState.STABLE
                and not client._coordinator.need_rejoin())

    def child_holds(name: str, count: int) -> Callable[[], bool]:
        def check() -> bool:
            states = [e for e in others.events(name) if e["event"] == "state"]
            return bool(states) and states[-1]["state"] == str(MemberState.STABLE) and \
                len(states[-1]["assignment"]) == count
        return check

    def step(name: str, action: Callable[[], Any], count: int, partitions: int,
             *extra: Callable[[], bool]) -> None:
        n_ex, n_calls = len(seen.exchanges), len(seen.calls)
        trigger = time.monotonic()
        action()
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not (settled_with(count) and all(c() for c in extra)):
            assert time.monotonic() < deadline, (name, seen.calls[n_calls:])
            for other in others.live():
                assert others.members[other].proc.poll() is None, others.log_tail(other)
            consumer.poll(0.05)  # callbacks run in here, on this thread
        values = consumer.metrics()
        read = time.monotonic()  # after the read: every bound taken from it is an upper one
        steps.append(Step(name, trigger, seen.exchanges[n_ex:], seen.calls[n_calls:], read,
                          values, Observed(list(seen.exchanges), list(seen.calls)),
                          partitions))
        held.append(mine())

    try:
        step("first join", lambda: None, 6, 6)
        step("b joins", lambda: others.add("b"), 3, 6, child_holds("b", 3))
        step("b crashes", lambda: others.kill("b"), 6, 6)
        step("c joins", lambda: others.add("c"), 3, 6, child_holds("c", 3))
        step("c leaves", lambda: others.stop("c"), 6, 6)
        # no poll() for longer than max.poll.interval.ms: the member leaves the group
        step("stall", lambda: time.sleep(MAX_POLL_MS / 1000 + 1.5), 6, 6)
        step("subscription change", lambda: consumer.subscribe([topic, topic2], **cbs),
             10, 10)
    finally:
        consumer.close()
    return steps, seen, held


@pytest.mark.parametrize("strategy", ["cooperative-balanced-sticky", "balanced-sticky"])
def test_bridge_metrics_through_joins_a_crash_a_leave_and_a_subscription_change(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str], strategy: str,
) -> None:
    """Java's rebalance counters equal the membership client's exchanges on the wire,
    latencies lie within the test's own clock, and the leader's and member's figures match
    what was sent and what the callbacks saw."""
    topic, topic2 = make_topic(6), make_topic(4)
    group = unique_name("group")
    others = ChildMembers(MEMBER, {"bootstrap": kafka_broker.bootstrap, "group": group,
                                   "topic": topic, "strategy": strategy})
    try:
        steps, seen, held = run_scenario(kafka_broker.bootstrap, group, strategy, topic,
                                         topic2, others)
    finally:
        others.close()

    # a new dynamic member's first JoinGroup is answered MEMBER_ID_REQUIRED: Java counts
    # it as a failed rebalance, and so do we
    joins = [e.error for e in seen.exchanges if e.api_key == JOIN_GROUP]
    assert MEMBER_ID_REQUIRED in joins, seen.exchanges
    cooperative = strategy.startswith("cooperative")
    expect = Expectations(assigned_each_rebalance=not cooperative)
    for one in steps:
        expect.check(one)
    if cooperative:
        assert expect.withheld_seen > 0  # a first round left partitions for the second

    stall = next(one for one in steps if one.name == "stall")
    assert [c.kind for c in stall.calls] == ["lost", "assigned"], stall.calls
    for i, one in enumerate(steps):
        pause = one.values[QUALITY]["kept-partition-pause-seconds-last"]
        if i == 0:
            assert math.isnan(pause)  # nothing held before the first join
            continue
        if one is stall:  # lost, then assigned again: nothing was kept, nothing recorded
            before = steps[i - 1].values[QUALITY]["kept-partition-pause-seconds-last"]
            assert pause == before
            continue
        assert held[i - 1] & held[i], one.name  # every later step keeps some partitions
        if cooperative:
            # librdkafka kept fetching them; the application's poll() ran this step's
            # callbacks (and a revocation's commit) meanwhile
            last = one.calls[-1]
            assert last.end - last.start <= pause <= one.read - one.trigger, one.name
            continue
        revoked = [c for c in one.calls if c.kind == "revoked"][-1]
        assigned = [c for c in one.calls if c.kind == "assigned"][-1]
        join_after = min(e.sent for e in one.exchanges
                         if e.api_key == JOIN_GROUP and e.sent >= revoked.end)
        # out of librdkafka's assignment from after on_revoke (before the JoinGroup) until
        # after on_assign
        assert assigned.end - join_after <= pause <= one.read - revoked.end, one.name
