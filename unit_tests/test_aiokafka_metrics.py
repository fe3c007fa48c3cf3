"""aiokafka's rebalance metrics: a coordinator subclass composed over aiokafka's or the
cooperative runtime's, on aiokafka's real classes with a fake client (no broker)."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer as PlainConsumer
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.cluster import ClusterMetadata
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.consumer.subscription_state import SubscriptionState
from aiokafka.coordinator.protocol import ConsumerProtocol
from aiokafka.structs import TopicPartition

import kafka_assignors.aiokafka as kaa
from kafka_assignors.aiokafka import rebalance_metrics as rm
from kafka_assignors.aiokafka.runtime import manifest
from kafka_assignors.aiokafka.runtime.coordinator import CooperativeGroupCoordinator
from kafka_assignors.metrics import (
    COORDINATOR_GROUP,
    QUALITY_GROUP,
    GroupMetrics,
    instrument,
    metrics_of,
)

T = "t"
JOIN, SYNC, COMMIT = (SimpleNamespace(API_KEY=k) for k in (11, 14, 8))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tps(*partitions: int) -> set[TopicPartition]:
    return {TopicPartition(T, p) for p in partitions}


def assignment_bytes(*partitions: int) -> bytes:
    raw: bytes = ConsumerProtocol.ASSIGNMENT(0, [(T, sorted(partitions))], b"").encode()
    return raw


class FakeClient:
    """aiokafka's client as far as the coordinator's steps use it; ``send`` answers from
    ``answers`` (an error code, or an exception to raise), each after ``clock`` moved 0.1 s."""

    def __init__(self, clock: Clock) -> None:
        self.cluster = ClusterMetadata()
        self.clock = clock
        self.answers: list[Any] = []

    async def send(self, node_id: int, request: Any, **kwargs: Any) -> Any:
        self.clock.now += 0.1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return SimpleNamespace(error_code=answer)

    def set_topics(self, topics: Any) -> None: ...

    async def _maybe_wait_metadata(self) -> None: ...


class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    """Takes ``revoke_s`` (awaiting) and ``assign_s`` (holding the loop) of the fake clock."""

    def __init__(self, clock: Clock, revoke_s: float = 0.3, assign_s: float = 0.2) -> None:
        self.clock, self.revoke_s, self.assign_s = clock, revoke_s, assign_s

    async def on_partitions_revoked(self, revoked: Any) -> None:
        await asyncio.sleep(0)
        self.clock.now += self.revoke_s

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.clock.now += self.assign_s


class Quiet(CooperativeGroupCoordinator):
    """The cooperative runtime's coordinator; commits are dropped (no broker)."""

    async def commit_offsets(self, assignment: Any, offsets: Any) -> None: ...


Scenario = Callable[[Any, Clock, FakeClient], Awaitable[None]]


def run(scenario: Scenario, *, cooperative: bool | None, assignor: Any = None) -> GroupMetrics:
    """aiokafka's coordinator on a fake client (the cooperative runtime's if ``cooperative`` is
    not None), with the metrics on a fake clock; runs ``scenario`` and returns the metrics."""
    clock = Clock()
    holder: dict[str, GroupMetrics] = {}

    async def main() -> None:
        subscription = SubscriptionState()
        subscription.subscribe({T}, listener=Listener(clock))
        client = FakeClient(clock)
        coordinator = GroupCoordinator(
            client, subscription, group_id="g", enable_auto_commit=False,
            assignors=(assignor or kaa.CooperativeBalancedStickyAssignor(),))
        coordinator._coordination_task.cancel()  # this test drives the steps
        coordinator.coordinator_id = 1
        if cooperative is not None:
            Quiet.adopt(coordinator, cooperative=cooperative)
        holder["m"] = rm._by_subscription[subscription] = GroupMetrics(clock=clock)
        assert rm.install(coordinator) is holder["m"] and metrics_of(coordinator) is holder["m"]
        try:
            await scenario(coordinator, clock, client)
        finally:
            for task in (coordinator._heartbeat_task, coordinator._commit_refresh_task):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    asyncio.run(main())
    return holder["m"]


async def rebalance(c: Any, clock: Clock, *partitions: int, join_s: float = 1.0) -> None:
    """One rebalance as aiokafka's coordination task runs it (the wire replaced by time)."""
    await c._on_join_prepare(c._subscription.subscription.assignment)
    clock.now += join_s
    c.generation += 1
    c._rejoin_needed_fut = asyncio.get_running_loop().create_future()
    await c._on_join_complete(c.generation, "m", c._assignors[0].name,
                              assignment_bytes(*partitions))


def coord(m: GroupMetrics) -> dict[str, float]:
    return m.values()[COORDINATOR_GROUP]


def pause(m: GroupMetrics) -> float:
    return m.values()[QUALITY_GROUP]["kept-partition-pause-seconds-last"]


@pytest.mark.parametrize("cooperative", [None, True])
def test_round_trips_count_with_javas_meanings(cooperative: bool | None) -> None:
    """MEMBER_ID_REQUIRED and a failed SyncGroup are failed rebalances; the latency of the
    success spans every attempt from the first JoinGroup; other requests are not counted."""

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        # MEMBER_ID_REQUIRED, join, REBALANCE_IN_PROGRESS, join, sync, an offset commit
        client.answers = [79, 0, 27, 0, 0, 0]
        for request in (JOIN, JOIN, SYNC, JOIN, SYNC, COMMIT):
            await c._send_req(request)

    v = coord(run(scenario, cooperative=cooperative))
    assert (v["rebalance-total"], v["failed-rebalance-total"]) == (1, 2)
    assert v["rebalance-latency-max"] == pytest.approx(500.0)  # five round trips of 0.1 s


def test_no_answer_or_a_failing_assignor_fails_and_a_cancelled_one_does_not() -> None:
    """A JoinGroup without an answer and a leader's assignor raising each count once; a round
    trip cancelled by a stopping consumer counts neither way."""
    from aiokafka.errors import KafkaConnectionError

    class Failing(SimpleNamespace):
        name = "boom"

        def assign(self, cluster: Any, members: Any) -> Any:
            raise RuntimeError("assignor failed")

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        client.answers = [KafkaConnectionError("gone"), asyncio.CancelledError()]
        with pytest.raises(KafkaConnectionError):
            await c._send_req(JOIN)
        c.coordinator_id = 1  # (aiokafka marked it dead: found again)
        with pytest.raises(asyncio.CancelledError):
            await c._send_req(JOIN)
        c._assignors = (Failing(),)
        with pytest.raises(RuntimeError):
            await c._perform_assignment(SimpleNamespace(group_protocol="boom", members=[],
                                                        API_VERSION=5))

    v = coord(run(scenario, cooperative=None))
    assert (v["failed-rebalance-total"], v["rebalance-total"]) == (2, 0)


def test_eager_listeners_are_timed_and_kept_partitions_pause_from_prepare_to_take_up() -> None:
    """aiokafka (eager) stops returning records at the prepare step: kept partitions pause
    until the take-up ends; the listener is timed and put back after each step."""
    seen: dict[str, Any] = {}

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        user_listener = c._subscription.listener
        await rebalance(c, clock, 0, 1)
        seen["first"] = pause(metrics_of(c))  # type: ignore[arg-type]
        await rebalance(c, clock, 1, 2)
        seen["listener back"] = c._subscription.listener is user_listener

    m = run(scenario, cooperative=None)
    assert math.isnan(seen["first"])  # nothing was held before the first join
    assert seen["listener back"]
    v = coord(m)
    assert v["partition-revoked-latency-max"] == pytest.approx(300.0)
    assert v["partition-assigned-latency-max"] == pytest.approx(200.0)
    assert pause(m) == pytest.approx(0.3 + 1.0 + 0.2)  # revoke, the join, assign


def test_cooperative_kept_partitions_pause_only_for_a_listener_holding_the_loop() -> None:
    """The cooperative runtime keeps returning kept partitions' records: their pause is the
    synchronous assigned-listener call (0.2 s; called with nothing added too, as Java does), not
    the join (1 s) nor the awaited revocation (0.3 s)."""
    seen: list[float] = []

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        await rebalance(c, clock, 0, 1, 2)
        await rebalance(c, clock, 0, 1)  # 2 moves: revoked first (awaited), 0 and 1 kept
        seen.append(pause(metrics_of(c)))  # type: ignore[arg-type]
        await rebalance(c, clock, 0, 1, 3)  # the follow-up round adds 3
        seen.append(pause(metrics_of(c)))  # type: ignore[arg-type]

    m = run(scenario, cooperative=True)
    assert seen == [pytest.approx(0.2), pytest.approx(0.2)]
    assert coord(m)["partition-revoked-latency-max"] == pytest.approx(300.0)


def test_a_cooperative_member_that_lost_its_generation_kept_nothing() -> None:
    """Expelled, its partitions stopped at once and were reported revoked: the next
    assignment's overlap is no kept partition, so no pause is recorded."""

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        await rebalance(c, clock, 0, 1)
        c.reset_generation()
        c.generation = 5
        await rebalance(c, clock, 0, 1)

    assert math.isnan(pause(run(scenario, cooperative=True)))


def test_an_eager_run_of_the_cooperative_runtime_counts_as_aiokafka_alone() -> None:
    """Our AIOKafkaConsumer with an eager assignor: the same figures as aiokafka's coordinator."""

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        await rebalance(c, clock, 0, 1)
        await rebalance(c, clock, 1, 2)

    alone = run(scenario, cooperative=None, assignor=kaa.BalancedStickyAssignor())
    ours = run(scenario, cooperative=False, assignor=kaa.BalancedStickyAssignor())
    assert pause(alone) == pytest.approx(pause(ours)) == pytest.approx(1.5)
    assert coord(alone) == coord(ours)


# --- the classes: either order, no instance attribute shadowing a method -------------------


async def _noop(*args: Any, **kwargs: Any) -> None:
    return None


CONSUMERS = {
    "aiokafka alone": (PlainConsumer, kaa.BalancedStickyAssignor),
    "ours, eager": (kaa.AIOKafkaConsumer, kaa.BalancedStickyAssignor),
    "ours, cooperative": (kaa.AIOKafkaConsumer, kaa.CooperativeBalancedStickyAssignor),
}


def _shadowed(obj: Any) -> set[str]:
    return {name for name in vars(obj) if callable(getattr(type(obj), name, None))}


def _started(kind: str, *, instrument_first: bool) -> tuple[type, tuple[type, ...], set[str]]:
    """Build and start (no broker: the client's bootstrap does nothing, no subscription) the
    consumer ``kind``, instrumented before or after ``start()``; its coordinator's class, the
    classes its methods come from, and every shadowed method name."""
    cls, strategy = CONSUMERS[kind]

    async def main() -> tuple[type, tuple[type, ...], set[str]]:
        consumer = cls(bootstrap_servers="127.0.0.1:1", group_id="g",
                       partition_assignment_strategy=(strategy(),))
        consumer._client.bootstrap = _noop  # (on the client, a test's fake: no broker)
        if instrument_first:
            assert instrument(consumer) is not None
        await consumer.start()
        if not instrument_first:
            assert instrument(consumer) is not None
        try:
            c = consumer._coordinator
            assert metrics_of(consumer) is metrics_of(c) is not None
            assert instrument(consumer) is metrics_of(consumer)  # idempotent
            return (type(c), type(c).__mro__[1:], _shadowed(c) | _shadowed(consumer)
                    | _shadowed(consumer._subscription))
        finally:
            await consumer.stop()

    return asyncio.run(main())


@pytest.mark.parametrize("kind", list(CONSUMERS))
def test_instrument_before_or_after_start_gives_the_same_coordinator_class(kind: str) -> None:
    """Either order: the metrics composed over the coordinator's own class (the cooperative
    runtime's for ours), no instance attribute shadowing a class method."""
    before = _started(kind, instrument_first=True)
    after = _started(kind, instrument_first=False)
    assert before[:2] == after[:2]
    assert before[2] == after[2] == set()
    cls, mro, _ = before
    assert issubclass(cls, rm.RebalanceMetricsMixin) and mro[0] is rm.RebalanceMetricsMixin
    own = CooperativeGroupCoordinator if kind.startswith("ours") else GroupCoordinator
    assert mro[1] is own


def test_the_listener_proxy_never_outlives_a_step() -> None:
    """A listener the application sets during a step is left in place."""
    replaced = Listener(Clock())

    async def scenario(c: Any, clock: Clock, client: FakeClient) -> None:
        class Resubscribing(Listener):
            async def on_partitions_revoked(self, revoked: Any) -> None:
                c._subscription._listener = replaced  # as subscribe(listener=...) does

        c._subscription._listener = Resubscribing(clock)
        await c._on_join_prepare(None)
        assert c._subscription.listener is replaced

    run(scenario, cooperative=None)


# --- the manifest ---------------------------------------------------------------------------


def test_the_metrics_requirements_hold_on_the_installed_aiokafka() -> None:
    assert manifest.metrics_missing() == ()


def test_every_aiokafka_internal_the_metrics_touch_is_in_the_manifest() -> None:
    """A private name read or written in rebalance_metrics.py is ours or in the manifest."""
    source = Path(rm.__file__).read_text()
    tree = ast.parse(source)
    touched = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
               and n.attr.startswith("_") and not n.attr.startswith("__")}
    own = {n.name for n in ast.walk(tree)
           if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    own |= {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign)
            for t in n.targets if isinstance(t, ast.Attribute)}
    listed = {name.partition(".")[2] for name in manifest.names()}
    unlisted = {n for n in touched - own - listed if not n.startswith("_kafka_assignors")}
    # (AIOKafkaAssignor._inner is ours; AIOKafkaClient._client_id read with a default)
    assert unlisted <= {"_inner", "_client_id"}, unlisted


def test_a_missing_internal_is_named_before_anything_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """instrument() on an aiokafka without a name the metrics need: RuntimeError naming it,
    the consumer's class unchanged."""
    monkeypatch.setattr(manifest, "METRICS_METHODS",
                        (*manifest.METRICS_METHODS, ("GroupCoordinator", "_no_such_step", ())))

    async def main() -> None:
        consumer = PlainConsumer(bootstrap_servers="127.0.0.1:1", group_id="g")
        with pytest.raises(RuntimeError, match=r"GroupCoordinator\._no_such_step"):
            instrument(consumer)
        assert type(consumer) is PlainConsumer
        await consumer._client.close()

    asyncio.run(main())

