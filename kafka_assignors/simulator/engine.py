"""Run an assignor over a scenario the way a kafka-python group leader runs it.

Every member has its own assignor instance.  At each rebalance every member
builds its subscription with ``metadata()`` (after ``on_assignment`` told it
what it got last time), the subscription is encoded and decoded as on the
wire, the leader (the longest-standing member) calls ``assign(cluster,
members)``, and each member decodes its part and calls ``on_assignment``.
Cooperative assignors get a second round when the first one revoked
partitions, as KIP-429 clients rejoin.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from ..core.model import Assignment
from ..kafka_python.compat import RebalanceProtocol, wire_types
from .metrics import Weigher, balance, movement
from .registry import new_instance, resolve_assignor
from .scenario import (
    ADD_PARTITIONS,
    INITIAL,
    Event,
    Scenario,
    SimMember,
)

# kafka-python 3's messages (the simulator runs on kafka-python 3; on 2.x this module still
# imports, as the member processes of kafka_assignors.embedded need its registry)
ConsumerProtocolSubscription, ConsumerProtocolAssignment = wire_types()

#: Rounds after which a cooperative rebalance that keeps revoking is cut short.
MAX_ROUNDS = 4


@dataclass(slots=True)
class StepResult:
    """The figures of one rebalance.  Metric fields are None when the assignor failed."""

    step: int
    kind: str
    label: str
    members: int
    partitions: int
    rounds: int
    seconds: float
    count_imbalance: int | None = None
    #: Worst per-topic spread (most minus fewest of one topic's partitions per subscriber).
    topic_spread: int | None = None
    load_imbalance: float | None = None
    moved: int | None = None
    moved_weight: float | None = None
    #: Moves away from members that stayed in the group (not forced by a departure).
    moved_from_stayers: int | None = None
    rack_locality: float | None = None
    copartition_violations: int | None = None
    idle_members: int | None = None
    unassigned: int | None = None
    duplicated: int | None = None
    error: str | None = None
    #: member -> load (summed weights); and the assignment, with ``keep_assignments``.
    loads: dict[str, float] = field(default_factory=dict)
    assignment: Assignment | None = None

    def row(self) -> dict[str, Any]:
        """The flat fields (no loads or assignment), for tables and Parquet."""
        skip = ("loads", "assignment")
        return {k: getattr(self, k) for k in self.__slots__ if k not in skip}


class _Cluster:
    """The leader's cluster metadata: the partition counts of the group's topics."""

    def __init__(self, counts: Mapping[str, int], subscribed: set[str]) -> None:
        self.counts = counts
        self.subscribed = subscribed

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return {t for t in self.subscribed if t in self.counts}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.counts.get(topic)
        return set(range(n)) if n else None


class _Member:
    """One consumer: its own assignor instance and what it owns."""

    def __init__(self, spec: SimMember, assignor: Any, weigh: Weigher) -> None:
        self.spec = spec
        self.assignor = new_instance(assignor, spec.rack, weigh.of)
        # Read by our kafka-python binding to learn the consumer's protocol, as from kafka-python's
        # coordinator (the object that calls metadata()).
        protocols = self.assignor.supported_protocols()
        self._rebalance_protocol = max(protocols) if protocols else RebalanceProtocol.EAGER
        self.owned: dict[str, list[int]] = {}
        # (bytes, decoded) of the last subscription sent and assignment received
        self._sent: tuple[bytes, Any] = (b"", None)
        self._last: tuple[bytes, Any] = (b"", None)

    def join(self) -> Any:
        raw = self.assignor.metadata(set(self.spec.topics)).encode()
        if raw != self._sent[0]:  # eager built-ins send the same bytes every time
            self._sent = (raw, ConsumerProtocolSubscription.decode(raw))
        return SimpleNamespace(
            member_id=self.spec.member_id,
            group_instance_id=self.spec.instance_id,
            metadata=self._sent[1],
        )

    def receive(self, assignment: Any, generation: int) -> None:
        if assignment is None:
            assignment = ConsumerProtocolAssignment(0, [], b"")
        raw = assignment.encode()
        if raw != self._last[0]:  # decoding is the costly half; unchanged bytes decode alike
            self._last = (raw, ConsumerProtocolAssignment.decode(raw))
        decoded = self._last[1]
        self.assignor.on_assignment(decoded, generation)
        self.owned = {t: sorted(ps) for t, ps in decoded.assigned_partitions if ps}


def simulate(
    scenario: Scenario, assignor: str | Any, *, keep_assignments: bool = False
) -> Iterator[StepResult]:
    """Yield one :class:`StepResult` per rebalance of ``scenario`` under ``assignor``.

    ``assignor`` is a wire name, an import path ``module:Class``, a class or an
    instance (copied per member).  An assignor that raises is recorded in
    ``error`` for that step; the group then keeps its previous assignment, less
    the members that left, and the simulation goes on.
    """
    cls = resolve_assignor(assignor)
    with _quiet_leader():
        yield from _steps(scenario, cls, keep_assignments)


@contextlib.contextmanager
def _quiet_leader() -> Iterator[None]:
    """Our leader logs every assignment at INFO: right for a live group, noise here."""
    logger = logging.getLogger("kafka_assignors")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def _steps(scenario: Scenario, cls: Any, keep_assignments: bool) -> Iterator[StepResult]:
    counts = dict(scenario.topics)
    weigh = Weigher(scenario.weights)
    group: dict[str, _Member] = {}  # join order; the first one leads
    for spec in scenario.members:
        group[spec.member_id] = _Member(spec, cls, weigh)
    generation = 0
    previous: Assignment = {}
    events = (Event(INITIAL, label=INITIAL), *scenario.events)
    for step, event in enumerate(events):
        stayed = set(group) - set(event.leaves)
        for member_id in event.leaves:
            group.pop(member_id, None)
        for spec in event.joins:
            group[spec.member_id] = _Member(spec, cls, weigh)
        if event.kind == ADD_PARTITIONS:
            for topic, n in event.partitions.items():
                counts[topic] = max(n, counts.get(topic, 0))
        members = [m.spec for m in group.values()]
        subscribed = {t for m in members for t in m.topics}
        n_partitions = sum(counts.get(t, 0) for t in subscribed)
        result = StepResult(
            step, event.kind, event.label or event.kind, len(group), n_partitions, 0, 0.0
        )
        if not group:
            result.error = "the group is empty"
            yield result
            continue
        try:
            generation, result.rounds, result.seconds = _rebalance(
                group, _Cluster(counts, subscribed), generation
            )
        except Exception as exc:  # the assignor's failure is a result, not a crash
            result.error = f"{type(exc).__name__}: {exc}"
            for m in group.values():
                m.owned = {t: list(ps) for t, ps in previous.get(m.spec.member_id, {}).items()}
        current = {m.spec.member_id: m.owned for m in group.values()}
        if result.error is None:
            figures = balance(current, members, counts, weigh, scenario.replica_racks)
            result.count_imbalance = figures.count_imbalance
            result.topic_spread = figures.topic_spread
            result.load_imbalance = figures.load_imbalance
            result.idle_members = figures.idle_members
            result.unassigned = figures.unassigned
            result.duplicated = figures.duplicated
            result.rack_locality = figures.rack_locality
            result.copartition_violations = figures.copartition_violations
            result.loads = figures.loads
            moved, weight, from_stayers = movement(previous, current, counts, stayed, weigh)
            result.moved, result.moved_weight, result.moved_from_stayers = (
                moved,
                weight,
                from_stayers,
            )
        if keep_assignments:
            result.assignment = {
                k: {t: list(ps) for t, ps in v.items()} for k, v in current.items()
            }
        previous = current
        yield result


def _rebalance(
    group: Mapping[str, _Member], cluster: _Cluster, generation: int
) -> tuple[int, int, float]:
    """One rebalance (all its rounds); returns (generation, rounds, seconds in assign)."""
    leader = next(iter(group.values()))
    cooperative = leader._rebalance_protocol == RebalanceProtocol.COOPERATIVE
    seconds = 0.0
    for rounds in range(1, MAX_ROUNDS + 1):
        if not cooperative:
            for m in group.values():
                m.owned = {}  # eager members revoke everything before they rejoin
        joined = [m.join() for m in group.values()]
        started = time.perf_counter()
        sent = leader.assignor.assign(cluster, joined)
        seconds += time.perf_counter() - started
        generation += 1
        revoked = False
        for member_id, m in group.items():
            before = m.owned
            m.receive(sent.get(member_id), generation)
            revoked = revoked or any(
                not set(ps) <= set(m.owned.get(t, ())) for t, ps in before.items()
            )
        if not (cooperative and revoked):
            return generation, rounds, seconds
    return generation, MAX_ROUNDS, seconds


def run_scenario(
    scenario: Scenario, assignor: str | Any, *, keep_assignments: bool = False
) -> list[StepResult]:
    """All steps of :func:`simulate` as a list."""
    return list(simulate(scenario, assignor, keep_assignments=keep_assignments))
