"""The membership thread: keeps the kafka-python membership client polling.

Why a thread, and not ``poll(timeout_ms=0)`` from the application's ``poll()``:
kafka-python completes a JoinGroup/SyncGroup round trip (and runs the rebalance
listener) only inside a ``poll()``, so one thread keeps polling while a rebalance
is under way, whatever the application does.  That no join result is dropped
between two of its polls is the kafka-python runtime's join fix
(:mod:`kafka_assignors.kafka_python.runtime`), which the bridge installs
on the membership client explicitly (:mod:`._runtime`).  Heartbeats are sent by
kafka-python's own IO thread either way.

It polls only while the application does (``touch()`` from the bridge's
``poll()``): when the application stops for longer than
``max.poll.interval.ms``, kafka-python's poll timer expires and the member
leaves the group, as a confluent-kafka consumer would.

Asynchronous commits are queued here and sent from this thread with
kafka-python's synchronous commit: kafka-python's own asynchronous commit keeps
completions in a queue that two threads must not drain at once.  Commits go out
one at a time in the order they were made (a synchronous commit first sends the
queued ones), so a queued commit is never sent after a newer one; the queued
ones go as one request, each partition at its newest queued offset; a queued
commit of a partition released since (``fresh``) is dropped: the release's own
commit is that partition's last.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kafka import errors as kp_errors
from kafka.net.wakeup_notifier import WakeupNotifier
from kafka.structs import MemberState

from ._offsets import Offsets
from ._rebalance import Waiter

log = logging.getLogger("kafka_assignors.confluent")

#: How long one membership poll() waits while a (re)join is under way.
POLL_MS = 200
#: The same for a pattern subscription: before each join kafka-python asks for fresh metadata
#: and waits for it within the poll's timeout, returning early (no join) when it is not there
#: yet; on a loaded machine that round trip outlasts POLL_MS poll after poll.
PATTERN_POLL_MS = 1000
#: Pause between two polls while the member is stable: kafka-python only needs them to
#: start a requested rejoin and to know the application is alive, and each poll wakes
#: threads that compete with the application's for the GIL.  A rejoin request ends it
#: early: kafka-python's heartbeat response handler (REBALANCE_IN_PROGRESS,
#: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) marks it on its IO thread, between two membership
#: polls, and the runtime's rejoin notice (:mod:`kafka_assignors.kafka_python.runtime.notice`)
#: sets the thread's wake event then (:func:`wake_on_rejoin`).
STABLE_IDLE_S = 0.5
_warned_no_hook = False
#: Pause after a failed membership poll().
ERROR_BACKOFF_S = 0.5
#: How long the membership client of a consumer dropped without close() may take to leave.
ABANDONED_CLOSE_MS = 5000


class MembershipThread:
    """Runs the membership client's ``poll()`` loop and the queued asynchronous commits."""

    def __init__(
        self,
        client: Any,
        *,
        max_poll_interval_s: float,
        on_commit_done: Callable[[Offsets, Any, bool], None],
        name: str,
        on_tick: Callable[[], None] = lambda: None,
        ticket: Callable[[], int] = lambda: 0,
        fresh: Callable[[Offsets, int], Offsets] = lambda offsets, _ticket: offsets,
    ) -> None:
        net = getattr(client, "_net", None)
        if net is None or not hasattr(net, "call_soon_threadsafe"):
            raise RuntimeError(
                "the confluent bridge needs kafka-python 3.0's event loop (KafkaConsumer._net); "
                "install kafka-python>=3.0.2,<4"
            )
        self.client = client
        self._net = net
        self._max_poll_interval_s = max_poll_interval_s
        self._on_commit_done = on_commit_done
        self._on_tick = on_tick
        self._name = name
        self._stop = threading.Event()
        self._wake = threading.Event()  # ends a stable pause early: stop, a queued commit
        self._thread: threading.Thread | None = None
        self._last_activity = time.monotonic()
        self._commits: collections.deque[tuple[int, Offsets]] = collections.deque()
        self._commit_lock = threading.Lock()  # one commit at a time, in the order made
        self._ticket = ticket
        self._fresh = fresh
        self._left_stalled = False
        #: when the application's max.poll.interval.ms ran out, if it made this member leave
        self._stall: float | None = None
        #: how long a poll waits while a (re)join is under way (PATTERN_POLL_MS for patterns)
        self.join_poll_ms = POLL_MS
        self._error: BaseException | None = None
        self._abandoned = False
        coordinator = getattr(client, "_coordinator", None)
        self._coordinator = coordinator if wake_on_rejoin(coordinator, self._wake) else None

    def new_waiter(self) -> Waiter:
        """Something the listener can await on the IO thread and another thread can notify."""
        waiter: Waiter = WakeupNotifier(self._net)
        return waiter

    def touch(self, now: float) -> None:
        """The application polled at ``now`` (monotonic seconds)."""
        self._last_activity = now

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._last_activity = time.monotonic()
        self._thread = threading.Thread(
            target=self._run, name=f"kafka-assignors-membership-{self._name}", daemon=True
        )
        self._thread.start()

    def stop(self, deadline: float, serve: Callable[[], None]) -> bool:
        """Stop the thread; run ``serve`` meanwhile (a rebalance step may be waiting on it).

        Returns False if the thread was still running at ``deadline``.
        """
        self._stop.set()
        self._wake.set()
        thread = self._thread
        while thread is not None and thread.is_alive():
            serve()
            if time.monotonic() >= deadline:
                return False
            thread.join(0.02)
        self._thread = None
        return True

    def wait_stable(self, deadline: float, serve: Callable[[], None]) -> bool:
        """Let a rebalance in progress finish (the thread must run), serving its steps."""
        while not self.stable():
            if not self.running or time.monotonic() >= deadline:
                return False
            serve()
            time.sleep(0.02)
        return True

    def stable(self) -> bool:
        return bool(self.client.group_metadata().state == MemberState.STABLE)

    def _settled(self) -> bool:
        """Stable with no rejoin requested or under way: nothing for a poll to do."""
        if not self.stable():
            return False
        # a join scheduled by the last poll(timeout_ms=0) may not have set REBALANCING yet
        return self._coordinator is None or not self._coordinator.need_rejoin()

    def in_group(self) -> bool:
        md = self.client.group_metadata()
        return bool(md.member_id) and int(md.generation_id) >= 0

    # --- commits -----------------------------------------------------------------------------

    def commit(self, offsets: Offsets, *, report: bool = True) -> None:
        """Synchronous commit with the member's generation, after the queued ones.

        Raises kafka-python errors (of this commit; the queued ones' go to ``on_commit_done``).
        ``report=False``: ``on_commit_done`` is told not to pass it on to ``on_commit`` (the
        application's own synchronous commit, which confluent-kafka does not report there).
        """
        with self._commit_lock:
            self._drain_locked()
            self._send(offsets, report)

    def commit_async(self, offsets: Offsets) -> None:
        """Queue a commit for the membership thread; its result goes to ``on_commit_done``."""
        self._commits.append((self._ticket(), dict(offsets)))
        self._wake.set()

    def drain_commits(self) -> None:
        """Send the queued commits from the calling thread (errors are only reported)."""
        with self._commit_lock:
            self._drain_locked()

    def _drain_locked(self) -> None:
        # one request for what is queued now, each partition at its newest queued offset
        # (they were queued in order): a queue refilled faster than a round trip (auto-commit
        # every 100 ms on a loaded machine) must not keep this thread from polling
        merged: Offsets = {}
        for _ in range(len(self._commits)):
            try:
                ticket, offsets = self._commits.popleft()
            except IndexError:
                break
            merged.update(self._fresh(offsets, ticket))
        if not merged:
            return
        try:
            self._send(merged)
        except kp_errors.KafkaError as exc:
            log.debug("asynchronous commit failed: %s", exc)

    def _send(self, offsets: Offsets, report: bool = True) -> None:
        try:
            self.client.commit(dict(offsets))
        except kp_errors.KafkaError as exc:
            self._on_commit_done(offsets, exc, report)
            raise
        self._on_commit_done(offsets, None, report)

    def take_stall(self) -> float | None:
        """When max.poll.interval.ms ran out (monotonic), once, if the member left for it."""
        stall, self._stall = self._stall, None
        return stall

    def take_error(self) -> BaseException | None:
        """The last non-retriable error of the membership poll() (raised by the bridge's poll)."""
        error, self._error = self._error, None
        return error

    def _run(self) -> None:
        while not self._stop.is_set():
            self._on_tick()  # the application's poll() runs its service at least this often
            if time.monotonic() - self._last_activity > self._max_poll_interval_s:
                # the application stopped polling: leave now, as librdkafka and Java do
                # (kafka-python's own poll timer, restarted by our last poll, would wait
                # max.poll.interval.ms more); the next poll() sees the partitions lost
                self._leave_stalled()
                self._stop.wait(0.1)
                continue
            self._left_stalled = False
            try:
                # a requested rejoin is polled for like one under way: a poll(timeout_ms=0)
                # that cannot start it yet (coordinator unknown) must not spin
                stable = self._settled()
                self.client.poll(timeout_ms=0 if stable else self.join_poll_ms)
            except Exception as exc:
                if isinstance(exc, kp_errors.KafkaError) and exc.retriable:
                    log.warning("membership client: %s (retrying)", exc)
                else:
                    log.error("membership client: %s", exc)
                    self._error = exc
                self._stop.wait(ERROR_BACKOFF_S)
                continue
            self.drain_commits()
            if stable and self._settled() and not self._commits:
                self._wake.wait(STABLE_IDLE_S)
                self._wake.clear()
        if self._abandoned:  # the consumer was collected without close(): leave, let go
            try:
                self.client.close(autocommit=False, timeout_ms=ABANDONED_CLOSE_MS)
            except Exception as exc:
                log.warning("closing the membership client of a dropped consumer: %s", exc)

    def abandon(self) -> None:
        """The consumer was collected without ``close()`` (any thread, even this one): the
        thread stops, closing the membership client (the group sees the member leave)."""
        self._abandoned = True
        if not self.running:
            self.client.close(autocommit=False, timeout_ms=ABANDONED_CLOSE_MS)
            return
        self._stop.set()
        self._wake.set()


    def _leave_stalled(self) -> None:
        leave = getattr(getattr(self.client, "_coordinator", None), "maybe_leave_group", None)
        if self._left_stalled or leave is None or not self.in_group():
            return
        self._left_stalled = True
        self._stall = self._last_activity + self._max_poll_interval_s
        log.warning("the application did not poll() within max.poll.interval.ms (%.0f s): "
                    "leaving the group", self._max_poll_interval_s)
        try:
            leave(reason="consumer poll timeout has expired (max.poll.interval.ms)")
        except Exception as exc:  # kafka-python's own poll timer still expires later
            log.warning("leaving the group failed: %s", exc)


def wake_on_rejoin(coordinator: Any, wake: threading.Event) -> bool:
    """Set ``wake`` whenever kafka-python's ``coordinator`` marks a rejoin as needed (the
    runtime's rejoin notice on its class).  Returns False, after one warning per process, for
    a coordinator that cannot take it: rejoins then start at the next poll, up to
    ``STABLE_IDLE_S`` later."""
    from ..kafka_python.runtime.notice import notify_rejoins

    global _warned_no_hook
    lacking = (("no coordinator",) if coordinator is None
               else notify_rejoins(coordinator, wake))
    if lacking and not _warned_no_hook:
        _warned_no_hook = True
        log.warning("confluent bridge: this kafka-python's coordinator cannot tell of a rejoin "
                    "(%s); a requested rejoin starts up to %.1f s late", ", ".join(lacking),
                    STABLE_IDLE_S)
    return not lacking
