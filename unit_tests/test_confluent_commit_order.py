"""The bridge's commits go out in the order they were made and never move an offset back (no
broker): queued asynchronous commits, synchronous ones, a revoke step's final commit, lost."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KTP

from kafka_assignors.confluent import _membership
from kafka_assignors.confluent._callback_rules import CallbackRules
from kafka_assignors.confluent._membership import MembershipThread
from kafka_assignors.confluent._offsets import Offsets, Progress

from .test_confluent_rebalance import Recorder, T, acquire, make, run, tps, user


class CommitClient:
    """kafka-python's KafkaConsumer as far as commits go: records them, optionally slowly."""

    def __init__(self) -> None:
        self._net = SimpleNamespace(call_soon_threadsafe=lambda *a: None)
        self._coordinator = None
        self.sent: list[list[tuple[int, int]]] = []
        self.in_commit = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def commit(self, offsets: Offsets) -> None:
        self.in_commit.set()
        assert self.release.wait(5)
        self.sent.append(sorted((tp.partition, om.offset) for tp, om in offsets.items()))


def offsets(**by_partition: int) -> Offsets:
    return {KTP(T, int(p[1:])): OffsetAndMetadata(o, "", -1) for p, o in by_partition.items()}


@pytest.fixture
def no_patches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_membership, "_warned_no_hook", True)


def membership(client: Any, progress: Progress | None = None) -> MembershipThread:
    extra: dict[str, Any] = {}
    if progress is not None:
        extra = {"ticket": progress.ticket, "fresh": progress.fresh}
    return MembershipThread(client, max_poll_interval_s=60, on_commit_done=lambda o, e, r: None,
                            name="t", **extra)


def test_a_synchronous_commit_goes_out_after_the_queued_ones(no_patches: None) -> None:
    """A queued asynchronous commit is sent before a later synchronous one, never after it."""
    client = CommitClient()
    thread = membership(client)
    thread.commit_async(offsets(p0=5))
    thread.commit(offsets(p0=9))
    thread.drain_commits()
    assert client.sent == [[(0, 5)], [(0, 9)]]


def test_queued_commits_go_as_one_request_at_their_newest_offsets(no_patches: None) -> None:
    """What is queued goes out in one request, each partition at its newest queued offset: a
    queue refilled faster than a round trip cannot keep the membership thread from polling."""
    client = CommitClient()
    thread = membership(client)
    for offset in range(10, 20):
        thread.commit_async(offsets(p0=offset, p1=offset * 2))
    thread.commit_async(offsets(p0=25))
    thread.drain_commits()
    assert client.sent == [[(0, 25), (1, 38)]]


def test_a_commit_waits_for_one_being_sent_by_the_membership_thread(no_patches: None) -> None:
    """While the membership thread sends a queued commit, a commit from another thread waits."""
    client = CommitClient()
    thread = membership(client)
    thread.commit_async(offsets(p0=5))
    client.release.clear()
    client.in_commit.clear()
    drain = threading.Thread(target=thread.drain_commits)
    drain.start()
    assert client.in_commit.wait(5)
    final = threading.Thread(target=thread.commit, args=(offsets(p0=9),))
    final.start()
    time.sleep(0.1)
    client.release.set()
    drain.join(5)
    final.join(5)
    assert client.sent == [[(0, 5)], [(0, 9)]]


def test_a_queued_commit_of_a_partition_released_since_is_dropped(no_patches: None) -> None:
    """A partition's release made its last commit: an older queued one is not sent after it."""
    client = CommitClient()
    progress = Progress(lambda ps: [], auto_store=True)
    progress.add([(T, 0), (T, 1)])
    thread = membership(client, progress)
    thread.commit_async(offsets(p0=5, p1=3))
    progress.remove([(T, 0)])
    thread.commit_async(offsets(p1=4))
    thread.drain_commits()
    assert client.sent == [[(1, 4)]]


def test_revoke_sends_queued_commits_before_its_final_commit(no_patches: None) -> None:
    """An auto-commit queued before a revoke goes out before the revoke's final commit, and
    nothing older is sent for the revoked partitions afterwards."""
    rec = Recorder()
    client = CommitClient()
    rebalancer, progress = make(rec)
    thread = membership(client, progress)
    rebalancer._commit = thread.commit
    rebalancer._flush = thread.drain_commits
    acquire(rebalancer, 0, 1)
    thread.commit_async(offsets(p0=10, p1=20))  # the auto-commit, still queued
    rec.positions = {(T, 0): 15, (T, 1): 25}
    run(rebalancer.on_partitions_revoked(tps(0)))
    thread.commit_async(offsets(p0=12, p1=22))  # queued later, with an older p0
    thread.drain_commits()
    assert client.sent == [[(0, 10), (1, 20)], [(0, 15)], [(1, 22)]]


def test_commits_made_in_on_revoke_go_out_before_the_partition_is_given_back(
        no_patches: None) -> None:
    """Without auto-commit, on_revoke's asynchronous commit is sent within the revoke step."""
    rec = Recorder()
    client = CommitClient()
    rebalancer, progress = make(rec, auto_commit=False)
    thread = membership(client, progress)
    rebalancer._commit = thread.commit
    rebalancer._flush = thread.drain_commits
    rebalancer.on_revoke = lambda consumer, ps: thread.commit_async(offsets(p0=7))
    acquire(rebalancer, 0)
    run(rebalancer.on_partitions_revoked(tps(0)))
    assert client.sent == [[(0, 7)]]
    assert progress.assigned() == []


def test_partitions_released_as_lost_are_not_released_again() -> None:
    """Lost partitions handed back before the next message: kafka-python's later lost (or revoke)
    of the same partitions runs no callback and unassigns nothing twice."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    rebalancer.on_lost = user(rec, "on_lost")
    acquire(rebalancer, 0, 1)
    rec.events.clear()
    rebalancer.release_lost()
    assert rec.events == [("on_lost", [0, 1]), ("incremental_unassign", [0, 1])]
    run(rebalancer.on_partitions_lost(tps(0, 1)))
    rebalancer.serve()
    run(rebalancer.on_partitions_revoked(tps(1)))
    assert rec.events == [("on_lost", [0, 1]), ("incremental_unassign", [0, 1])]
    assert progress.assigned() == []


class ClosingConsumer(CallbackRules):
    """The shared rules with a close() that runs on_revoke, as the bridge's hand-back does."""

    def __init__(self, on_revoke: Any) -> None:
        self._closed = False
        self._in_callback = False
        self.on_revoke = on_revoke
        self.committed: list[Any] = []

    def _in_rebalance_callback(self) -> bool:
        return self._in_callback

    def _commit(self, message: Any, offsets: Any, asynchronous: bool) -> list[Any] | None:
        self.committed.append(offsets)
        return None

    def _close_clients(self) -> None:
        self._in_callback = True
        try:
            self.on_revoke(self, ["p0"])
        finally:
            self._in_callback = False


def test_on_revoke_may_commit_while_close_hands_the_partitions_back() -> None:
    """close() marks the consumer closed, then runs on_revoke: a commit there still goes out,
    as with confluent-kafka (it raised "Consumer closed": everything since was read again)."""
    consumer = ClosingConsumer(lambda c, ps: c.commit(offsets=ps))
    consumer.close()
    assert consumer.committed == [["p0"]]
    with pytest.raises(RuntimeError, match="Consumer closed"):
        consumer.commit(offsets=["p0"])


def test_a_seek_is_the_progress_until_librdkafka_knows_a_position_again() -> None:
    """librdkafka's position() is invalid from a seek() until the next message: the revoke
    commits the sought offset (it committed nothing, and the next owner re-read)."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    acquire(rebalancer, 0, 1)
    rec.positions = {(T, 0): 40, (T, 1): 30}
    progress.sought((T, 0), 25)  # seek(orders-0 @ 25): librdkafka forgets the position
    rec.positions[(T, 0)] = -1001
    rec.events.clear()
    run(rebalancer.on_partitions_revoked(tps(0, 1)))
    assert ("commit", [(0, 25), (1, 30)]) in rec.events


def test_a_position_after_the_seek_wins() -> None:
    """Once librdkafka returns a message after the seek, its position is the progress again."""
    rec = Recorder()
    rebalancer, progress = make(rec)
    acquire(rebalancer, 0)
    progress.sought((T, 0), 25)
    rec.positions = {(T, 0): 27}
    assert progress.consumed() == {KTP(T, 0): OffsetAndMetadata(27, "", -1)}
    rec.positions = {(T, 0): -1001}  # gone again: the old seek no longer counts
    assert progress.consumed() == {}
