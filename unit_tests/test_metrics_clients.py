"""The bridge's and aiokafka's metric recording, on fakes and a fake clock (no broker)."""

from __future__ import annotations

import asyncio
import logging
import math
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import TopicPartition as CTP
from kafka.structs import TopicPartition as KTP

from kafka_assignors.aiokafka import rebalance_metrics as _aiokafka_metrics
from kafka_assignors.confluent._metrics import bridge_metrics
from kafka_assignors.confluent._offsets import Progress
from kafka_assignors.confluent._rebalance import Rebalancer
from kafka_assignors.metrics import (
    COORDINATOR_GROUP,
    QUALITY_GROUP,
    GroupMetrics,
    attach,
    metrics_of,
)

T = "orders"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def coord(m: GroupMetrics) -> dict[str, float]:
    return m.values()[COORDINATOR_GROUP]


def quality(m: GroupMetrics) -> dict[str, float]:
    return m.values()[QUALITY_GROUP]


# --- the bridge ------------------------------------------------------------------------


class Librdkafka:
    """librdkafka and the membership client, as far as the rebalance steps touch them."""

    def __init__(self) -> None:
        self.fetching: set[tuple[str, int]] = set()

    def assign(self, ps: list[Any]) -> None:
        self.fetching = {(p.topic, p.partition) for p in ps}

    def unassign(self) -> None:
        self.fetching = set()

    def incremental_assign(self, ps: list[Any]) -> None:
        self.fetching |= {(p.topic, p.partition) for p in ps}

    def incremental_unassign(self, ps: list[Any]) -> None:
        self.fetching -= {(p.topic, p.partition) for p in ps}

    def assignment(self) -> list[Any]:
        return [CTP(t, p) for t, p in sorted(self.fetching)]

    def pause(self, *tps: Any) -> None: ...
    def seek(self, tp: Any, offset: int) -> None: ...
    def commit(self, offsets: Any) -> None: ...

    def position(self, ps: list[Any]) -> list[Any]:
        return [CTP(p.topic, p.partition, -1001) for p in ps]


class Serving:
    """Awaiting it runs the posted steps, as the application's next poll() would."""

    def __init__(self, holder: dict[str, Rebalancer]) -> None:
        self.holder = holder

    async def __call__(self, timeout_secs: float | None = None) -> None:
        self.holder["r"].serve()

    def notify(self) -> None:
        pass


def rebalancer(clock: Clock, *, cooperative: bool) -> tuple[Rebalancer, GroupMetrics]:
    metrics = GroupMetrics(clock=clock)
    fake = Librdkafka()
    holder: dict[str, Rebalancer] = {}
    r = Rebalancer(consumer=lambda: "consumer", librdkafka=fake, membership=fake,
                   progress=Progress(fake.position, auto_store=True), commit=fake.commit,
                   new_waiter=lambda: Serving(holder), cooperative=cooperative,
                   auto_commit=False, step_timeout_s=5.0, metrics=metrics)
    holder["r"] = r
    return r, metrics


def drive(step: Any) -> None:
    with pytest.raises(StopIteration):
        step.send(None)


def tps(*partitions: int) -> set[KTP]:
    return {KTP(T, p) for p in partitions}


def taking(clock: Clock, seconds: float) -> Any:
    def callback(_consumer: Any, _partitions: list[Any]) -> None:
        clock.now += seconds
    return callback


def test_bridge_times_each_user_callback_as_its_java_listener_metric() -> None:
    """on_assign, on_revoke and on_lost are timed into partition-*-latency (ms)."""
    clock = Clock()
    r, m = rebalancer(clock, cooperative=False)
    r.on_assign, r.on_revoke, r.on_lost = taking(clock, 0.2), taking(clock, 0.5), \
        taking(clock, 0.1)
    drive(r.on_partitions_assigned(tps(0, 1)))
    r.serve()
    drive(r.on_partitions_revoked(tps(0, 1)))
    drive(r.on_partitions_assigned(tps(2)))
    r.serve()
    drive(r.on_partitions_lost(tps(2)))
    r.serve()
    v = coord(m)
    assert v["partition-assigned-latency-max"] == pytest.approx(200.0)
    assert v["partition-assigned-latency-avg"] == pytest.approx(200.0)
    assert v["partition-revoked-latency-max"] == pytest.approx(500.0)
    assert v["partition-lost-latency-max"] == pytest.approx(100.0)


def test_bridge_eager_pause_runs_from_unassign_to_assign_for_kept_partitions() -> None:
    """Eager: a partition revoked and assigned again paused from the unassign to the assign."""
    clock = Clock()
    r, m = rebalancer(clock, cooperative=False)
    r.on_assign = taking(clock, 0.25)
    drive(r.on_partitions_assigned(tps(0, 1)))
    r.serve()
    assert math.isnan(quality(m)["kept-partition-pause-seconds-last"])  # nothing was kept
    drive(r.on_partitions_revoked(tps(0, 1)))  # unassigned at 1000.0
    clock.now += 2.0  # the group's JoinGroup/SyncGroup
    drive(r.on_partitions_assigned(tps(1, 2)))
    r.serve()  # on_assign takes 0.25 s before librdkafka's assign()
    assert quality(m)["kept-partition-pause-seconds-last"] == pytest.approx(2.25)
    drive(r.on_partitions_revoked(tps(1, 2)))
    drive(r.on_partitions_assigned(tps(3)))  # nothing kept: nothing recorded
    r.serve()
    assert quality(m)["kept-partition-pause-seconds-last"] == pytest.approx(2.25)


def test_bridge_cooperative_pause_is_the_poll_time_spent_on_the_steps() -> None:
    """Cooperative: librdkafka keeps fetching kept partitions; the steps' time is the pause."""
    clock = Clock()
    r, m = rebalancer(clock, cooperative=True)
    r.on_assign, r.on_revoke = taking(clock, 0.125), taking(clock, 0.5)
    drive(r.on_partitions_assigned(tps(0, 1, 2)))
    r.serve()
    assert math.isnan(quality(m)["kept-partition-pause-seconds-last"])
    drive(r.on_partitions_revoked(tps(2)))  # 0 and 1 kept; on_revoke ran in the poll
    assert quality(m)["kept-partition-pause-seconds-last"] == pytest.approx(0.5)
    drive(r.on_partitions_assigned(tps(3)))
    r.serve()
    assert quality(m)["kept-partition-pause-seconds-last"] == pytest.approx(0.125)
    r.on_lost = taking(clock, 1.0)
    drive(r.on_partitions_lost(tps(0, 1, 3)))
    drive(r.on_partitions_assigned(tps(0, 1, 3)))
    r.serve()  # lost, then assigned again: none of them was kept
    assert quality(m)["kept-partition-pause-seconds-last"] == pytest.approx(0.125)


def test_bridge_forwards_the_membership_clients_group_events_into_its_own_metrics() -> None:
    """Rebalance events and leader figures recorded for the membership client reach the
    bridge's metrics; its listener and pause figures do not."""
    clock = Clock()
    source = GroupMetrics(clock=clock)
    client = SimpleNamespace()
    attach(client, source)
    own = bridge_metrics(client, "observed", clock)
    source.rebalance_started()
    clock.now += 0.3
    source.rebalance_failed()
    source.rebalance_succeeded()
    source.record_leader(SimpleNamespace(moved=2, pending_second_round=1, count_spread=0,
                                         topic_spread=0, seconds=0.01))
    with source.listener("revoked"):
        clock.now += 9.0
    source.record_kept_pause(9.0)
    v, q = coord(own), quality(own)
    assert (v["rebalance-total"], v["failed-rebalance-total"]) == (1, 1)
    assert v["rebalance-latency-max"] == pytest.approx(300.0, abs=1.0)
    assert (q["assignments-total"], q["partitions-moved-last"]) == (1, 2)
    assert v["partition-revoked-latency-max"] == -math.inf
    assert math.isnan(q["kept-partition-pause-seconds-last"])
    assert coord(source)["rebalance-total"] == 1  # the source still counts too


def test_bridge_without_events_from_the_membership_client_warns_once(
        caplog: pytest.LogCaptureFixture) -> None:
    """kafka-python's own strategies: no group events, one warning, the callbacks still timed."""
    with caplog.at_level(logging.WARNING, "kafka_assignors.confluent"):
        own = bridge_metrics(SimpleNamespace(), "observed")
    assert "records no rebalance events" in caplog.text
    assert coord(own)["rebalance-total"] == 0


# --- aiokafka --------------------------------------------------------------------------


class Response(SimpleNamespace):
    pass


class Subscription:
    """aiokafka's SubscriptionState: the listener and the assigned partitions."""

    def __init__(self) -> None:
        self._listener: Any = None
        self.partitions: set[Any] = set()

    def assigned_partitions(self) -> set[Any]:
        return set(self.partitions)


class FakeCoordinator:
    """aiokafka's GroupCoordinator, as far as the recording wraps and reads it."""

    group_id = "g"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._subscription = Subscription()
        self.answers: list[Any] = []
        self.assigned: set[Any] = set()

    async def _send_req(self, request: Any) -> Any:
        self.clock.now += 0.1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return Response(error_code=answer)

    async def _perform_assignment(self, response: Any) -> Any:
        if response.group_protocol == "boom":
            raise RuntimeError("assignor failed")
        return {}

    async def _on_join_prepare(self, previous_assignment: Any) -> None:
        listener = self._subscription._listener
        if listener is not None:
            await listener.on_partitions_revoked(set())

    async def _on_join_complete(self, *args: Any) -> None:
        self._subscription.partitions = set(self.assigned)
        listener = self._subscription._listener
        if listener is not None:
            result = listener.on_partitions_assigned(set(self.assigned))
            if asyncio.iscoroutine(result):
                await result

    def _lookup_assignor(self, name: str) -> Any:
        return None


JOIN, SYNC = SimpleNamespace(API_KEY=11), SimpleNamespace(API_KEY=14)


def recorder(clock: Clock) -> tuple[FakeCoordinator, GroupMetrics]:
    c = FakeCoordinator(clock)
    subscription = c._subscription
    m = GroupMetrics(clock=clock)
    _aiokafka_metrics._by_subscription[subscription] = m
    installed = _aiokafka_metrics.install(c)
    assert installed is m and metrics_of(c) is m
    return c, m


def test_aiokafka_counts_round_trips_with_javas_meanings() -> None:
    """MEMBER_ID_REQUIRED and a failed SyncGroup are failed rebalances; the latency of the
    success spans every attempt from the first JoinGroup."""
    clock = Clock()
    c, m = recorder(clock)
    c.answers = [79, 0, 27, 0, 0]  # MEMBER_ID_REQUIRED, join, REBALANCE_IN_PROGRESS, join, sync

    async def rebalance() -> None:
        for request in (JOIN, JOIN, SYNC, JOIN, SYNC):
            await c._send_req(request)
        await c._send_req(SimpleNamespace(API_KEY=8))  # an offset commit: not counted

    c.answers.append(0)
    asyncio.run(rebalance())
    v = coord(m)
    assert (v["rebalance-total"], v["failed-rebalance-total"]) == (1, 2)
    assert v["rebalance-latency-max"] == pytest.approx(500.0)  # five round trips of 0.1 s


def test_aiokafka_no_answer_or_a_failing_assignor_is_a_failed_rebalance() -> None:
    """A JoinGroup without an answer and a leader's assignor raising each count once; a
    round trip cancelled by a stopping consumer counts neither way."""
    clock = Clock()
    c, m = recorder(clock)
    c.answers = [ConnectionError("gone"), asyncio.CancelledError()]

    async def rebalance() -> None:
        with pytest.raises(ConnectionError):
            await c._send_req(JOIN)
        with pytest.raises(asyncio.CancelledError):
            await c._send_req(JOIN)
        with pytest.raises(RuntimeError):
            await c._perform_assignment(SimpleNamespace(group_protocol="boom"))

    asyncio.run(rebalance())
    assert coord(m)["failed-rebalance-total"] == 2
    assert coord(m)["rebalance-total"] == 0


def test_aiokafka_listener_is_timed_and_the_kept_pause_spans_prepare_to_complete() -> None:
    """The user's listener calls are timed through a proxy; kept partitions paused from the
    prepare step until the new assignment was in place."""
    from aiokafka.abc import ConsumerRebalanceListener

    clock = Clock()
    c, m = recorder(clock)

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            clock.now += 0.3

        def on_partitions_assigned(self, assigned: Any) -> None:
            clock.now += 0.2

    c._subscription._listener = Listener()
    c.assigned = {KTP(T, 0), KTP(T, 1)}

    async def rebalance(previous: Any) -> None:
        await c._on_join_prepare(previous)
        clock.now += 1.0
        await c._on_join_complete(1, "m", "balanced-sticky", b"")

    asyncio.run(rebalance(None))
    assert math.isnan(quality(m)["kept-partition-pause-seconds-last"])  # nothing held before
    c.assigned = {KTP(T, 1), KTP(T, 2)}
    asyncio.run(rebalance(SimpleNamespace(tps={KTP(T, 0), KTP(T, 1)})))
    v, q = coord(m), quality(m)
    assert v["partition-revoked-latency-max"] == pytest.approx(300.0)
    assert v["partition-assigned-latency-max"] == pytest.approx(200.0)
    assert q["kept-partition-pause-seconds-last"] == pytest.approx(1.5)


def test_aiokafka_coordinator_of_another_shape_gets_no_metrics(
        caplog: pytest.LogCaptureFixture) -> None:
    """A coordinator missing a wrapped method is left alone, with one warning."""
    _aiokafka_metrics._warned = False
    with caplog.at_level(logging.WARNING, "kafka_assignors"):
        assert _aiokafka_metrics.install(SimpleNamespace(group_id="g")) is None
    assert "no rebalance metrics for aiokafka consumers" in caplog.text
