"""How long the machine kept a ready process waiting: the scheduling noise of a matrix run.

A probe process sleeps 10 ms at a time and reports each wake-up that came late (more than
5 ms), with when (``time.monotonic()``, shared by every process of the machine) and by how
much. Summed over a change's window, that is the time a process that only wanted to run was
kept from running: what a member on the change's critical path lost to other work at that
moment, whichever side it belongs to. The judge adds it to ours' time allowance for that
change; on an idle machine it is about zero and the rule is the strict one. Waiting that a
member does on purpose (a heartbeat interval, a session timeout, a JoinGroup held by the
broker) is never counted: the probe sleeps only 10 ms.
"""

from __future__ import annotations

import bisect
import contextlib
import subprocess
import sys
import threading
from typing import IO

TICK_S = 0.010
LATE_S = 0.005  # lateness below this is the timer's own, not the machine's
PROBE = f"""
import sys, time
tick, late = {TICK_S}, {LATE_S}
while True:
    before = time.monotonic()
    time.sleep(tick)
    woke = time.monotonic()
    if woke - before - tick > late:
        sys.stdout.write(f"{{woke:.4f}} {{woke - before - tick:.4f}}\\n")
        sys.stdout.flush()
"""


class Lateness:
    """Late wake-ups in time order; the lateness summed over a window."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._times: list[float] = []  # wake-up times, increasing
        self._sums: list[float] = [0.0]  # prefix sums of lateness

    def add(self, woke: float, late: float) -> None:
        with self._lock:
            self._times.append(woke)
            self._sums.append(self._sums[-1] + late)

    def stall(self, start: float, end: float) -> float:
        """Seconds of lateness of the wake-ups between ``start`` and ``end`` (monotonic)."""
        with self._lock:
            lo = bisect.bisect_left(self._times, start)
            hi = bisect.bisect_right(self._times, end)
            return round(self._sums[hi] - self._sums[lo], 3)


class StallProbe(Lateness):
    """The probe process of one matrix run, read into :class:`Lateness`."""

    def __init__(self) -> None:
        super().__init__()
        self._popen = subprocess.Popen([sys.executable, "-c", PROBE], stdout=subprocess.PIPE,
                                       stdin=subprocess.DEVNULL, text=True)
        self._thread = threading.Thread(target=self._read, args=(self._popen.stdout,),
                                        daemon=True)
        self._thread.start()

    def _read(self, out: IO[str] | None) -> None:
        assert out is not None
        for line in out:
            with contextlib.suppress(ValueError):
                self.add(*map(float, line.split()))

    def close(self) -> None:
        """End the probe (by its pid)."""
        self._popen.kill()
        self._popen.wait(10)
        self._thread.join(5)
