"""Offset commits of one consumer, in flight: kept in order per partition, awaited before hand-over.

During a cooperative rebalance the runtime sends commits on a connection of their own
(:func:`.cooperative._commit_node`), while the JoinGroup that hands partitions over and
earlier commits go on the coordinator's connection. A broker answers one connection's
requests in order, two connections in any order; so, without this, an asynchronous commit
of a revoked partition could land after its new owner has fetched the committed offset
(records read twice), and an older commit could overtake a newer one (the committed
offset moves backwards). The Java consumer sends every group request on one connection,
so neither can happen there. This tracker restores both guarantees:

* a commit is sent only when no earlier commit of one of its partitions is still waiting
  to be sent, or in flight on the other connection;
* before revoked partitions are handed over, the hand-over waits (bounded) for every
  commit of them that was issued before, including ``commit_async`` calls an
  ``on_partitions_revoked`` listener has just made and kafka-python has not yet started.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Commit:
    """One commit request: its partitions, and where it went once it went."""

    seq: int
    partitions: frozenset[Hashable]
    offsets: Any  # the dict kafka-python passes on (identity links issue and send)
    done: Any  # a kafka.future.Future, resolved when the commit finished either way
    route: Hashable | None = None  # the connection it was sent on; None while unsent
    started: bool = False
    asynchronous: bool = False  # issued by commit_async (kafka-python never retries those)
    #: each partition's newest commit before this one (restored if this one is withdrawn)
    previous: dict[Hashable, int] = field(default_factory=dict)


class CommitTracker:
    """The commits of one consumer that have not finished yet, in the order they were issued.

    ``commit_async`` issues from the application's thread, sends run on kafka-python's IO
    thread: the list is guarded by a lock.
    """

    def __init__(self, new_future: Any) -> None:
        self._new_future = new_future  # builds a kafka.future.Future
        self._seq = itertools.count()
        self._open: list[Commit] = []
        self._latest: dict[Hashable, int] = {}  # partition -> seq of its newest commit
        self._lock = threading.Lock()

    def _prune(self) -> None:
        self._open = [c for c in self._open if not c.done.is_done]

    def issued(self, offsets: Any, *, asynchronous: bool = False) -> Commit:
        """A commit is about to be scheduled: call before kafka-python schedules its send,
        which kafka-python's IO thread may start at once (:meth:`start` then takes this entry
        up; were it made later, the send would make an entry of its own, not marked
        asynchronous, and this one would count as newer and leave it nothing to retry)."""
        with self._lock:
            self._prune()
            commit = Commit(next(self._seq), frozenset(offsets), offsets, self._new_future(),
                            asynchronous=asynchronous)
            self._open.append(commit)
            for tp in commit.partitions:
                if tp in self._latest:
                    commit.previous[tp] = self._latest[tp]
                self._latest[tp] = commit.seq
        return commit

    def withdraw(self, commit: Commit) -> None:
        """``commit`` was never scheduled (kafka-python refused it): forget it, so it neither
        holds up a hand-over nor counts as newer than an earlier commit being retried."""
        self.finish(commit)
        with self._lock:
            for tp in commit.partitions:
                if self._latest.get(tp) == commit.seq:
                    if tp in commit.previous:
                        self._latest[tp] = commit.previous[tp]
                    else:
                        del self._latest[tp]

    def finish_with(self, commit: Commit, sent: Any) -> None:
        """``commit`` is finished when ``sent`` (kafka-python's future of the scheduled send)
        is, either way (also when it failed before it started)."""
        sent.add_both(lambda _res: self.finish(commit))

    def start(self, offsets: Any) -> Commit:
        """A send begins: the commit issued with these very offsets, or a new one (sync)."""
        with self._lock:
            for commit in self._open:
                if commit.offsets is offsets and not commit.started and not commit.done.is_done:
                    commit.started = True
                    return commit
        commit = self.issued(offsets)
        commit.started = True
        return commit

    def blockers(self, commit: Commit, route: Hashable) -> list[Commit]:
        """Earlier unfinished commits of the same partitions that ``commit`` must not overtake
        if sent on ``route``: unsent ones, and ones sent on another connection."""
        with self._lock:
            return [c for c in self._open
                    if c.seq < commit.seq and not c.done.is_done
                    and c.partitions & commit.partitions
                    and (c.route is None or c.route != route)]

    def sending(self, commit: Commit, route: Hashable | None) -> None:
        """``commit`` goes out on ``route`` now (None: it waits to be sent again)."""
        commit.route = route

    def still_newest(self, commit: Commit, offsets: Any) -> Any:
        """The part of ``offsets`` no newer commit has been issued for since ``commit``: what
        a retry may send without moving a committed offset backwards."""
        with self._lock:
            return {tp: om for tp, om in offsets.items() if self._latest.get(tp) == commit.seq}

    def finish(self, commit: Commit) -> None:
        if not commit.done.is_done:
            commit.done.success(None)
        with self._lock:
            self._prune()

    def covering(self, partitions: Collection[Hashable]) -> list[Commit]:
        """Unfinished commits that include any of ``partitions``."""
        wanted = frozenset(partitions)
        with self._lock:
            return [c for c in self._open if not c.done.is_done and c.partitions & wanted]


async def wait_done(manager: Any, commits: list[Commit], timeout_s: float,
                    clock: Any) -> bool:
    """Wait until every one of ``commits`` finished, at most ``timeout_s``; True if they did."""
    from kafka import errors as Errors

    deadline = clock() + timeout_s
    for commit in commits:
        left = deadline - clock()
        if commit.done.is_done:
            continue
        if left <= 0:
            return False
        try:
            await manager.wait_for(commit.done, left * 1000)
        except Errors.KafkaTimeoutError:
            return False
    return all(c.done.is_done for c in commits)
