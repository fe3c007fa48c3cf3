"""What a live metrics test observes of one in-process kafka-python 3 consumer, independently
of the metrics under test: kafka-python's own log records (one consumer per test process
logs them), timed on ``time.monotonic`` as they are emitted, and the test's own poll calls.

kafka-python 3.0.12 logs, for each JoinGroup/SyncGroup round trip, "(Re-)joining group" at
its start (after the coordinator check) and "Received SyncGroup response" when SyncGroup
answers; before the first round trip of a rebalance, "Disabling heartbeat during join-group";
the take-up of a result logs "Cooperative rebalance complete" or "Setting newly assigned
partitions"; the leader logs "Performing assignment ... with subscriptions" and "Finished
assignment". Program order puts the metrics' own events between these, which bounds every
latency the metrics report.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from kafka import ConsumerRebalanceListener

#: kafka.coordinator.base logs as "kafka.coordinator"; the consumer coordinator's logger is
#: its child (its records propagate to it)
LOGGERS = ("kafka.coordinator",)
_START = "(Re-)joining group %s"
_DISABLE = "Disabling heartbeat during join-group"
_SYNC = "Received SyncGroup response: %s"
_TAKE_UP = ("Cooperative rebalance complete for group", "Setting newly assigned partitions")
_PERFORM = "Performing assignment for group %s using strategy %s with subscriptions %s"
_FINISHED = "Finished assignment for group %s: %s"


@dataclass
class Assigned:
    """One assignment the leader computed: what each member owned and subscribed, and got."""

    owned: dict[str, set[tuple[str, int]]]
    topics: dict[str, set[str]]
    began: float  # monotonic, before the assignor ran
    sent: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    finished: float = math.inf  # monotonic, after it returned


@dataclass
class Rebalance:
    """One successful rebalance's bounds, in monotonic seconds."""

    first_disable: float  # the metrics' start is after this
    first_start: float  # ... and before this
    synced: float  # the metrics' end is after this
    taken_up: float  # ... and before this (math.inf if never taken up)

    @property
    def lower_ms(self) -> float:
        return (self.synced - self.first_start) * 1000

    @property
    def upper_ms(self) -> float:
        return (self.taken_up - self.first_disable) * 1000


class Witness(logging.Handler):
    """Collects kafka-python's coordinator log records (DEBUG included) while installed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._lock2 = threading.Lock()
        self.events: list[tuple[str, float]] = []  # (kind, monotonic)
        self.assignments: list[Assigned] = []

    def emit(self, record: logging.LogRecord) -> None:
        now = time.monotonic()
        msg = record.msg if isinstance(record.msg, str) else ""
        kind = None
        if msg == _START:
            kind = "start"
        elif msg == _DISABLE:
            kind = "disable"
        elif msg == _SYNC:
            args = cast("tuple[object, ...]", record.args)  # (the SyncGroup response,)
            ok = getattr(args[0], "error_code", None) == 0 if args else False
            kind = "synced" if ok else "sync-error"
        elif msg.startswith(_TAKE_UP):
            kind = "taken-up"
        elif msg == _PERFORM and isinstance(record.args, tuple):
            members = cast("Sequence[Any]", record.args[2])  # kafka-python's members
            with self._lock2:
                self.assignments.append(Assigned(
                    owned={m.member_id: _owned(m.metadata) for m in members},
                    topics={m.member_id: set(m.metadata.topics) for m in members},
                    began=now))
            return
        elif msg == _FINISHED and isinstance(record.args, tuple):
            with self._lock2:
                self.assignments[-1].sent = {
                    member: {(tp.topic, tp.partition) for tp in a.partitions()}
                    for member, a in cast("Mapping[str, Any]", record.args[1]).items()}
                self.assignments[-1].finished = now
            return
        if kind is not None:
            with self._lock2:
                self.events.append((kind, now))

    def count(self, kind: str) -> int:
        with self._lock2:
            return sum(1 for k, _ in self.events if k == kind)

    def rebalances(self) -> list[Rebalance]:
        """Each success with the bounds program order gives its latency."""
        out: list[Rebalance] = []
        with self._lock2:
            events = list(self.events)
        disable = start = None
        for i, (kind, at) in enumerate(events):
            if kind == "disable" and disable is None:
                disable = at
            elif kind == "start" and start is None:
                start = at
            elif kind == "synced":
                assert disable is not None and start is not None, events[: i + 1]
                taken = next((t for k, t in events[i + 1:] if k == "taken-up"), math.inf)
                out.append(Rebalance(disable, start, at, taken))
                disable = start = None
        return out


def _owned(metadata: Any) -> set[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for item in metadata.owned_partitions or ():
        topic, partitions = (item.topic, item.partitions) if hasattr(item, "topic") else item
        out.update((topic, p) for p in partitions)
    return out


@contextmanager
def witnessing() -> Iterator[Witness]:
    """Install a Witness on kafka-python's coordinator loggers (DEBUG) for the block."""
    witness = Witness()
    saved = []
    for name in LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level))
        logger.setLevel(logging.DEBUG)
        logger.addHandler(witness)
    try:
        yield witness
    finally:
        for logger, level in saved:
            logger.removeHandler(witness)
            logger.setLevel(level)


class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    """A ConsumerRebalanceListener that times its own calls (and may take a while)."""

    def __init__(self, revoke_s: float = 0.0, assign_s: float = 0.0) -> None:
        self.calls: dict[str, list[float]] = {"revoked": [], "assigned": [], "lost": []}
        self._delay = {"revoked": revoke_s, "assigned": assign_s, "lost": 0.0}
        self._frozen = False

    def _timed(self, kind: str) -> None:
        start = time.monotonic()
        if self._delay[kind]:
            time.sleep(self._delay[kind])
        if not self._frozen:
            self.calls[kind].append((time.monotonic() - start) * 1000)

    def freeze(self) -> None:
        """Record no more calls (those of close() come after the metrics were read)."""
        self._frozen = True

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._timed("revoked")

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._timed("assigned")

    def on_partitions_lost(self, lost: Any) -> None:
        self._timed("lost")


class Driver:
    """Polls the in-process consumer from the test thread, timing every poll call."""

    def __init__(self, consumer: Any, poll_ms: int = 100) -> None:
        self.consumer = consumer
        self.poll_ms = poll_ms
        self.polls: list[tuple[float, float]] = []

    def poll_until(self, done: Callable[[], bool], seconds: float, what: str) -> float:
        """Poll until ``done()`` (checked after each poll); the monotonic time it held."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            start = time.monotonic()
            self.consumer.poll(timeout_ms=self.poll_ms)
            self.polls.append((start, time.monotonic()))
            if done():
                return time.monotonic()
        raise AssertionError(f"not {what} within {seconds} s: "
                             f"{sorted(self.consumer.assignment())}")

    def longest_poll_s(self) -> float:
        return max(end - start for start, end in self.polls)


def settled(consumer: Any) -> bool:
    """No rebalance due or under way for this member (nothing left in flight)."""
    coordinator = consumer._coordinator
    return bool(str(coordinator.state).strip("<>").upper().endswith("STABLE")
                and coordinator._join_task is None and not coordinator.need_rejoin())
