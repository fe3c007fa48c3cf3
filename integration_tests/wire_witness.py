"""What the rebalance-metrics live tests observe themselves, and the checks against it.

A test records its observed member's JoinGroup/SyncGroup exchanges on the member's own
client connection (a spy below any wrapper of ours: send time, answer time, error code,
and the assignment a leader sent) and its rebalance callbacks (timed by the callbacks
themselves).  :class:`Expectations` turns that into what the metrics must say: counters
exactly, latencies between bounds the test's own clock took.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

JOIN_GROUP, SYNC_GROUP = 11, 14
MEMBER_ID_REQUIRED = 79
COORD = "consumer-coordinator-metrics"
QUALITY = "kafka-assignors-assignment-metrics"
TP = tuple[str, int]


@dataclass
class Exchange:
    """One JoinGroup/SyncGroup request of the observed member and its outcome."""

    api_key: int
    sent: float
    received: float | None = None
    error: int | None = None  # None: no response yet, or none at all (``raised``)
    raised: bool = False
    assignment: dict[str, frozenset[TP]] | None = None  # a leader's SyncGroup: what it sent

    @property
    def ok(self) -> bool:
        return self.received is not None and self.error == 0

    @property
    def failed(self) -> bool:
        return self.raised or (self.error is not None and self.error != 0)


@dataclass
class Call:
    kind: str
    start: float
    end: float
    partitions: frozenset[TP]


@dataclass
class Observed:
    exchanges: list[Exchange] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


@dataclass
class Step:
    """One thing the test did and what it observed until the group settled."""

    name: str
    trigger: float
    exchanges: list[Exchange]
    calls: list[Call]
    read: float  # just after the metrics were read (after everything above)
    values: dict[str, dict[str, float]]
    before: Observed  # everything observed until the read, this step included
    partitions: int  # of the topics subscribed in this step


class Expectations:
    """What the metrics must say, from the exchanges and calls observed so far."""

    def __init__(self, *, assigned_each_rebalance: bool) -> None:
        #: the client calls the assigned listener after every rebalance (aiokafka, Java)
        self.assigned_each_rebalance = assigned_each_rebalance
        #: listener kind -> the longest step span in which it was called (the windowed max
        #: may still hold a sample of an earlier step; each sample lies within its step)
        self.seen_kinds: dict[str, float] = {}
        self.held: dict[str, frozenset[TP]] = {}  # member -> partitions, as last synced
        self.moved_total = 0
        self.assignments = 0
        self.latency_total_low = 0.0
        self.latency_total_high = 0.0
        self.latency_high = 0.0
        #: most partitions a cooperative first round withheld, in any step
        self.withheld_seen = 0

    def check(self, step: Step) -> None:
        v = step.values[COORD]
        q = step.values[QUALITY]
        seen = step.before
        ex = seen.exchanges
        ok_syncs = [e for e in ex if e.api_key == SYNC_GROUP and e.ok]
        failed = [e for e in ex if e.failed]
        assert v["rebalance-total"] == len(ok_syncs), step.name
        assert v["failed-rebalance-total"] == len(failed), step.name
        if self.assigned_each_rebalance:
            assigned_calls = [c for c in seen.calls if c.kind == "assigned"]
            assert len(assigned_calls) == len(ok_syncs), step.name

        # rebalance latency: from the first JoinGroup after the previous success to the
        # successful SyncGroup, as the wire saw it (the metric's span contains it); the
        # step's rebalances all lie between its trigger and the read
        lows = []
        start: float | None = None
        for e in step.exchanges:
            if e.api_key == JOIN_GROUP and start is None:
                start = e.sent
            if e.api_key == SYNC_GROUP and e.ok:
                assert start is not None and e.received is not None
                lows.append(e.received - start)
                start = None
        span = (step.read - step.trigger) * 1000
        self.latency_total_low += sum(lows) * 1000
        self.latency_total_high += span
        self.latency_high = max(self.latency_high, span)
        total = v["rebalance-latency-total"]
        assert self.latency_total_low <= total <= self.latency_total_high, (step.name, total)
        if lows:
            assert lows[-1] * 1000 <= v["rebalance-latency-max"] <= self.latency_high
            assert v["rebalance-rate-per-hour"] > 0
        last_ok = ok_syncs[-1].received
        assert last_ok is not None
        assert 0 <= v["last-rebalance-seconds-ago"] <= math.floor(step.read - last_ok)

        # the listener, timed around the user's call: at least the call's own duration
        for kind in ("revoked", "assigned", "lost"):
            any_calls = [c for c in step.calls if c.kind == kind]
            calls = [c for c in any_calls if c.partitions]
            value = v[f"partition-{kind}-latency-max"]
            if calls:
                self.seen_kinds[kind] = high = max(self.seen_kinds.get(kind, 0.0), span)
                own = calls[-1].end - calls[-1].start
                assert own * 1000 <= value <= high, (step.name, kind, own, value, high)
            elif any_calls:  # a call with no partitions may be timed too, as Java times it
                self.seen_kinds[kind] = high = max(self.seen_kinds.get(kind, 0.0), span)
                assert value == -math.inf or value <= high, (step.name, kind, value, high)
            elif kind not in self.seen_kinds:
                assert value == -math.inf, (step.name, kind)  # no sample (Max of none)

        # the leader's figures, from the assignments it sent on the wire
        last: Exchange | None = None
        last_moved = 0
        for e in step.exchanges:
            if e.api_key != SYNC_GROUP or e.assignment is None:
                continue
            moved = sum(len(self.held[m] - e.assignment[m]) for m in e.assignment
                        if m in self.held)
            self.moved_total += moved
            self.assignments += 1
            if e.ok:
                self.held = dict(e.assignment)
            last = e
            last_moved = moved
        assert q["assignments-total"] == self.assignments, step.name
        assert q["partitions-moved-total"] == self.moved_total, step.name
        assert q["partitions-moved-last"] == last_moved, step.name
        assert last is not None and last.assignment is not None, step.name
        # settled: the last assignment withheld nothing, so what was sent is its target
        assert sum(map(len, last.assignment.values())) == step.partitions, step.name
        assert q["partitions-withheld-last"] == 0, step.name
        counts = [len(ps) for ps in last.assignment.values()]
        assert q["count-spread-last"] == max(counts) - min(counts), step.name
        withheld = [step.partitions - sum(map(len, e.assignment.values()))
                    for e in step.exchanges if e.assignment is not None]
        self.withheld_seen = max([self.withheld_seen, *withheld])
        # the assignor ran between the JoinGroup answer and the leader's SyncGroup
        joined = [x.received for x in step.exchanges if x.api_key == JOIN_GROUP and x.ok
                  and x.received is not None and x.received <= last.sent]
        assert 0 <= q["assignment-seconds-last"] <= last.sent - joined[-1], step.name
