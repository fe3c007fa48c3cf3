"""Shapes, subscription patterns and the one-cell measurement behind ``benchmarks.assignors``.

One *cell* is (shape, subscription mode, event, assignor).  :func:`run_cell` runs in
its own process: it builds the group exactly the way real members would (each
member's own assignor instance makes its subscription, which goes through an
encode/decode round trip like the broker's), then times only the leader's
``assign(cluster, members)`` call.
"""

from __future__ import annotations

import gc
import importlib
import pickle
import random
import resource
import signal
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

# --- what is compared -----------------------------------------------------------------

#: wire name -> "module:Class"; kafka-python's four, then ours.
ASSIGNORS: dict[str, str] = {
    "range": "kafka.coordinator.assignors.range:RangePartitionAssignor",
    "roundrobin": "kafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
    "sticky": "kafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor",
    "cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky:CooperativeStickyAssignor"
    ),
    "balanced-sticky": "kafka_assignors:BalancedStickyAssignor",
    "cooperative-balanced-sticky": "kafka_assignors:CooperativeBalancedStickyAssignor",
}
#: Ours, each with the kafka-python assignor it replaces (for the "x faster" ratio).
OURS: dict[str, str] = {
    "balanced-sticky": "sticky",
    "cooperative-balanced-sticky": "cooperative-sticky",
}
#: kafka-python's assignors whose time grows too fast to run at every size.
SLOW: frozenset[str] = frozenset({"sticky", "cooperative-sticky"})

#: The special-purpose assignors (``--suite new``), each eager and cooperative.
NEW_ASSIGNORS: dict[str, str] = {
    f"{prefix}{name}": f"kafka_assignors:{'Cooperative' if prefix else ''}{cls}"
    for name, cls in (
        ("load-aware", "LoadAwareAssignor"),
        ("rack-aware", "RackAwareAssignor"),
        ("co-partitioned", "CoPartitionedAssignor"),
        ("pinned", "PinnedAssignor"),
        ("broadcast", "BroadcastAssignor"),
    )
    for prefix in ("", "cooperative-")
}
#: What ``--suite new`` runs, in table order: kafka-python's range and roundrobin (the
#: baseline), kafka-python's sticky once (fresh only: ~25-130 s a call), balanced-sticky
#: (what load-aware and rack-aware fall back to), then the new ones.
NEW_SUITE_ASSIGNORS: tuple[str, ...] = (
    "range",
    "roundrobin",
    "sticky",
    "balanced-sticky",
    *NEW_ASSIGNORS,
)
#: Assignors that ``--suite new`` runs on the fresh group only.
NEW_SUITE_FRESH_ONLY: frozenset[str] = frozenset({"sticky"})
SUITES = ("default", "new")

MODES = ("uniform", "unequal")
EVENTS = ("fresh", "leave")


@dataclass(frozen=True)
class Shape:
    """A group: ``topics`` topics of ``per_topic`` partitions each, ``consumers`` members."""

    name: str
    topics: int
    per_topic: int
    consumers: int

    @property
    def partitions(self) -> int:
        return self.topics * self.per_topic

    @property
    def label(self) -> str:
        return f"{self.partitions:,} x {self.consumers:,}"


SHAPES: tuple[Shape, ...] = (
    Shape("1k", topics=10, per_topic=100, consumers=50),
    Shape("10k", topics=100, per_topic=100, consumers=1_000),
    Shape("100k", topics=500, per_topic=200, consumers=1_000),
    Shape("1m", topics=500, per_topic=2_000, consumers=2_000),
)
QUICK_SHAPES: tuple[Shape, ...] = (
    Shape("1k", topics=10, per_topic=100, consumers=50),
    Shape("2k", topics=20, per_topic=100, consumers=100),
)


#: ``--suite new``: 10,000 partitions (100 topics x 100) x 1,000 consumers, uniform; and
#: the same 10,000 x 1,000 as 10 topics x 1,000 partitions ("join") for co-partitioned,
#: whose unit is a partition number: with 100 numbers 900 of 1,000 members must idle.
NEW_SUITE_SHAPES: tuple[Shape, ...] = (
    Shape("10k", topics=100, per_topic=100, consumers=1_000),
    Shape("10k-join", topics=10, per_topic=1_000, consumers=1_000),
)
NEW_SUITE_QUICK_SHAPES: tuple[Shape, ...] = (
    Shape("1k", topics=10, per_topic=100, consumers=50),
    Shape("1k-join", topics=2, per_topic=500, consumers=50),
)
#: The assignors ``--suite new`` runs on its "join" shapes.
JOIN_SHAPE_ASSIGNORS: frozenset[str] = frozenset(
    {"range", "roundrobin", "co-partitioned", "cooperative-co-partitioned"}
)


def topic_names(shape: Shape) -> list[str]:
    return [f"topic-{t:04d}" for t in range(shape.topics)]


def member_ids(shape: Shape) -> list[str]:
    return [f"consumer-{i:05d}" for i in range(shape.consumers)]


def subscription(shape: Shape, mode: str, index: int) -> list[str]:
    """The topics consumer ``index`` subscribes to.

    ``uniform``: every consumer subscribes to every topic.

    ``unequal`` (a rolling deploy that adds topics, or regex subscriptions seeing
    different topic lists): even-numbered consumers subscribe to every topic;
    odd-numbered consumer ``i`` subscribes to the first 20 %, 40 %, 60 % or 80 % of
    the topics (in name order), cycling with ``(i // 2) % 4``.  So half the group
    sees everything, and the other half is split evenly between four prefixes.
    """
    names = topic_names(shape)
    if mode == "uniform" or index % 2 == 0:
        return names
    if mode != "unequal":
        raise ValueError(f"unknown subscription mode {mode!r}")
    fraction = ((index // 2) % 4 + 1) / 5
    return names[: max(1, round(len(names) * fraction))]


def leaving_member(shape: Shape) -> int:
    """Index of the member that leaves in the ``leave`` event: the middle one (even)."""
    return shape.consumers // 2


# --- the fakes kafka-python hands an assignor ----------------------------------------


@dataclass(frozen=True)
class PartitionMetadata:
    """kafka-python's per-partition metadata, the field rack-aware assignors read."""

    replica_nodes: tuple[int, ...]


@dataclass(frozen=True)
class BrokerMetadata:
    node_id: int
    rack: str | None


class Cluster:
    """The part of kafka-python's ``ClusterMetadata`` assignors use (new sets on each call).

    With ``replicas`` (topic -> partition -> broker ids) and ``broker_racks``, it also
    holds replica placement where ``ClusterMetadata`` does: ``_partitions[topic][p]
    .replica_nodes`` and ``broker_metadata(node).rack`` (what
    ``kafka_assignors.kafka_python.racks.replica_racks`` reads).
    """

    def __init__(
        self,
        counts: Mapping[str, int],
        replicas: Mapping[str, Sequence[tuple[int, ...]]] | None = None,
        broker_racks: Mapping[int, str] | None = None,
    ) -> None:
        self._partitions: dict[str, dict[int, PartitionMetadata | None]] = {
            t: (
                {p: PartitionMetadata(nodes) for p, nodes in enumerate(replicas[t])}
                if replicas and t in replicas
                else dict.fromkeys(range(n))
            )
            for t, n in counts.items()
        }
        self._brokers = {b: BrokerMetadata(b, r) for b, r in (broker_racks or {}).items()}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        parts = self._partitions.get(topic)
        return None if parts is None else set(parts.keys())

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def broker_metadata(self, broker_id: int) -> BrokerMetadata | None:
        return self._brokers.get(broker_id)

    def brokers(self) -> set[BrokerMetadata]:
        return set(self._brokers.values())


@dataclass
class Member:
    """A JoinGroup response member after the coordinator decoded its metadata."""

    member_id: str
    group_instance_id: str | None
    metadata: Any


def load_assignor(name: str) -> type[Any]:
    module, _, cls = (ASSIGNORS | NEW_ASSIGNORS)[name].partition(":")
    result: type[Any] = getattr(importlib.import_module(module), cls)
    return result


def wire_subscription(instance: Any, topics: Sequence[str]) -> bytes:
    """A member's subscription as it travels to the broker."""
    return bytes(instance.metadata(set(topics)).encode())


def decode_subscription(raw: bytes) -> Any:
    """What the leader's coordinator does with each member's metadata."""
    return ConsumerProtocolSubscription.decode(raw)


# --- how the members are configured ----------------------------------------------------
#
# The default suite builds every member's assignor with no arguments.  ``--suite new``
# gives each special-purpose assignor a realistic configuration, member by member
# (each member's own instance makes its subscription, so pins and racks travel on the
# wire as they would), and the same cluster to every assignor in the run:

#: racks (zones); member ``i`` runs in ``RACKS[i % 3]``, broker ``b`` in ``RACKS[b % 3]``
RACKS: tuple[str, ...] = ("rack-a", "rack-b", "rack-c")
BROKERS = 6
#: replicas per partition: with 2 of the 3 racks holding each partition, locality is a
#: real choice (with 3 replicas in 3 racks every partition is local everywhere, and
#: rack-aware is exactly balanced-sticky, as KIP-881 specifies)
REPLICATION = 2
LAYOUT_SEED = 1
#: load-aware: Zipf(s) weights inside each topic, ranks shuffled with this seed
ZIPF_S = 1.1
ZIPF_SEED = 0
#: pinned: every 10th member pins 3 partitions (its own; no two members pin the same)
PIN_EVERY = 10
PINS_PER_MEMBER = 3

#: (topic, partition) -> weight
Weights = dict[tuple[str, int], float]


def member_rack(index: int) -> str:
    return RACKS[index % len(RACKS)]


def broker_rack(broker: int) -> str:
    return RACKS[broker % len(RACKS)]


def replica_layout(shape: Shape) -> dict[str, list[tuple[int, ...]]]:
    """Each partition: a random leader broker (seeded), then the next brokers.

    Consecutive brokers sit in consecutive racks, so the replicas of each partition are
    in ``REPLICATION`` different racks.  (A leader of ``(t * per_topic + p) % 6`` would
    line up with roundrobin's member order and make it look rack-aware by accident.)
    """
    rnd = random.Random(LAYOUT_SEED)
    return {
        name: [
            tuple((leader + r) % BROKERS for r in range(REPLICATION))
            for leader in (rnd.randrange(BROKERS) for _ in range(shape.per_topic))
        ]
        for name in topic_names(shape)
    }


def zipf_weights(shape: Shape) -> Weights:
    """Zipf(1.1) inside each topic, as ``benchmarks.load_aware`` (fixed seed)."""
    rnd = random.Random(ZIPF_SEED)
    out: Weights = {}
    for name in topic_names(shape):
        ranks = list(range(1, shape.per_topic + 1))
        rnd.shuffle(ranks)
        out.update(((name, p), 1 / r**ZIPF_S) for p, r in enumerate(ranks))
    return out


def member_pins(shape: Shape, index: int) -> list[str]:
    """The pins of member ``index``: none unless ``index % 10 == 0``."""
    if index % PIN_EVERY:
        return []
    k = index // PIN_EVERY
    names = topic_names(shape)
    return [
        f"{names[(3 * k + j) % shape.topics]}:{(7 * k + j) % shape.per_topic}"
        for j in range(PINS_PER_MEMBER)
    ]


@dataclass
class Workload:
    """How each member's assignor is built, and the cluster metadata the leader sees."""

    #: member index -> that member's assignor instance
    make: Callable[[int], Any]
    cluster: Cluster
    #: ``--suite new`` only: what the quality figures are computed against
    weights: Weights | None = None


def workload(suite: str, assignor: str, shape: Shape) -> Workload:
    cls = load_assignor(assignor)
    counts = dict.fromkeys(topic_names(shape), shape.per_topic)

    def plain_instance(_index: int) -> Any:
        return cls()

    if suite == "default":
        return Workload(plain_instance, Cluster(counts))
    if suite != "new":
        raise ValueError(f"unknown suite {suite!r}")
    cluster = Cluster(counts, replica_layout(shape), {b: broker_rack(b) for b in range(BROKERS)})
    weights = zipf_weights(shape)
    base = assignor.removeprefix("cooperative-")
    make: Callable[[int], Any] = plain_instance
    if base == "load-aware":
        from kafka_assignors import FixedWeights

        # every member is configured alike; one source object (only the leader's is read)
        source = FixedWeights(weights)

        def make(_index: int) -> Any:
            return cls(weights=source)

    elif base == "rack-aware":

        def make(index: int) -> Any:
            return cls(client_rack=member_rack(index))

    elif base == "pinned":

        def make(index: int) -> Any:
            return cls(pinned=member_pins(shape, index))

    return Workload(make, cluster, weights)


def quality(
    result: Plain,
    subscriptions: Mapping[str, Sequence[str]],
    shape: Shape,
    weights: Weights,
) -> dict[str, float]:
    """What each special-purpose assignor is for, measured on any assignment.

    *load_max* / *load_bound*: heaviest member's weight over the mean (the total
    subscribed weight over the members), and the best possible, max(1, heaviest
    partition / mean).  *load_cv*: standard deviation of member weights over the
    mean.  *local_pct*: assigned partitions whose member runs in a rack holding a
    replica.  *pins_kept_pct*: partitions pinned by a member still in the group that
    it got.  *colocated_pct*: partition numbers whose partitions of every topic (all
    have the same count here) went to one member.
    """
    index_of = {m: i for i, m in enumerate(member_ids(shape))}
    members = list(subscriptions)
    loads = [sum(weights[t, p] for t, ps in result.get(m, {}).items() for p in ps) for m in members]
    wanted = {t for ts in subscriptions.values() for t in ts}
    total = sum(w for (t, _p), w in weights.items() if t in wanted)
    mean = total / len(members)
    layout = replica_layout(shape)
    assigned = local = 0
    owner: dict[tuple[str, int], str] = {}
    for m in members:
        rack = member_rack(index_of[m])
        for t, ps in result.get(m, {}).items():
            nodes = layout[t]
            for p in ps:
                assigned += 1
                local += any(broker_rack(b) == rack for b in nodes[p])
                owner[t, p] = m
    pins = [
        (m, t, int(p))
        for m in members
        for pin in member_pins(shape, index_of[m])
        for t, _, p in (pin.partition(":"),)
    ]
    kept = sum(owner.get((t, p)) == m for m, t, p in pins)
    names = topic_names(shape)
    together = sum(
        len({owner.get((t, p)) for t in names}) == 1 and (names[0], p) in owner
        for p in range(shape.per_topic)
    )
    return {
        "load_max": round(max(loads) / mean, 4),
        "load_bound": round(max(1.0, max(weights.values()) / mean), 4),
        "load_cv": round(statistics.pstdev(loads) / mean, 4),
        "local_pct": round(100 * local / assigned, 2) if assigned else 0.0,
        "pins_kept_pct": round(100 * kept / len(pins), 2) if pins else 0.0,
        "colocated_pct": round(100 * together / shape.per_topic, 2),
    }


# --- measuring -------------------------------------------------------------------------


class CellTimeout(Exception):
    """The assign call ran past the cell's time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt pure-Python code after ``seconds`` (SIGALRM; main thread only)."""

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise CellTimeout(f"assign() ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _status_kib(field_name: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class PeakMemory:
    """Peak RSS growth of one block, in MiB.

    Linux lets a process reset its RSS high-water mark (``/proc/self/clear_refs``,
    value 5); the growth is then ``VmHWM`` after minus ``VmRSS`` before.  Elsewhere
    it falls back to ``ru_maxrss`` growth, which under-reports when setup already
    peaked higher than the block does.
    """

    def __init__(self) -> None:
        self.method = "VmHWM-VmRSS"
        self.before_kib = 0
        self.mib = 0.0

    def __enter__(self) -> PeakMemory:
        gc.collect()
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            rss = _status_kib("VmRSS")
        except OSError:
            rss = None
        if rss is None:
            self.method = "ru_maxrss"
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.before_kib = rss
        return self

    def __exit__(self, *exc: object) -> None:
        if self.method == "ru_maxrss":
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        else:
            peak = _status_kib("VmHWM") or 0
        self.mib = max(0, peak - self.before_kib) / 1024


# --- what an assignment did ----------------------------------------------------------

#: member -> topic -> partitions, as plain data (picklable, comparable).
Plain = dict[str, dict[str, list[int]]]


def plain(result: Mapping[str, Any]) -> Plain:
    return {m: {t: list(ps) for t, ps in a.assigned_partitions} for m, a in result.items()}


@dataclass
class Figures:
    valid: bool
    problems: list[str]
    assigned: int
    unassigned: int
    moved: int | None
    spread: int


def examine(
    result: Plain,
    subscriptions: Mapping[str, Sequence[str]],
    counts: Mapping[str, int],
    previous: Plain | None,
    *,
    cooperative: bool,
    broadcast: bool = False,
) -> Figures:
    """Check ``result`` and measure it.

    *valid*: every partition is real, goes to at most one member, only to a member
    that subscribes to its topic, and every subscribed partition goes to someone,
    except that a cooperative first round may withhold a partition a remaining
    member still owns (it changes owner in the second round).  *unassigned*:
    subscribed partitions no member got.  *moved*: partitions whose previous owner
    is still in the group but is not their owner now (withheld ones count).
    *spread*: max - min partition count over all members.

    With ``broadcast`` every member must get every partition of its subscription
    instead (so a partition goes to many members), and *moved* counts partitions a
    member had and no longer has.
    """
    if broadcast:
        return _examine_broadcast(result, subscriptions, counts, previous)
    problems: list[str] = []
    owner: dict[tuple[str, int], str] = {}
    sizes = dict.fromkeys(subscriptions, 0)
    for member, topic, ps in _member_lists(result, subscriptions, problems, sizes):
        n = counts.get(topic, 0)
        for p in ps:
            if not 0 <= p < n:
                problems.append(f"{topic}-{p} does not exist")
            if owner.setdefault((topic, p), member) != member:
                problems.append(f"{topic}-{p} assigned twice")
    assigned = sum(sizes.values())
    if assigned != len(owner):
        problems.append(f"{assigned - len(owner)} duplicate assignment(s)")

    held: dict[tuple[str, int], str] = {}  # partition -> its previous owner, still here
    for member, by_topic in (previous or {}).items():
        if member in subscriptions:
            for topic, ps in by_topic.items():
                held.update(dict.fromkeys([(topic, p) for p in ps], member))
    moved = None if previous is None else sum(owner.get(tp) != m for tp, m in held.items())

    wanted = sorted({t for ts in subscriptions.values() for t in ts if t in counts})
    missing = [(t, p) for t in wanted for p in range(counts[t]) if (t, p) not in owner]
    lost = [tp for tp in missing if not (cooperative and tp in held)]
    if lost:
        problems.append(f"{len(lost)} partition(s) given to nobody, e.g. {lost[0]}")
    return Figures(
        valid=not problems,
        problems=problems[:5],
        assigned=len(owner),
        unassigned=len(missing),
        moved=moved,
        spread=max(sizes.values()) - min(sizes.values()) if sizes else 0,
    )


def _member_lists(
    result: Plain,
    subscriptions: Mapping[str, Sequence[str]],
    problems: list[str],
    sizes: dict[str, int],
) -> Iterator[tuple[str, str, Sequence[int]]]:
    """Each (member, topic, partitions) given to a member; notes non-members and
    unsubscribed topics in ``problems`` and counts partitions per member in ``sizes``."""
    for member, by_topic in result.items():
        if member not in subscriptions:
            problems.append(f"assigned to non-member {member}")
            continue
        subscribed = set(subscriptions[member])
        for topic, ps in by_topic.items():
            if topic not in subscribed:
                problems.append(f"{member} got {topic} it does not subscribe to")
            sizes[member] += len(ps)
            yield member, topic, ps


def _examine_broadcast(
    result: Plain,
    subscriptions: Mapping[str, Sequence[str]],
    counts: Mapping[str, int],
    previous: Plain | None,
) -> Figures:
    problems: list[str] = []
    sizes = dict.fromkeys(subscriptions, 0)
    for _ in _member_lists(result, subscriptions, problems, sizes):
        pass
    for member, by_topic in result.items():
        for topic in set(subscriptions.get(member, ())):
            if topic in counts and sorted(by_topic.get(topic, ())) != list(range(counts[topic])):
                problems.append(f"{member} did not get exactly all of {topic}")
    given = {t for by_topic in result.values() for t, ps in by_topic.items() if ps}
    missing = sum(
        counts[t]
        for t in {t for ts in subscriptions.values() for t in ts}
        if t in counts
        if t not in given
    )
    moved = None
    if previous is not None:
        moved = 0
        for member, by_topic in previous.items():
            if member in subscriptions:
                now = result.get(member, {})
                for topic, ps in by_topic.items():
                    have = set(now.get(topic, ()))
                    moved += sum(p not in have for p in ps)
    return Figures(
        valid=not problems,
        problems=problems[:5],
        assigned=sum(sizes.values()),
        unassigned=missing,
        moved=moved,
        spread=max(sizes.values()) - min(sizes.values()) if sizes else 0,
    )


# --- one cell --------------------------------------------------------------------------


@dataclass
class CellSpec:
    shape: Shape
    mode: str
    event: str
    assignor: str
    timeout: float
    #: stop repeating once this much time was spent in timed calls
    budget: float
    max_repeats: int
    #: file the fresh cell writes for the leave cell (and the leave cell reads)
    handoff: str
    #: if set, one more (untimed) call runs under cProfile and its stats go here
    profile: str | None = None
    #: "default" (every member's assignor built without arguments) or "new" (see
    #: :func:`workload`; quality figures too)
    suite: str = "default"


@dataclass
class CellResult:
    status: str  # "ok", "timeout", "error: ...", "skipped: ..."
    seconds: list[float] = field(default_factory=list)
    #: CPU seconds of the same calls (less sensitive to other processes than wall time)
    cpu_seconds: list[float] = field(default_factory=list)
    memory_mib: float | None = None
    memory_method: str | None = None
    valid: bool | None = None
    problems: list[str] = field(default_factory=list)
    unassigned: int | None = None
    moved: int | None = None
    spread: int | None = None
    setup_seconds: float | None = None
    #: ``--suite new``: :func:`quality` of the first assignment (None for broadcast)
    quality: dict[str, float] | None = None

    @property
    def best(self) -> float | None:
        return min(self.seconds) if self.seconds else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu_seconds) if self.cpu_seconds else None


def _warm_up(suite: str, assignor: str) -> None:
    """Import and first-call costs, paid on a tiny group outside the measurement."""
    shape = Shape("warm", topics=2, per_topic=4, consumers=3)
    wl = workload(suite, assignor, shape)
    members = [
        Member(m, None, decode_subscription(wire_subscription(wl.make(i), topic_names(shape))))
        for i, m in enumerate(member_ids(shape))
    ]
    wl.make(0).assign(wl.cluster, members)


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 80 else text[:77] + "..."


def run_cell(spec: CellSpec) -> CellResult:
    """Measure one cell (in a process of its own)."""
    started = time.perf_counter()
    shape = spec.shape
    _warm_up(spec.suite, spec.assignor)
    wl = workload(spec.suite, spec.assignor, shape)
    names = topic_names(shape)
    counts = dict.fromkeys(names, shape.per_topic)
    cluster = wl.cluster
    ids = member_ids(shape)
    topics_of = {m: subscription(shape, spec.mode, i) for i, m in enumerate(ids)}

    previous: Plain | None = None
    if spec.event == "fresh":
        instances = {m: wl.make(i) for i, m in enumerate(ids)}
        wire = {m: wire_subscription(instances[m], topics_of[m]) for m in ids}
    else:
        try:
            with open(spec.handoff, "rb") as f:
                previous, wire = pickle.load(f)
        except OSError:
            return CellResult("skipped: no fresh assignment to start from")
        gone = ids[leaving_member(shape)]
        ids = [m for m in ids if m != gone]
        topics_of.pop(gone)
        instances = {}
    members = [Member(m, None, decode_subscription(wire[m])) for m in ids]
    leader = instances[ids[0]] if instances else wl.make(0)  # ids[0] is member 0
    del wire
    setup = time.perf_counter() - started

    cell = CellResult("ok", setup_seconds=setup)
    first: Plain | None = None
    while len(cell.seconds) < spec.max_repeats:
        gc.collect()
        memory = PeakMemory()
        try:
            with memory, time_limit(spec.timeout):
                c0, t0 = time.process_time(), time.perf_counter()
                result = leader.assign(cluster, members)
                t1, c1 = time.perf_counter(), time.process_time()
                cell.seconds.append(t1 - t0)
                cell.cpu_seconds.append(c1 - c0)
        except CellTimeout:
            if not cell.seconds:
                return CellResult("timeout", setup_seconds=setup)
            break
        except Exception as exc:
            if not cell.seconds:
                return CellResult(f"error: {_short(exc)}", setup_seconds=setup)
            break
        if first is None:
            cell.memory_mib = round(memory.mib, 1)
            cell.memory_method = memory.method
            first = plain(result)
        del result
        if sum(cell.seconds) >= spec.budget:
            break

    assert first is not None
    cooperative = spec.assignor.startswith("cooperative-")
    broadcast = bool(getattr(leader, "broadcast", False))
    figures = examine(
        first, topics_of, counts, previous, cooperative=cooperative, broadcast=broadcast
    )
    if wl.weights is not None and not broadcast:
        cell.quality = quality(first, topics_of, shape, wl.weights)
    cell.valid = figures.valid
    cell.problems = figures.problems
    cell.unassigned = figures.unassigned
    cell.moved = figures.moved
    cell.spread = figures.spread

    if spec.profile:
        import cProfile

        gc.collect()
        profiler = cProfile.Profile()
        profiler.runcall(leader.assign, cluster, members)
        profiler.dump_stats(spec.profile)

    if spec.event == "fresh":
        _hand_off(spec, instances, ids, topics_of, first)
    return cell


def _hand_off(
    spec: CellSpec,
    instances: Mapping[str, Any],
    ids: Sequence[str],
    topics_of: Mapping[str, Sequence[str]],
    result: Plain,
) -> None:
    """Give each surviving member its assignment, and save what it then sends."""
    gone = ids[leaving_member(spec.shape)]
    wire: dict[str, bytes] = {}
    for m in ids:
        if m == gone:
            continue
        assignment = ConsumerProtocolAssignment(0, sorted(result.get(m, {}).items()), b"")
        instances[m].on_assignment(assignment, generation=1)
        wire[m] = wire_subscription(instances[m], topics_of[m])
    path = Path(spec.handoff)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as f:
        pickle.dump((result, wire), f, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)
