"""The demo's live view: per member partitions, messages/s and lag; per group strategy,
generation and imbalance.  ANSI redraw on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from .live_metrics import GroupFigures, group_figures, member_reports, render_line

log = logging.getLogger(__name__)

Partition = tuple[str, int]
RATE_WINDOW = 3.0


class Stats:
    """Fed by the group runner's events (reader threads): records per member, positions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.positions: dict[Partition, int] = {}
        self._times: dict[str, collections.deque[float]] = {}

    def on_event(self, view: Any, event: Mapping[str, Any]) -> None:
        if event.get("event") != "record":
            return
        tp = (str(event["topic"]), int(event["partition"]))
        now = float(event.get("mono", time.monotonic()))
        with self._lock:
            self.positions[tp] = max(self.positions.get(tp, 0), int(event["offset"]) + 1)
            times = self._times.setdefault(view.name, collections.deque())
            times.append(now)
            while times and times[0] < now - RATE_WINDOW:
                times.popleft()

    def rate(self, member: str) -> float:
        now = time.monotonic()
        with self._lock:
            times = self._times.get(member, ())
            return sum(1 for t in times if t >= now - RATE_WINDOW) / RATE_WINDOW

    def lag(self, ends: Mapping[Partition, int], baseline: Mapping[Partition, int]) -> dict[
        Partition, int
    ]:
        """End offset minus the newest consumed position (or the phase's start offset)."""
        with self._lock:
            return {
                tp: max(end - max(self.positions.get(tp, 0), baseline.get(tp, 0)), 0)
                for tp, end in ends.items()
            }


class EndOffsets:
    """Log end offsets of the demo's partitions through one admin client (bounded calls)."""

    def __init__(self, bootstrap: str, counts: Mapping[str, int]) -> None:
        from kafka import KafkaAdminClient, TopicPartition
        from kafka.protocol.consumer.offsets import OffsetSpec

        self._admin = KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","),
            client_id="kafka-assignors-demo-view",
            request_timeout_ms=5000,
        )
        self._specs = {
            TopicPartition(t, p): OffsetSpec.LATEST for t, n in counts.items() for p in range(n)
        }
        self.last: dict[Partition, int] = {}

    def read(self) -> dict[Partition, int]:
        try:
            got = self._admin.list_partition_offsets(self._specs, timeout_ms=5000)
            self.last = {(tp.topic, tp.partition): int(o.offset) for tp, o in got.items()}
        except Exception as exc:  # the view goes on with the last numbers
            log.debug("end offsets: %s", exc)
        return dict(self.last)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._admin.close()


@dataclass
class Snapshot:
    """One tick of the view."""

    phase: str
    strategy: str | None
    generation: int
    members: list[tuple[str, int, float, int, str]]  # name, partitions, msg/s, lag, state
    count_spread: int
    rate_imbalance: float | None
    total_lag: int
    #: the members' own rebalance metrics (None: no member reports any)
    metrics: GroupFigures | None = None


@dataclass
class PhaseFigures:
    """What the summary needs from the view's ticks of one phase."""

    peak_lag: int = 0
    spreads: list[int] = field(default_factory=list)
    rate_imbalances: list[float] = field(default_factory=list)


class LiveView(threading.Thread):
    """Redraws (TTY) or prints (plain) the group every ``interval`` seconds until stopped."""

    def __init__(
        self, out: TextIO, stats: Stats, ends: EndOffsets, *, tty: bool, interval: float = 1.0,
        plain_every: float = 3.0,
    ) -> None:
        super().__init__(daemon=True, name="demo-view")
        self.out, self.stats, self.ends, self.tty = out, stats, ends, tty
        self.interval, self.plain_every = interval, plain_every
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._group: Any = None
        self._phase = ""
        self._baseline: dict[Partition, int] = {}
        self.figures: dict[str, PhaseFigures] = {}
        self._drawn = 0
        self._last_plain = 0.0

    def watch(self, phase: str, group: Any, baseline: Mapping[Partition, int]) -> None:
        with self._lock:
            self._phase, self._group, self._baseline = phase, group, dict(baseline)
            self.figures.setdefault(phase, PhaseFigures())

    def step(self, text: str) -> None:
        """A line about what the demo does now (kept above the redrawn block)."""
        with self._lock:
            self._clear()
            self.out.write(f"[{self._phase or 'demo'}] {text}\n")
            self.out.flush()

    def unwatch(self) -> None:
        with self._lock:
            self._group = None

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)
        with self._lock:
            self._drawn = 0

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            try:
                self.tick()
            except Exception:
                log.debug("live view tick failed", exc_info=True)

    def snapshot(self) -> Snapshot | None:
        with self._lock:
            group, phase, baseline = self._group, self._phase, dict(self._baseline)
        if group is None:
            return None
        lag = self.stats.lag(self.ends.read(), baseline)
        rows = []
        generation = -1
        views = group.members()
        for v in views:
            if not v.alive or v.stopping:
                continue
            generation = max(generation, v.generation)
            member_lag = sum(lag.get(tp, 0) for tp in v.assignment)
            rows.append((v.name, len(v.assignment), self.stats.rate(v.name), member_lag, v.state))
        counts = [r[1] for r in rows]
        rates = [r[2] for r in rows]
        mean = sum(rates) / len(rates) if rates else 0.0
        return Snapshot(
            phase, group.protocol(), generation, rows,
            max(counts) - min(counts) if counts else 0,
            max(rates) / mean if mean > 0 else None,
            sum(lag.values()),
            group_figures(member_reports(views)),
        )

    def tick(self) -> None:
        snap = self.snapshot()
        if snap is None:
            return
        with self._lock:
            figures = self.figures.setdefault(snap.phase, PhaseFigures())
            figures.peak_lag = max(figures.peak_lag, snap.total_lag)
            if all(m[4] == "STABLE" for m in snap.members) and snap.members:
                figures.spreads.append(snap.count_spread)
                if snap.rate_imbalance is not None:
                    figures.rate_imbalances.append(snap.rate_imbalance)
            lines = render(snap)
            if self.tty:
                self._clear()
                self.out.write("\n".join(lines) + "\n")
                self._drawn = len(lines)
            elif time.monotonic() - self._last_plain >= self.plain_every:
                self._last_plain = time.monotonic()
                self.out.write("\n".join(f"live {line}" for line in lines) + "\n")
            self.out.flush()

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self.out.write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0


def render(snap: Snapshot) -> list[str]:
    ratio = "-" if snap.rate_imbalance is None else f"{snap.rate_imbalance:.2f}"
    lines = [
        f"group [{snap.phase}] strategy={snap.strategy or '(rebalancing)'} "
        f"generation={snap.generation} members={len(snap.members)} "
        f"spread={snap.count_spread} msg/s-imbalance={ratio} lag={snap.total_lag}"
    ]
    for name, n, rate, lag, state in snap.members:
        lines.append(
            f"  member {name:<4} partitions={n:<3} msg/s={rate:7.1f} lag={lag:<6} {state}"
        )
    lines.append(render_line(snap.metrics))
    return lines
