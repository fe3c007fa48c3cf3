"""Rebalance and assignment metrics of an aiokafka consumer with our assignor, live.

The observed member runs in this process, set up as the aiokafka docs tell users
(``partition_assignment_strategy=(BalancedStickyAssignor(),)`` on aiokafka's consumer, or
``kafka_assignors.aiokafka.AIOKafkaConsumer`` with ``CooperativeBalancedStickyAssignor()``;
``instrument(consumer)``, read with ``kafka_assignors.aiokafka.metrics(consumer)``); the other
members are ``aiokafka_member.py`` processes of the same kind.  The group goes through the
first join, a member joining, that member crashing (SIGKILL), another joining and leaving
cleanly, and a subscription change.  The observed member is the first one, so it leads throughout.

What the test observes itself, to check the metrics against: every JoinGroup and
SyncGroup exchange of the observed member on its client connection (a spy on
``AIOKafkaClient.send``, below the wrapped coordinator): times, error codes and the
assignment the leader sent; its listener's calls, timed by the listener.  Counters must
equal what was observed; latencies must lie between what the test's own clock bounds.
"""

from __future__ import annotations

import asyncio
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

MEMBER = Path(__file__).with_name("aiokafka_member.py")
SESSION_MS = 6_000
STEP_TIMEOUT_S = 60.0
pytestmark = pytest.mark.timeout(300)


def spy_on_wire(consumer: Any, seen: Observed) -> None:
    """Record the consumer's JoinGroup/SyncGroup exchanges as its client sends them."""
    from aiokafka.protocol.group import MemberAssignment

    client = consumer._client
    send = client.send

    async def spying_send(*args: Any, **kwargs: Any) -> Any:
        request = args[1] if len(args) > 1 else kwargs.get("request")
        api_key = getattr(request, "API_KEY", None)
        if api_key not in (JOIN_GROUP, SYNC_GROUP):
            return await send(*args, **kwargs)
        exchange = Exchange(api_key, time.monotonic())
        # (aiokafka 0.13+: a request builder; 0.12: the versioned struct itself)
        raw = getattr(request, "_group_assignment", None) or getattr(
            request, "group_assignment", None)
        if api_key == SYNC_GROUP and raw:
            exchange.assignment = {
                member: frozenset((t, p) for t, ps in MemberAssignment.decode(data).assignment
                                  for p in ps)
                for member, data in raw}
        seen.exchanges.append(exchange)
        try:
            response = await send(*args, **kwargs)
        except BaseException:
            exchange.raised = True
            raise
        exchange.received = time.monotonic()
        exchange.error = int(response.error_code)
        return response

    client.send = spying_send


def make_listener(seen: Observed) -> Any:
    from aiokafka.abc import ConsumerRebalanceListener

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        """Takes a little time in each call, as real listeners do (commits, flushes)."""

        async def on_partitions_revoked(self, revoked: Any) -> None:
            start = time.monotonic()
            await asyncio.sleep(0.05)
            seen.calls.append(Call("revoked", start, time.monotonic(), _tps(revoked)))

        def on_partitions_assigned(self, assigned: Any) -> None:
            start = time.monotonic()
            time.sleep(0.02)
            seen.calls.append(Call("assigned", start, time.monotonic(), _tps(assigned)))

    return Listener()


def _tps(tps: Any) -> frozenset[TP]:
    return frozenset((tp.topic, tp.partition) for tp in tps)


async def run_scenario(bootstrap: str, group: str, topic: str, topic2: str,
                       others: ChildMembers, cooperative: bool,
                       ) -> tuple[list[Step], Observed, dict[str, frozenset[Any]]]:
    """The steps, what was observed, and per step the partitions this member kept through
    it (held before the trigger and when settled)."""
    from aiokafka import AIOKafkaConsumer

    import kafka_assignors.aiokafka as kaa
    from kafka_assignors.metrics import instrument

    seen = Observed()
    consumer_class = kaa.AIOKafkaConsumer if cooperative else AIOKafkaConsumer
    assignor = (kaa.CooperativeBalancedStickyAssignor() if cooperative
                else kaa.BalancedStickyAssignor())
    consumer = consumer_class(
        bootstrap_servers=bootstrap, group_id=group, client_id="observed",
        partition_assignment_strategy=(assignor,),
        session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500,
        metadata_max_age_ms=5_000, auto_offset_reset="earliest",
    )
    instrument(consumer)  # the metrics, explicitly (docs/runtime.md); before start() is fine
    assert kaa.metrics(consumer)[COORD]["rebalance-total"] == 0  # before start(): empty
    spy_on_wire(consumer, seen)
    listener = make_listener(seen)
    consumer.subscribe([topic], listener=listener)
    steps: list[Step] = []
    kept: dict[str, frozenset[Any]] = {}
    stop = asyncio.Event()

    async def consume() -> None:
        while not stop.is_set():
            await consumer.getmany(timeout_ms=100)

    async def step(name: str, action: Callable[[], Any], settled: Callable[[], bool],
                   partitions: int) -> None:
        n_ex, n_calls = len(seen.exchanges), len(seen.calls)
        held = frozenset(consumer._subscription.assigned_partitions())
        trigger = time.monotonic()
        result = action()
        if asyncio.iscoroutine(result):
            await result
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not settled():
            assert time.monotonic() < deadline, (name, seen.calls[n_calls:])
            for other in others.live():
                assert others.members[other].proc.poll() is None, others.log_tail(other)
            await asyncio.sleep(0.05)
        # settled: this member and the others hold what they should; read at once (one loop,
        # so nothing is recorded between the last observation and this read)
        values = kaa.metrics(consumer)
        read = time.monotonic()  # after the read: every bound taken from it is an upper one
        kept[name] = held & frozenset(consumer._subscription.assigned_partitions())
        steps.append(Step(name, trigger, seen.exchanges[n_ex:], seen.calls[n_calls:], read,
                          values, Observed(list(seen.exchanges), list(seen.calls)),
                          partitions))

    def holds(count: int, since: int) -> Callable[[], bool]:
        """This member holds ``count`` partitions, took up every SyncGroup it got (the
        assigned listener runs once per rebalance, cooperative rounds included) since
        ``since`` calls, and has no JoinGroup or SyncGroup in flight."""
        def check() -> bool:
            calls = seen.calls
            assigned = [c for c in calls[since:] if c.kind == "assigned"]
            ok_syncs = [e for e in seen.exchanges if e.api_key == SYNC_GROUP and e.ok]
            idle = all(e.received is not None or e.raised for e in seen.exchanges)
            last_ok = bool(ok_syncs) and seen.exchanges[-1] is ok_syncs[-1]
            return (bool(assigned) and idle and last_ok
                    and len([c for c in calls if c.kind == "assigned"]) == len(ok_syncs)
                    and len(consumer._subscription.assigned_partitions()) == count
                    and not consumer._subscription.reassignment_in_progress)
        return check

    def child_holds(name: str, count: int) -> Callable[[], bool]:
        def check() -> bool:
            states = [e for e in others.events(name) if e["event"] in ("state", "assigned")]
            return bool(states) and states[-1]["state"] == "STABLE" and \
                len(states[-1]["assignment"]) == count
        return check

    def both(*checks: Callable[[], bool]) -> Callable[[], bool]:
        return lambda: all(c() for c in checks)

    reader = None
    try:
        await step("first join", consumer.start, holds(6, len(seen.calls)), 6)
        reader = asyncio.ensure_future(consume())
        await step("b joins", lambda: others.add("b"),
                   both(holds(3, len(seen.calls)), child_holds("b", 3)), 6)
        await step("b crashes", lambda: others.kill("b"), holds(6, len(seen.calls)), 6)
        await step("c joins", lambda: others.add("c"),
                   both(holds(3, len(seen.calls)), child_holds("c", 3)), 6)
        await step("c leaves", lambda: others.stop("c"), holds(6, len(seen.calls)), 6)
        await step("subscription change",
                   lambda: consumer.subscribe([topic, topic2], listener=listener),
                   holds(10, len(seen.calls)), 10)
    finally:
        stop.set()
        if reader is not None:
            await reader
        await consumer.stop()
    return steps, seen, kept


@pytest.mark.parametrize("protocol", ["eager", "cooperative"])
def test_aiokafka_metrics_through_joins_a_crash_a_leave_and_a_subscription_change(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str], protocol: str,
) -> None:
    """Java's rebalance counters equal the exchanges seen on the wire, latencies lie within
    the test's own clock, and the leader's and member's figures match what was sent; the
    kept partitions' pause spans the join where aiokafka stops them (eager, a subscription
    change), and only the take-up's synchronous listener call where they keep being read
    (cooperative)."""
    cooperative = protocol == "cooperative"
    topic, topic2 = make_topic(6), make_topic(4)
    group = unique_name("group")
    others = ChildMembers(MEMBER, {
        "bootstrap": kafka_broker.bootstrap, "group": group, "topics": [topic],
        "strategy": "cooperative-balanced-sticky" if cooperative else "balanced-sticky",
        "runtime": cooperative, "session_timeout_ms": SESSION_MS,
        "heartbeat_interval_ms": 500, "metadata_max_age_ms": 5_000,
    })
    try:
        steps, seen, kept_by_step = asyncio.run(run_scenario(
            kafka_broker.bootstrap, group, topic, topic2, others, cooperative))
    finally:
        others.close()

    # a new dynamic member's first JoinGroup is answered MEMBER_ID_REQUIRED: Java counts
    # it as a failed rebalance, and so do we
    joins = [e.error for e in seen.exchanges if e.api_key == JOIN_GROUP]
    assert MEMBER_ID_REQUIRED in joins, seen.exchanges
    expect = Expectations(assigned_each_rebalance=True)
    for step in steps:
        expect.check(step)
    kept = {"b joins": 3, "b crashes": 3, "c joins": 3, "c leaves": 3,
            "subscription change": 6}
    for step in steps:
        pause = step.values[QUALITY]["kept-partition-pause-seconds-last"]
        if step.name not in kept:
            assert math.isnan(pause), step.name  # nothing kept at the first join
            continue
        assigned = [c for c in step.calls if c.kind == "assigned"][-1]
        if cooperative and step.name != "subscription change":
            # kept partitions were read throughout; the last round's take-up ran the
            # (synchronous) assigned listener, which holds the event loop: that is the pause,
            # after the round's SyncGroup was answered, nothing of the join before it
            last_sync = [e for e in step.exchanges if e.api_key == SYNC_GROUP and e.ok][-1]
            assert last_sync.received is not None
            assert len(kept_by_step[step.name]) == kept[step.name], step.name
            assert assigned.end - assigned.start <= pause, step.name
            assert pause <= step.read - last_sync.received, (step.name, pause)
            continue
        revoked = [c for c in step.calls if c.kind == "revoked"][-1]
        assert len(assigned.partitions & revoked.partitions) == kept[step.name]
        # paused from before the revocation callback until after the assignment callback
        # (a cooperative member changing its subscription revokes everything, as aiokafka)
        assert assigned.end - revoked.start <= pause <= step.read - step.trigger, step.name

