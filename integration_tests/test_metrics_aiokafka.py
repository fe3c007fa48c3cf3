"""Rebalance and assignment metrics of an aiokafka consumer with our assignor, live.

The observed member runs in this process, set up as the aiokafka docs tell users
(``partition_assignment_strategy=(BalancedStickyAssignor(),)``, read with
``kafka_assignors.aiokafka.metrics(consumer)``); the other members are
``aiokafka_member.py`` processes.  The group goes through the first join, a member
joining, that member crashing (SIGKILL), another joining and leaving cleanly, and a
subscription change.  The observed member is the first one, so it leads throughout.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .child_members import ChildMembers
from .conftest import BrokerHandle

MEMBER = Path(__file__).with_name("aiokafka_member.py")
JOIN_GROUP, SYNC_GROUP = 11, 14
MEMBER_ID_REQUIRED = 79
SESSION_MS = 6_000
STEP_TIMEOUT_S = 60.0
COORD = "consumer-coordinator-metrics"
QUALITY = "kafka-assignors-assignment-metrics"
TP = tuple[str, int]
pytestmark = pytest.mark.timeout(300)


@dataclass
class Exchange:
    """One JoinGroup/SyncGroup request of the observed member and its outcome."""

    api_key: int
    sent: float
    received: float | None = None
    error: int | None = None  # None: no response yet, or none at all (``raised``)
    raised: bool = False
    assignment: dict[str, frozenset[TP]] | None = None  # a leader's SyncGroup: what it sent

    @property
    def ok(self) -> bool:
        return self.received is not None and self.error == 0

    @property
    def failed(self) -> bool:
        return self.raised or (self.error is not None and self.error != 0)


@dataclass
class Call:
    kind: str
    start: float
    end: float
    partitions: frozenset[TP]


@dataclass
class Observed:
    exchanges: list[Exchange] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


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
        raw = getattr(request, "_group_assignment", None)
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


@dataclass
class Step:
    """One thing the test did and what it observed until the group settled."""

    name: str
    trigger: float
    exchanges: list[Exchange]
    calls: list[Call]
    read: float  # when the metrics were read (after everything above)
    values: dict[str, dict[str, float]]
    before: Observed  # everything observed until the read, this step included


class Expectations:
    """What the metrics must say, from the exchanges and calls observed so far."""

    def __init__(self) -> None:
        self.held: dict[str, frozenset[TP]] = {}  # member -> partitions, as last synced
        self.moved_total = 0
        self.assignments = 0
        self.latency_total_low = 0.0
        self.latency_total_high = 0.0
        self.latency_highs: list[float] = []

    def check(self, step: Step) -> None:
        v = step.values[COORD]
        q = step.values[QUALITY]
        seen = step.before
        ex = seen.exchanges
        ok_syncs = [e for e in ex if e.api_key == SYNC_GROUP and e.ok]
        failed = [e for e in ex if e.failed]
        assert v["rebalance-total"] == len(ok_syncs), step.name
        assert v["failed-rebalance-total"] == len(failed), step.name
        assigned_calls = [c for c in seen.calls if c.kind == "assigned"]
        assert len(assigned_calls) == len(ok_syncs), step.name

        # rebalance latency: from the first JoinGroup after the previous success to the
        # successful SyncGroup, as the wire saw it (the metric's span contains it), and at
        # most from the step's trigger to the next assigned callback
        lows, highs = [], []
        start: float | None = None
        for e in step.exchanges:
            if e.api_key == JOIN_GROUP and start is None:
                start = e.sent
            if e.api_key == SYNC_GROUP and e.ok:
                assert start is not None and e.received is not None
                lows.append(e.received - start)
                after = [c.start for c in step.calls
                         if c.kind == "assigned" and c.start >= e.received]
                highs.append(min(after) - step.trigger)
                start = None
        self.latency_total_low += sum(lows) * 1000
        self.latency_total_high += (max(highs) if highs else 0.0) * 1000
        self.latency_highs.extend(h * 1000 for h in highs)
        total = v["rebalance-latency-total"]
        assert self.latency_total_low <= total <= self.latency_total_high, (step.name, total)
        if lows:
            assert lows[-1] * 1000 <= v["rebalance-latency-max"] <= max(self.latency_highs)
            assert v["rebalance-rate-per-hour"] > 0
        last_ok = ok_syncs[-1].received
        assert last_ok is not None
        assert 0 <= v["last-rebalance-seconds-ago"] <= math.floor(step.read - last_ok)

        # the listener, timed around the user's call: at least the call's own duration
        for kind in ("revoked", "assigned"):
            # (the first join's revocation, of nothing, runs before our assignor is first
            # asked anything: the metrics start right after it)
            calls = [c for c in step.calls if c.kind == kind and c.partitions]
            if calls:
                own = calls[-1].end - calls[-1].start
                assert own * 1000 <= v[f"partition-{kind}-latency-max"], (step.name, kind)
                assert v[f"partition-{kind}-latency-max"] <= (step.read - step.trigger) * 1000
        # aiokafka has no lost callback: no sample (kafka-python's Max of none is -inf)
        assert v["partition-lost-latency-max"] == -math.inf

        # the leader's figures, from the assignments it sent on the wire
        last: Exchange | None = None
        last_moved = 0
        for e in step.exchanges:
            if e.api_key != SYNC_GROUP or e.assignment is None:
                continue
            moved = sum(len(self.held[m] - e.assignment[m]) for m in e.assignment
                        if m in self.held)
            self.moved_total += moved
            self.assignments += 1
            if e.ok:
                self.held = dict(e.assignment)
            last = e
            last_moved = moved
        assert q["assignments-total"] == self.assignments, step.name
        assert q["partitions-moved-total"] == self.moved_total, step.name
        assert q["partitions-moved-last"] == last_moved, step.name
        assert last is not None and last.assignment is not None, step.name
        counts = [len(ps) for ps in last.assignment.values()]
        assert q["count-spread-last"] == max(counts) - min(counts), step.name
        assert q["partitions-withheld-last"] == 0  # eager: nothing waits for a second round
        # the assignor ran between the JoinGroup answer and the leader's SyncGroup
        joined = [x.received for x in step.exchanges
                  if x.api_key == JOIN_GROUP and x.ok and x.received is not None]
        assert 0 <= q["assignment-seconds-last"] <= last.sent - joined[-1], step.name


async def run_scenario(bootstrap: str, group: str, topic: str, topic2: str,
                       others: ChildMembers) -> tuple[list[Step], Observed]:
    from aiokafka import AIOKafkaConsumer

    import kafka_assignors.aiokafka as kaa

    seen = Observed()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, client_id="observed",
        partition_assignment_strategy=(kaa.BalancedStickyAssignor(),),
        session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500,
        metadata_max_age_ms=5_000, auto_offset_reset="earliest",
    )
    assert kaa.metrics(consumer)[COORD]["rebalance-total"] == 0  # before start(): empty
    spy_on_wire(consumer, seen)
    listener = make_listener(seen)
    consumer.subscribe([topic], listener=listener)
    steps: list[Step] = []
    stop = asyncio.Event()

    async def consume() -> None:
        while not stop.is_set():
            await consumer.getmany(timeout_ms=100)

    async def step(name: str, action: Callable[[], Any], settled: Callable[[], bool]) -> None:
        n_ex, n_calls = len(seen.exchanges), len(seen.calls)
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
        read = time.monotonic()
        values = kaa.metrics(consumer)
        steps.append(Step(name, trigger, seen.exchanges[n_ex:], seen.calls[n_calls:], read,
                          values, Observed(list(seen.exchanges), list(seen.calls))))

    def holds(count: int, since: int) -> Callable[[], bool]:
        def check() -> bool:
            assigned = [c for c in seen.calls[since:] if c.kind == "assigned"]
            return bool(assigned) and len(assigned[-1].partitions) == count and not \
                consumer._subscription.reassignment_in_progress
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
        await step("first join", consumer.start, holds(6, len(seen.calls)))
        reader = asyncio.ensure_future(consume())
        await step("b joins", lambda: others.add("b"),
                   both(holds(3, len(seen.calls)), child_holds("b", 3)))
        await step("b crashes", lambda: others.kill("b"), holds(6, len(seen.calls)))
        await step("c joins", lambda: others.add("c"),
                   both(holds(3, len(seen.calls)), child_holds("c", 3)))
        await step("c leaves", lambda: others.stop("c"), holds(6, len(seen.calls)))
        await step("subscription change",
                   lambda: consumer.subscribe([topic, topic2], listener=listener),
                   holds(10, len(seen.calls)))
    finally:
        stop.set()
        if reader is not None:
            await reader
        await consumer.stop()
    return steps, seen


def test_aiokafka_metrics_through_joins_a_crash_a_leave_and_a_subscription_change(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """Java's rebalance counters equal the exchanges seen on the wire, latencies lie within
    the test's own clock, and the leader's and member's figures match what was sent."""
    topic, topic2 = make_topic(6), make_topic(4)
    group = unique_name("group")
    others = ChildMembers(MEMBER, {
        "bootstrap": kafka_broker.bootstrap, "group": group, "topics": [topic],
        "strategy": "balanced-sticky", "session_timeout_ms": SESSION_MS,
        "heartbeat_interval_ms": 500, "metadata_max_age_ms": 5_000,
    })
    try:
        steps, seen = asyncio.run(run_scenario(kafka_broker.bootstrap, group, topic, topic2,
                                               others))
    finally:
        others.close()

    # a new dynamic member's first JoinGroup is answered MEMBER_ID_REQUIRED: Java counts
    # it as a failed rebalance, and so do we
    joins = [e.error for e in seen.exchanges if e.api_key == JOIN_GROUP]
    assert MEMBER_ID_REQUIRED in joins, seen.exchanges
    expect = Expectations()
    for step in steps:
        expect.check(step)
    kept = {"b joins": 3, "b crashes": 3, "c joins": 3, "c leaves": 3,
            "subscription change": 6}
    for step in steps:
        pause = step.values[QUALITY]["kept-partition-pause-seconds-last"]
        if step.name not in kept:
            assert math.isnan(pause), step.name  # nothing kept at the first join
            continue
        revoked = [c for c in step.calls if c.kind == "revoked"][-1]
        assigned = [c for c in step.calls if c.kind == "assigned"][-1]
        assert len(assigned.partitions & revoked.partitions) == kept[step.name]
        # paused from before the revocation callback until after the assignment callback
        assert assigned.end - revoked.start <= pause <= step.read - step.trigger, step.name
