"""Offset commits of one consumer in flight: what a retry may send, what a hand-over awaits.

Every commit goes on kafka-python's one coordinator connection, where the broker answers
requests in the order they were sent (as on the Java consumer), so a commit never overtakes an
earlier one there. Two things are left to keep in order, both because the runtime retries an
asynchronous commit that met the rebalance (kafka-python would drop it):

* a retry sends only the partitions no newer commit has been issued for since (the committed
  offset never moves backwards);
* revoked partitions are handed over (the follow-up JoinGroup) only once the commits of them
  issued before have finished (bounded), including ``commit_async`` calls an
  ``on_partitions_revoked`` listener has just made and kafka-python has not yet started.

``commit_async`` issues from the application's thread, sends run on kafka-python's IO thread:
the tracker's state is guarded by its own lock (nothing of kafka-python is read under it).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Awaitable, Callable, Collection, Hashable
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Commit:
    """One commit request: its partitions, and whether it finished."""

    seq: int
    partitions: frozenset[Hashable]
    offsets: Any  # the dict kafka-python passes on (identity links issue and send)
    asynchronous: bool = False  # issued by commit_async (kafka-python never retries those)
    started: bool = False
    done: bool = False
    #: each partition's newest commit before this one (restored if this one is withdrawn)
    previous: dict[Hashable, int] = field(default_factory=dict)


class CommitTracker:
    """The commits of one consumer that have not finished yet, in the order they were issued."""

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._open: list[Commit] = []
        self._latest: dict[Hashable, int] = {}  # partition -> seq of its newest commit
        self._lock = threading.Lock()

    def issued(self, offsets: Any, *, asynchronous: bool = False) -> Commit:
        """A commit is about to be scheduled: call before kafka-python schedules its send,
        which kafka-python's IO thread may start at once (:meth:`start` then takes this entry
        up; were it made later, the send would make an entry of its own, not marked
        asynchronous, and this one would count as newer and leave it nothing to retry)."""
        with self._lock:
            commit = Commit(next(self._seq), frozenset(offsets), offsets,
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

    def start(self, offsets: Any) -> Commit:
        """A send begins: the commit issued with these very offsets, or a new one (sync)."""
        with self._lock:
            for commit in self._open:
                if commit.offsets is offsets and not commit.started:
                    commit.started = True
                    return commit
        commit = self.issued(offsets)
        commit.started = True
        return commit

    def still_newest(self, commit: Commit, offsets: Any) -> Any:
        """The part of ``offsets`` no newer commit has been issued for since ``commit``: what
        a retry may send without moving a committed offset backwards."""
        with self._lock:
            return {tp: om for tp, om in offsets.items() if self._latest.get(tp) == commit.seq}

    def finish(self, commit: Commit) -> None:
        with self._lock:
            commit.done = True
            self._open = [c for c in self._open if not c.done]

    def covering(self, partitions: Collection[Hashable]) -> list[Commit]:
        """Unfinished commits that include any of ``partitions``."""
        wanted = frozenset(partitions)
        with self._lock:
            return [c for c in self._open if c.partitions & wanted]


#: How often a wait for commits looks at them again.
WAIT_STEP_S = 0.005


async def wait_done(sleep: Callable[[float], Awaitable[Any]], commits: list[Commit],
                    timeout_s: float, clock: Callable[[], float]) -> bool:
    """Wait until every one of ``commits`` finished, at most ``timeout_s`` (0: look once);
    True if they did. ``sleep`` is kafka-python's event loop's (``_net.sleep``)."""
    deadline = clock() + timeout_s
    while not all(c.done for c in commits):
        left = deadline - clock()
        if left <= 0:
            return False
        await sleep(min(WAIT_STEP_S, left))
    return True
