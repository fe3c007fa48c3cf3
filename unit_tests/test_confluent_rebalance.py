"""Rebalance steps of the confluent bridge, with plain fakes of both clients (no broker)."""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import Any

import pytest
from confluent_kafka import TopicPartition as CTP
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KTP

from kafka_assignors.confluent._offsets import (
    Progress,
    confluent_partitions,
    kafka_offsets,
    message_offsets,
)
from kafka_assignors.confluent._rebalance import Rebalancer

T = "orders"


class Recorder:
    """Both clients and the user, writing one shared timeline."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.positions: dict[tuple[str, int], int] = {}
        self.fail_commit: Exception | None = None
        self.holder: dict[str, Any] = {}
        #: what librdkafka fetches (its assignment)
        self.fetching: set[tuple[str, int]] = set()

    # librdkafka
    def assign(self, ps: list[Any]) -> None:
        self.events.append(("assign", _parts(ps)))
        self.fetching = {(p.topic, p.partition) for p in ps}

    def unassign(self) -> None:
        self.events.append(("unassign",))
        self.fetching = set()

    def incremental_assign(self, ps: list[Any]) -> None:
        self.events.append(("incremental_assign", _parts(ps)))
        keys = {(p.topic, p.partition) for p in ps}
        assert not keys & self.fetching, "librdkafka: _CONFLICT (already assigned)"
        self.fetching |= keys

    def incremental_unassign(self, ps: list[Any]) -> None:
        self.events.append(("incremental_unassign", _parts(ps)))
        keys = {(p.topic, p.partition) for p in ps}
        assert keys <= self.fetching, "librdkafka: _INVALID_ARG (not assigned)"
        self.fetching -= keys

    def assignment(self) -> list[Any]:
        return [CTP(t, p) for t, p in sorted(self.fetching)]

    def position(self, ps: list[Any]) -> list[Any]:
        return [CTP(p.topic, p.partition, self.positions.get((p.topic, p.partition), -1001))
                for p in ps]

    # kafka-python membership client
    def pause(self, *tps: Any) -> None:
        self.events.append(("pause", _parts(tps)))

    def seek(self, tp: Any, offset: int) -> None:
        self.events.append(("seek", tp.partition, offset))

    def commit(self, offsets: dict[Any, OffsetAndMetadata]) -> None:
        self.events.append(("commit", sorted((tp.partition, om.offset)
                                             for tp, om in offsets.items())))
        if self.fail_commit is not None:
            raise self.fail_commit


def _parts(ps: Any) -> list[int]:
    return sorted(p.partition for p in ps)


class ServingWaiter:
    """Stands in for the polling thread: awaiting it runs the posted steps."""

    def __init__(self, holder: dict[str, Any]) -> None:
        self.holder = holder

    async def __call__(self, timeout_secs: float | None = None) -> None:
        try:
            self.holder["rebalancer"].serve()
        except Exception as exc:  # what the application's poll() would raise
            self.holder["raised"] = exc

    def notify(self) -> None:
        pass


class IdleWaiter:
    """A polling thread that never comes: awaiting it just lets time pass."""

    async def __call__(self, timeout_secs: float | None = None) -> None:
        time.sleep(min(timeout_secs or 0.01, 0.01))

    def notify(self) -> None:
        pass


def make(
    rec: Recorder,
    *,
    cooperative: bool = True,
    auto_commit: bool = True,
    auto_store: bool = True,
    waiter: Any = None,
    step_timeout_s: float = 5.0,
) -> tuple[Rebalancer, Progress]:
    holder = rec.holder
    progress = Progress(rec.position, auto_store=auto_store)
    rebalancer = Rebalancer(
        consumer=lambda: "consumer",
        librdkafka=rec,
        membership=rec,
        progress=progress,
        commit=rec.commit,
        new_waiter=lambda: waiter or ServingWaiter(holder),
        cooperative=cooperative,
        auto_commit=auto_commit,
        step_timeout_s=step_timeout_s,
    )
    holder["rebalancer"] = rebalancer
    return rebalancer, progress


def run(step: Coroutine[Any, Any, None]) -> None:
    """Drive a listener coroutine; the fakes never make it wait on a Future."""
    with pytest.raises(StopIteration):
        step.send(None)


def tps(*partitions: int) -> set[KTP]:
    return {KTP(T, p) for p in partitions}


def user(rec: Recorder, name: str) -> Any:
    return lambda consumer, ps: rec.events.append((name, _parts(ps)))


def acquire(rebalancer: Rebalancer, *partitions: int) -> None:
    run(rebalancer.on_partitions_assigned(tps(*partitions)))
    rebalancer.serve()


def test_assign_pauses_the_membership_client_and_hands_over_later() -> None:
    """kafka-python stops fetching at once; on_assign and librdkafka run on the polling thread."""
    rec = Recorder()
    rebalancer, _ = make(rec)
    rebalancer.on_assign = user(rec, "on_assign")
    run(rebalancer.on_partitions_assigned(tps(1, 0)))
    assert rec.events == [("pause", [0]), ("seek", 0, 0), ("pause", [1]), ("seek", 1, 0)]
    rec.events.clear()
    rebalancer.serve()
    assert rec.events == [("on_assign", [0, 1]), ("incremental_assign", [0, 1])]


def test_cooperative_revoke_commits_before_the_partition_is_given_back() -> None:
    """on_revoke, then librdkafka stops, then the progress is committed: all before returning."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    rebalancer.on_revoke = user(rec, "on_revoke")
    acquire(rebalancer, 0, 1, 2)
    rec.positions = {(T, 1): 42, (T, 2): 7}
    rec.events.clear()
    run(rebalancer.on_partitions_revoked(tps(1, 0)))
    assert rec.events == [
        ("on_revoke", [0, 1]),
        ("incremental_unassign", [0, 1]),
        ("commit", [(1, 42)]),  # partition 0 was never consumed: nothing to commit
    ]
    assert progress.assigned() == [(T, 2)]


def test_eager_rebalance_revokes_everything_then_assigns_everything() -> None:
    """Eager members use assign/unassign with the full assignment, as confluent-kafka does."""
    rec = Recorder()
    rebalancer, _ = make(rec, cooperative=False)
    rebalancer.on_assign = user(rec, "on_assign")
    rebalancer.on_revoke = user(rec, "on_revoke")
    acquire(rebalancer, 0, 1)
    rec.positions = {(T, 0): 5, (T, 1): 9}
    rec.events.clear()
    run(rebalancer.on_partitions_revoked(tps(0, 1)))
    acquire(rebalancer, 1, 2)
    assert [e for e in rec.events if e[0] not in ("pause", "seek")] == [
        ("on_revoke", [0, 1]), ("unassign",), ("commit", [(0, 5), (1, 9)]),
        ("on_assign", [1, 2]), ("assign", [1, 2]),
    ]


def test_lost_partitions_are_not_committed() -> None:
    """After an eviction the group has moved on: on_lost runs, nothing is committed."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    rebalancer.on_revoke = user(rec, "on_revoke")
    rebalancer.on_lost = user(rec, "on_lost")
    acquire(rebalancer, 3)
    rec.positions = {(T, 3): 11}
    rec.events.clear()
    run(rebalancer.on_partitions_lost(tps(3)))
    assert rec.events == []  # not waited for: it runs on the next poll
    rebalancer.serve()
    assert rec.events == [("on_lost", [3]), ("incremental_unassign", [3])]
    assert progress.assigned() == []


def test_lost_falls_back_to_on_revoke() -> None:
    """Without on_lost, on_revoke is called (confluent-kafka's behaviour)."""
    rec = Recorder()
    rebalancer, _ = make(rec)
    rebalancer.on_revoke = user(rec, "on_revoke")
    acquire(rebalancer, 3)
    run(rebalancer.on_partitions_lost(tps(3)))
    rebalancer.serve()
    assert ("on_revoke", [3]) in rec.events


def test_without_auto_commit_the_user_commits() -> None:
    """enable.auto.commit=false: the revoke step commits nothing by itself."""
    rec = Recorder()
    rebalancer, _ = make(rec, auto_commit=False)
    acquire(rebalancer, 0)
    rec.positions = {(T, 0): 3}
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert not [e for e in rec.events if e[0] == "commit"]


def test_manual_offset_store_commits_what_was_stored_in_on_revoke() -> None:
    """enable.auto.offset.store=false: stored offsets (even from on_revoke) are committed."""
    rec = Recorder()
    rebalancer, progress = make(rec, auto_store=False)
    rebalancer.on_revoke = lambda consumer, ps: progress.store(
        {KTP(T, 0): OffsetAndMetadata(17, "", -1)})
    acquire(rebalancer, 0)
    rec.positions = {(T, 0): 99}  # ignored: only what the application stored counts
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert ("commit", [(0, 17)]) in rec.events


def test_already_committed_progress_is_not_committed_again() -> None:
    """The revoke step skips offsets equal to the last successful commit."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    acquire(rebalancer, 0)
    rec.positions = {(T, 0): 8}
    progress.mark_committed({KTP(T, 0): OffsetAndMetadata(8, "", -1)})
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert not [e for e in rec.events if e[0] == "commit"]


def test_assignment_made_by_the_callback_is_not_repeated() -> None:
    """A callback that calls (incremental_)assign itself replaces the bridge's call."""
    rec = Recorder()
    rebalancer, _ = make(rec)

    def on_assign(consumer: Any, ps: list[Any]) -> None:
        rebalancer.user_moved()
        rec.incremental_assign([CTP(p.topic, p.partition, 0) for p in ps])

    rebalancer.on_assign = on_assign
    acquire(rebalancer, 0)
    assert [e for e in rec.events if e[0] == "incremental_assign"] == [
        ("incremental_assign", [0])
    ]


def test_callback_errors_are_raised_after_the_step_is_complete() -> None:
    """A failing on_revoke still lets the partition go cleanly; poll() then raises the error."""
    rec = Recorder()
    rebalancer, _ = make(rec)

    def on_revoke(consumer: Any, ps: list[Any]) -> None:
        raise ValueError("boom")

    rebalancer.on_revoke = on_revoke
    acquire(rebalancer, 0)
    rec.positions = {(T, 0): 4}
    rec.events.clear()
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert rec.events == [("incremental_unassign", [0]), ("commit", [(0, 4)])]
    assert isinstance(rec.holder.get("raised"), ValueError)


def test_failed_commit_is_logged_and_the_partition_still_released() -> None:
    """A commit error at revoke time cannot stop the rebalance: it is only logged."""
    rec = Recorder()
    rec.fail_commit = RuntimeError("coordinator gone")
    rebalancer, progress = make(rec)
    acquire(rebalancer, 0)
    rec.positions = {(T, 0): 4}
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert progress.assigned() == []


def test_in_callback_is_true_only_inside_user_callbacks() -> None:
    """The bridge refuses poll()/close() from callbacks and allows assign() only there."""
    rec = Recorder()
    rebalancer, _ = make(rec)
    seen = []
    rebalancer.on_assign = lambda consumer, ps: seen.append(rebalancer.in_callback())
    assert not rebalancer.in_callback()
    acquire(rebalancer, 0)
    assert seen == [True]
    assert not rebalancer.in_callback()


def test_steps_run_in_the_order_they_were_posted() -> None:
    """A cooperative round's revoke runs before the assignment posted after it."""
    rec = Recorder()
    rebalancer, _ = make(rec, waiter=IdleWaiter(), step_timeout_s=0.05)
    acquire(rebalancer, 0)
    run(rebalancer.on_partitions_assigned(tps(1)))
    run(rebalancer.on_partitions_lost(tps(0)))
    rec.events.clear()
    rebalancer.serve()
    assert rec.events == [("incremental_assign", [1]), ("incremental_unassign", [0])]


def test_revoke_not_served_in_time_is_abandoned_and_later_treated_as_lost() -> None:
    """If the application stops polling, the listener stops waiting; no stale commit later."""
    rec = Recorder()
    rebalancer, _ = make(rec, waiter=IdleWaiter(), step_timeout_s=0.05)
    rebalancer.on_revoke = user(rec, "on_revoke")
    rebalancer.on_lost = user(rec, "on_lost")
    acquire(rebalancer, 0)
    rec.positions = {(T, 0): 6}
    rec.events.clear()
    started = time.monotonic()
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert time.monotonic() - started < 2
    assert rec.events == []
    rebalancer.serve()
    assert rec.events == [("on_lost", [0]), ("incremental_unassign", [0])]


def test_ignoring_listener_posts_nothing() -> None:
    """After close() handed everything back, kafka-python's own close revokes nothing twice."""
    rec = Recorder()
    rebalancer, _ = make(rec)
    rebalancer.ignoring = True
    run(rebalancer.on_partitions_revoked(tps(0)))
    run(rebalancer.on_partitions_lost(tps(0)))
    assert not rebalancer.steps


def test_release_all_hands_back_what_is_held() -> None:
    """close()/unsubscribe() release every held partition on the polling thread."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    acquire(rebalancer, 0, 1)
    rec.positions = {(T, 0): 2}
    rec.events.clear()
    rebalancer.release_all(lost=False)
    assert rec.events == [("incremental_unassign", [0, 1]), ("commit", [(0, 2)])]
    assert progress.assigned() == []


# --- offsets and kafka-python's join task -----------------------------------------------------


def test_offset_conversions() -> None:
    """confluent and kafka-python offsets convert both ways; invalid offsets are skipped."""
    got = kafka_offsets([CTP(T, 0, 5, leader_epoch=2), CTP(T, 1, -1001)])
    assert got == {KTP(T, 0): OffsetAndMetadata(5, "", 2)}
    back = confluent_partitions(got)
    assert [(p.partition, p.offset, p.leader_epoch) for p in back] == [(0, 5, 2)]
    with_metadata = confluent_partitions(kafka_offsets([CTP(T, 2, 3, "note")]))
    assert [(p.offset, p.metadata, p.leader_epoch) for p in with_metadata] == [(3, "note", None)]

    class Msg:
        def topic(self) -> str:
            return T

        def partition(self) -> int:
            return 3

        def offset(self) -> int:
            return 9

        def leader_epoch(self) -> int | None:
            return None

    assert message_offsets(Msg()) == {KTP(T, 3): OffsetAndMetadata(10, "", -1)}


def test_partitions_the_application_unassigned_are_not_unassigned_again() -> None:
    """A cooperative revoke hands librdkafka back only what it still fetches (the
    application may have called incremental_unassign() itself): no _INVALID_ARG."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    acquire(rebalancer, 0, 1)
    rec.incremental_unassign([CTP(T, 0)])  # the application, outside a callback
    run(rebalancer.on_partitions_revoked(tps(0, 1)))
    assert [e for e in rec.events if e[0] == "incremental_unassign"][-1] == (
        "incremental_unassign", [1])
    assert progress.assigned() == []


def test_partitions_the_application_assigned_are_not_assigned_again() -> None:
    """A cooperative assign adds only what librdkafka does not fetch yet: no _CONFLICT."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    rec.incremental_assign([CTP(T, 1, 0)])  # the application, outside a callback
    acquire(rebalancer, 0, 1)
    assert [e for e in rec.events if e[0] == "incremental_assign"][-1] == (
        "incremental_assign", [0])
    assert sorted(rec.fetching) == [(T, 0), (T, 1)]
    assert progress.assigned() == [(T, 0), (T, 1)]
    assert rebalancer.joined
