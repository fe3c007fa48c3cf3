"""Does the group still count this member? The guard on reading through a rebalance.

A cooperative member of this runtime keeps reading its partitions while it rejoins
(:mod:`.cooperative`). That is safe only while the broker still counts it as a member:
once the broker has expelled it (no heartbeat for ``session_timeout_ms``) the next
generation hands its partitions to someone else. kafka-python alone returns no records
during any rebalance, so it never reads in that window; Java, which does keep reading,
relies on the JoinGroup the broker holds.

The broker keeps a member while a JoinGroup or SyncGroup of it is pending (awaiting join
or sync) and otherwise for ``session_timeout_ms`` after the last heartbeat, JoinGroup or
SyncGroup it accepted. A member that sent one at ``t`` and had it accepted knows the
broker renewed its session no earlier than ``t``. So the member is surely still in the
group while one of its round trips is in flight, or less than the session timeout has
passed since the send time of its last accepted request; past that it may already be
expelled (its JoinGroup failed, say because the coordinator moved, and the retries have
not got through), and reading on could read a partition beside its next owner.

The clock is written on kafka-python's IO thread (responses, round trips) and read on the
application's (``poll``): both hold the lock it is given, kafka-python's own coordinator lock
(``BaseCoordinator._lock``) in the runtime.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any


class MembershipClock:
    """When the broker last surely renewed this member's session, and round trips pending."""

    def __init__(self, session_timeout_ms: float,
                 clock: Callable[[], float] = time.monotonic,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        self.session_timeout_s = session_timeout_ms / 1000
        self._clock = clock
        self._lock = lock if lock is not None else threading.RLock()
        self.confirmed_at = -math.inf  # the send time of the last request the broker accepted
        self.in_flight = 0  # JoinGroup/SyncGroup round trips of this member under way

    def confirm(self, send_time: float) -> None:
        """The broker accepted a heartbeat, JoinGroup or SyncGroup sent at ``send_time``."""
        with self._lock:
            self.confirmed_at = max(self.confirmed_at, send_time)

    def round_trip_started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def round_trip_ended(self) -> None:
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)

    def unconfirmed_for(self) -> float:
        """Seconds since the last confirmation (inf if there was none)."""
        with self._lock:
            return self._clock() - self.confirmed_at

    def surely_member(self) -> bool:
        """True while the broker cannot have expelled the member for a missed heartbeat."""
        with self._lock:
            return self.in_flight > 0 or self.unconfirmed_for() < self.session_timeout_s
