"""A scenario grid: cluster shapes x group sizes x subscriptions x weights x racks x churn.

The grid is plain data (what the YAML file of ``kafka-assignors evaluate``
holds)::

    assignors: [range, cooperative-sticky, balanced-sticky]
    clusters:
      - {name: orders, topics: {orders: 12, payments: 12}}
      - {name: wide, topic_count: 20, partitions: 8}      # topics t00..t19
      - {name: measured, profile: profile.json}           # counts and weights measured
    consumers: [3, 6]
    subscriptions: [all, unequal]    # all | unequal | halves
    weights: [uniform, "zipf:1.2"]   # uniform | zipf:S | hot:SHARE | lognormal:SIGMA
    racks: [0, 3]                    # 0 = no racks
    static: [false]                  # true: members have a group.instance.id
    seeds: [1]
    churn:
      steady: [rebalance]
      rolling: [leave, join, leave, join]
      growth: ["scale-out 2", "add-partitions +4", crash]

Every combination is one :class:`Scenario`; a measured cluster uses its
profile's weights instead of the ``weights`` axis.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.model import TopicPartition
from ..load.profile import read_profile
from .churn import expand_events
from .scenario import Scenario, SimMember

SUBSCRIPTIONS = ("all", "unequal", "halves")
WEIGHT_KINDS = ("uniform", "zipf", "hot", "lognormal")
DEFAULT_CHURN = {
    "rolling": ["leave", "join", "crash", "join"],
    "growth": ["scale-out 2", "add-partitions +2", "scale-in 1"],
}
_KEYS = {
    "assignors",
    "clusters",
    "consumers",
    "subscriptions",
    "weights",
    "racks",
    "static",
    "seeds",
    "churn",
    "replication",
    "name",
    "description",
}


class GridError(ValueError):
    """A grid that cannot be expanded, with the reason."""


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    topics: Mapping[str, int]
    weights: Mapping[TopicPartition, float] | None = None  # measured


def load_grid(path: str | Path) -> dict[str, Any]:
    """Read a YAML grid; profile paths in it are taken relative to the file."""
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - yaml comes with the [spark] extra
        raise GridError(
            "reading a YAML grid needs PyYAML: pip install 'kafka-assignors[spark]'"
        ) from exc
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise GridError(f"cannot read scenario grid {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise GridError(f"{path}: a scenario grid is a mapping")
    for c in data.get("clusters") or ():
        if isinstance(c, dict) and "profile" in c:
            c["profile"] = str((path.parent / str(c["profile"])).resolve())
    return data


def expand_grid(grid: Mapping[str, Any]) -> list[Scenario]:
    """Every scenario of the grid, in a stable order."""
    unknown = set(grid) - _KEYS
    if unknown:
        raise GridError(f"unknown grid keys {sorted(unknown)}; known: {sorted(_KEYS)}")
    clusters = [_cluster(c, i) for i, c in enumerate(_list(grid, "clusters", None))]
    consumers = [int(n) for n in _list(grid, "consumers", [3])]
    subscriptions = [str(s) for s in _list(grid, "subscriptions", ["all"])]
    weights = [str(w) for w in _list(grid, "weights", ["uniform"])]
    racks = [int(r) for r in _list(grid, "racks", [0])]
    statics = [bool(s) for s in _list(grid, "static", [False])]
    seeds = [int(s) for s in _list(grid, "seeds", [0])]
    churn = grid.get("churn", DEFAULT_CHURN)
    if not isinstance(churn, Mapping) or not churn:
        raise GridError("'churn' maps a name to a list of events")
    replication = int(grid.get("replication", 3))
    for s in subscriptions:
        if s not in SUBSCRIPTIONS:
            raise GridError(f"unknown subscription pattern {s!r}; use one of {SUBSCRIPTIONS}")
    if any(n < 1 for n in consumers):
        raise GridError("'consumers' must be at least 1")
    out = []
    for cluster, n, sub, w, r, static, seed, (churn_name, events) in itertools.product(
        clusters, consumers, subscriptions, weights, racks, statics, seeds, churn.items()
    ):
        if cluster.weights is not None and w != weights[0]:
            continue  # a measured cluster has one set of weights
        out.append(
            build_scenario(
                cluster,
                n,
                sub,
                w,
                r,
                static,
                seed,
                str(churn_name),
                [str(e) for e in events],
                replication,
            )
        )
    return out


def build_scenario(
    cluster: Cluster,
    consumers: int,
    subscription: str,
    weights: str,
    racks: int,
    static: bool,
    seed: int,
    churn_name: str,
    churn: Sequence[str],
    replication: int = 3,
) -> Scenario:
    """One point of the grid."""
    topic_names = sorted(cluster.topics)
    rack_names = tuple(f"rack-{i}" for i in range(racks))

    def member(i: int) -> SimMember:
        return SimMember(
            member_id=f"consumer-{i:04d}",
            topics=subscribe(subscription, i, topic_names),
            rack=rack_names[i % racks] if racks else None,
            instance_id=f"instance-{i:04d}" if static else None,
        )

    members = tuple(member(i) for i in range(consumers))
    measured = cluster.weights is not None
    tags = {
        "cluster": cluster.name,
        "consumers": str(consumers),
        "subscription": subscription,
        "weights": "measured" if measured else weights,
        "racks": str(racks),
        "static": str(static).lower(),
        "churn": churn_name,
        "seed": str(seed),
    }
    try:
        events = expand_events(churn, members, cluster.topics, member, seed=seed)
    except ValueError as exc:
        raise GridError(f"churn {churn_name!r}: {exc}") from exc
    return Scenario(
        name="/".join(f"{k}={v}" for k, v in tags.items()),
        topics=dict(cluster.topics),
        members=members,
        events=events,
        weights=cluster.weights if measured else make_weights(weights, cluster.topics, seed),
        racks=rack_names,
        replication=replication,
        tags=tags,
    )


def subscribe(pattern: str, index: int, topics: Sequence[str]) -> tuple[str, ...]:
    """The topics member ``index`` subscribes to under a subscription pattern.

    ``all``: every topic.  ``unequal``: member i takes the first (i mod T) + 1
    topics (the source's unequal example).  ``halves``: even members take every
    topic, odd members the first half.
    """
    if pattern == "all" or len(topics) == 1:
        return tuple(topics)
    if pattern == "unequal":
        return tuple(topics[: index % len(topics) + 1])
    if pattern == "halves":
        return tuple(topics) if index % 2 == 0 else tuple(topics[: max(1, len(topics) // 2)])
    raise GridError(f"unknown subscription pattern {pattern!r}")


def make_weights(
    spec: str, topics: Mapping[str, int], seed: int
) -> dict[TopicPartition, float] | None:
    """Partition weights with mean 1 from a distribution spec, or None for uniform."""
    kind, _, arg = spec.partition(":")
    if kind == "uniform":
        return None
    defaults = {"zipf": 1.0, "hot": 0.2, "lognormal": 1.0}
    try:
        x = float(arg) if arg and kind in defaults else defaults[kind]
    except (KeyError, ValueError):
        raise GridError(f"unknown weights {spec!r}; use one of {WEIGHT_KINDS}") from None
    tps = [TopicPartition(t, p) for t in sorted(topics) for p in range(topics[t])]
    rng = random.Random(f"{seed}:{spec}")
    if kind == "zipf":
        raw = [1.0 / (r + 1) ** x for r in range(len(tps))]
        rng.shuffle(raw)
    elif kind == "hot":
        if not 0 < x < 1:
            raise GridError(f"{spec!r}: the hot share must be between 0 and 1")
        raw = [(1 - x) / max(1, len(tps) - 1)] * len(tps)
        raw[rng.randrange(len(tps))] = x
    else:
        raw = [rng.lognormvariate(0.0, x) for _ in tps]
    mean = sum(raw) / len(raw) if raw else 1.0
    return {tp: w / mean for tp, w in zip(tps, raw, strict=True)}


def _cluster(spec: Any, index: int) -> Cluster:
    if not isinstance(spec, Mapping):
        raise GridError(f"cluster {index}: a mapping with topics, topic_count or profile")
    name = str(spec.get("name", f"cluster-{index}"))
    if "profile" in spec:
        profile = read_profile(spec["profile"])
        counts: dict[str, int] = {}
        for p in profile.partitions:
            counts[p.topic] = max(counts.get(p.topic, 0), p.partition + 1)
        return Cluster(name, counts, profile.weights())
    if "topics" in spec:
        topics = spec["topics"]
        if not isinstance(topics, Mapping) or not topics:
            raise GridError(f"cluster {name}: 'topics' maps topic names to partition counts")
        return Cluster(name, {str(t): int(n) for t, n in topics.items()})
    if "topic_count" in spec:
        k, n = int(spec["topic_count"]), int(spec.get("partitions", 1))
        width = len(str(k - 1))
        return Cluster(name, {f"{spec.get('prefix', 't')}{i:0{width}d}": n for i in range(k)})
    raise GridError(f"cluster {name}: give 'topics', 'topic_count' or 'profile'")


def _list(grid: Mapping[str, Any], key: str, default: list[Any] | None) -> list[Any]:
    value = grid.get(key, default)
    if value is None:
        raise GridError(f"the grid needs '{key}'")
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not items:
        raise GridError(f"'{key}' is empty")
    return items
