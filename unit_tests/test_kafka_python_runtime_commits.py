"""Commits in flight: what a retry may send, and what a hand-over waits for."""

from __future__ import annotations

import asyncio

from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_assignors.kafka_python.runtime.commits import CommitTracker, wait_done

P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)


def _offsets(*tps: TopicPartition, offset: int = 1) -> dict[TopicPartition, OffsetAndMetadata]:
    return {tp: OffsetAndMetadata(offset, "", -1) for tp in tps}


def test_an_issued_async_commit_is_the_one_its_send_starts() -> None:
    """The send of a scheduled commit_async takes up the entry made when it was issued."""
    tracker = CommitTracker()
    offsets = _offsets(P0)
    issued = tracker.issued(offsets, asynchronous=True)
    assert tracker.start(offsets) is issued
    started_again = tracker.start(offsets)  # a second send of equal offsets: another commit
    assert started_again is not issued and not started_again.asynchronous


def test_the_hand_over_sees_commits_issued_but_not_yet_started() -> None:
    """commit_async(offsets) from on_partitions_revoked counts before kafka-python sends it,
    and stops counting once its send finished."""
    tracker = CommitTracker()
    commit = tracker.issued(_offsets(P0), asynchronous=True)
    assert tracker.covering({P0}) == [commit]
    assert tracker.covering({P1}) == []
    tracker.finish(tracker.start(commit.offsets))
    assert tracker.covering({P0}) == []


def _clock() -> float:
    return asyncio.get_running_loop().time()


def test_waiting_for_commits_is_bounded_and_reports_whether_they_finished() -> None:
    """wait_done returns True once every commit finished, False when its time ran out, and
    looks only once when given no time."""
    tracker = CommitTracker()
    first, second = tracker.start(_offsets(P0)), tracker.start(_offsets(P0))

    async def scenario() -> tuple[bool, bool, bool, bool]:
        asyncio.get_running_loop().call_later(0.01, tracker.finish, first)
        stuck = await wait_done(asyncio.sleep, [first, second], 0.05, _clock)
        at_once = await wait_done(asyncio.sleep, [second], 0, _clock)
        tracker.finish(second)
        done = await wait_done(asyncio.sleep, [first, second], 0.05, _clock)
        return stuck, at_once, done, await wait_done(asyncio.sleep, [second], 0, _clock)

    assert asyncio.run(scenario()) == (False, False, True, True)
    assert first.done


def test_a_retried_async_commit_sends_only_partitions_no_newer_commit_covers() -> None:
    """Retrying an older commit must not move a committed offset backwards: partitions a newer
    commit was issued for since are left out of the retry."""
    tracker = CommitTracker()
    older_offsets = _offsets(P0, P1, offset=5)
    older = tracker.issued(older_offsets, asynchronous=True)
    assert older.asynchronous
    assert tracker.still_newest(older, older_offsets) == older_offsets
    tracker.issued(_offsets(P1, offset=9), asynchronous=True)
    assert tracker.still_newest(older, older_offsets) == _offsets(P0, offset=5)


def test_a_withdrawn_commit_is_not_newer_than_the_one_being_retried() -> None:
    """A commit kafka-python refused to schedule (bad offsets) is forgotten: an earlier one's
    retry still sends its partitions, and a hand-over does not wait for it."""
    tracker = CommitTracker()
    older_offsets = _offsets(P0, offset=5)
    older = tracker.issued(older_offsets, asynchronous=True)
    refused = tracker.issued(_offsets(P0, offset=9), asynchronous=True)
    assert tracker.still_newest(older, older_offsets) == {}
    tracker.withdraw(refused)
    assert tracker.still_newest(older, older_offsets) == older_offsets
    assert tracker.covering({P0}) == [older]
