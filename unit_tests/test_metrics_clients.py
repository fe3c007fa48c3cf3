"""The bridge's metric recording, on fakes and a fake clock (no broker); aiokafka's is in
test_aiokafka_metrics.py."""

from __future__ import annotations

import logging
import math
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import TopicPartition as CTP
from kafka.structs import TopicPartition as KTP

from kafka_assignors.confluent._metrics import bridge_metrics
from kafka_assignors.confluent._offsets import Progress
from kafka_assignors.confluent._rebalance import Rebalancer
from kafka_assignors.metrics import (
    COORDINATOR_GROUP,
    QUALITY_GROUP,
    GroupMetrics,
    attach,
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
