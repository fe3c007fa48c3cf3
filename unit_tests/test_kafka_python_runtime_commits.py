"""Commits in flight: never overtaken on another connection, awaited before a hand-over."""

from __future__ import annotations

import asyncio
from typing import Any

from kafka import errors as Errors
from kafka.future import Future
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_assignors.adapters.kafka_python_runtime.commits import CommitTracker, wait_done

P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)


def _offsets(*tps: TopicPartition, offset: int = 1) -> dict[TopicPartition, OffsetAndMetadata]:
    return {tp: OffsetAndMetadata(offset, "", -1) for tp in tps}


def test_an_issued_async_commit_is_the_one_its_send_starts() -> None:
    """The send of a scheduled commit_async takes up the entry made when it was issued."""
    tracker = CommitTracker(Future)
    offsets = _offsets(P0)
    issued = tracker.issued(offsets)
    assert tracker.start(offsets) is issued
    assert tracker.start(_offsets(P0)) is not issued  # equal offsets, another commit


def test_a_commit_waits_for_an_earlier_one_of_its_partition_on_the_other_connection() -> None:
    """A newer commit is not sent while an older one of the same partition is unsent or in
    flight elsewhere; on the same connection (answered in order) it need not wait."""
    tracker = CommitTracker(Future)
    older = tracker.start(_offsets(P0, offset=5))
    newer = tracker.start(_offsets(P0, P1, offset=9))
    other = tracker.start(_offsets(P1, offset=3))
    assert tracker.blockers(newer, "coordinator") == [older]  # older not sent yet
    tracker.sending(older, "coordinator")
    assert tracker.blockers(newer, "coordinator") == []
    assert tracker.blockers(newer, "1-commits") == [older]
    assert tracker.blockers(older, "1-commits") == []  # only earlier commits block
    assert tracker.blockers(other, "coordinator") == [newer]  # shares P1, unsent
    tracker.finish(older)
    assert tracker.blockers(newer, "1-commits") == []


def test_the_hand_over_sees_commits_issued_but_not_yet_started() -> None:
    """commit_async(offsets) from on_partitions_revoked counts before kafka-python sends it,
    and stops counting once its scheduled send finished."""
    tracker = CommitTracker(Future)
    scheduled = Future()
    commit = tracker.issued(_offsets(P0), asynchronous=True)
    tracker.finish_with(commit, scheduled)
    assert tracker.covering({P0}) == [commit]
    assert tracker.covering({P1}) == []
    scheduled.success(None)
    assert tracker.covering({P0}) == []


class _Manager:
    """kafka-python's wait_for, on asyncio: resolves or times out."""

    async def wait_for(self, future: Any, timeout_ms: float) -> Any:
        for _ in range(int(timeout_ms) + 1):
            if future.is_done:
                return future.value
            await asyncio.sleep(0.001)
        raise Errors.KafkaTimeoutError()


def test_waiting_for_commits_is_bounded_and_reports_whether_they_finished() -> None:
    """wait_done returns True once every commit finished, False when its time ran out."""
    tracker = CommitTracker(Future)
    first, second = tracker.start(_offsets(P0)), tracker.start(_offsets(P0))

    async def scenario() -> tuple[bool, bool]:
        asyncio.get_running_loop().call_later(0.01, tracker.finish, first)
        stuck = await wait_done(_Manager(), [first, second], 0.05, _clock)
        tracker.finish(second)
        done = await wait_done(_Manager(), [first, second], 0.05, _clock)
        return stuck, done

    assert asyncio.run(scenario()) == (False, True)
    assert first.done.is_done


def _clock() -> float:
    return asyncio.get_running_loop().time()


def test_a_retried_async_commit_sends_only_partitions_no_newer_commit_covers() -> None:
    """Retrying an older commit must not move a committed offset backwards: partitions a newer
    commit was issued for since are left out of the retry."""
    tracker = CommitTracker(Future)
    older_offsets = _offsets(P0, P1, offset=5)
    older = tracker.issued(older_offsets, asynchronous=True)
    assert older.asynchronous
    assert tracker.still_newest(older, older_offsets) == older_offsets
    tracker.issued(_offsets(P1, offset=9), asynchronous=True)
    assert tracker.still_newest(older, older_offsets) == _offsets(P0, offset=5)


def test_a_withdrawn_commit_is_not_newer_than_the_one_being_retried() -> None:
    """A commit kafka-python refused to schedule (bad offsets) is forgotten: an earlier one's
    retry still sends its partitions, and a hand-over does not wait for it."""
    tracker = CommitTracker(Future)
    older_offsets = _offsets(P0, offset=5)
    older = tracker.issued(older_offsets, asynchronous=True)
    refused = tracker.issued(_offsets(P0, offset=9), asynchronous=True)
    assert tracker.still_newest(older, older_offsets) == {}
    tracker.withdraw(refused)
    assert tracker.still_newest(older, older_offsets) == older_offsets
    assert tracker.covering({P0}) == [older]
