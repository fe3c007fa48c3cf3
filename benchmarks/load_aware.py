"""Load balance of load-aware against kafka-python's range, roundrobin and sticky.

    python -m benchmarks.load_aware                 # the issue's case, 5 seeds
    python -m benchmarks.load_aware --seeds 20 --consumers 50

Weights follow Zipf(s=1.1): inside each topic the partition of rank r weighs
1 / r**1.1 (hot keys make a few hot partitions per topic), ranks shuffled over
the partition numbers.  The figure is heaviest member's load / mean load (1.00
is perfect); "bound" is the best any assignor can do, max(1, heaviest partition
/ mean).  A second table spreads one Zipf law over all partitions of all
topics: there the hottest partition alone outweighs several members' fair
share, so the bound itself is far above 1 and every assignor is judged
against it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from kafka_assignors import BalancedStickyAssignor, LoadAwareAssignor, TopicPartition

Weights = dict[TopicPartition, float]


class Cluster:
    """The part of kafka-python's ClusterMetadata an assignor reads."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.counts = dict(counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.counts.get(topic)
        return None if n is None else set(range(n))

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self.counts)


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    metadata: Any


def zipf_per_topic(topics: Sequence[str], partitions: int, rnd: random.Random) -> Weights:
    weights = {}
    for t in topics:
        ranks = list(range(1, partitions + 1))
        rnd.shuffle(ranks)
        for p, r in enumerate(ranks):
            weights[TopicPartition(t, p)] = 1 / r ** 1.1
    return weights


def zipf_global(topics: Sequence[str], partitions: int, rnd: random.Random) -> Weights:
    tps = [TopicPartition(t, p) for t in topics for p in range(partitions)]
    ranks = list(range(1, len(tps) + 1))
    rnd.shuffle(ranks)
    return {tp: 1 / r ** 1.1 for tp, r in zip(tps, ranks, strict=True)}


def run(assignor: Any, topics: Sequence[str], partitions: int, consumers: int
        ) -> tuple[dict[str, list[TopicPartition]], float]:
    """Assign a fresh group as the leader would; returns partitions per member and seconds."""
    members = []
    for i in range(consumers):
        raw = assignor.metadata(set(topics)).encode()
        members.append(Member(f"consumer-{i:03d}", None, ConsumerProtocolSubscription.decode(raw)))
    started = time.perf_counter()
    result = assignor.assign(Cluster(dict.fromkeys(topics, partitions)), members)
    seconds = time.perf_counter() - started
    out = {m: [TopicPartition(t, p) for t, ps in a.assigned_partitions for p in ps]
           for m, a in result.items()}
    return out, seconds


def figures(result: Mapping[str, list[TopicPartition]], weights: Weights) -> tuple[float, float,
                                                                                    int]:
    loads = [sum(weights[tp] for tp in tps) for tps in result.values()]
    counts = [len(tps) for tps in result.values()]
    mean = sum(loads) / len(loads)
    return max(loads) / mean, min(loads) / mean, max(counts) - min(counts)


def table(title: str, make_weights: Callable[[Sequence[str], int, random.Random], Weights],
          args: argparse.Namespace) -> dict[str, float]:
    topics = [f"topic-{i}" for i in range(args.topics)]
    rows: dict[str, list[tuple[float, float, int, float]]] = {}
    bounds = []
    for seed in range(args.seeds):
        weights = make_weights(topics, args.partitions, random.Random(seed))
        mean = sum(weights.values()) / args.consumers
        bounds.append(max(1.0, max(weights.values()) / mean))
        candidates: dict[str, Any] = {
            "range": RangePartitionAssignor(),
            "roundrobin": RoundRobinPartitionAssignor(),
            "sticky": StickyPartitionAssignor(),
            "balanced-sticky": BalancedStickyAssignor(),
            "load-aware": LoadAwareAssignor(weights=weights),
        }
        for name, assignor in candidates.items():
            result, seconds = run(assignor, topics, args.partitions, args.consumers)
            rows.setdefault(name, []).append((*figures(result, weights), seconds))
    print(f"\n{title}: {args.topics} topics x {args.partitions} partitions, "
          f"{args.consumers} consumers, {args.seeds} seeds (mean over seeds)")
    print(f"{'assignor':<16} {'heaviest/mean':>13} {'lightest/mean':>13} {'count spread':>12} "
          f"{'ms':>8}")
    out = {}
    for name, rs in rows.items():
        heavy = statistics.mean(r[0] for r in rs)
        out[name] = heavy
        print(f"{name:<16} {heavy:>13.3f} {statistics.mean(r[1] for r in rs):>13.3f} "
              f"{statistics.mean(r[2] for r in rs):>12.1f} "
              f"{1000 * statistics.mean(r[3] for r in rs):>8.1f}")
    print(f"{'bound':<16} {statistics.mean(bounds):>13.3f}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=100, help="per topic")
    parser.add_argument("--consumers", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    per_topic = table("Zipf(1.1) inside each topic", zipf_per_topic, args)
    table("One Zipf(1.1) over all partitions", zipf_global, args)
    goal = per_topic["load-aware"]
    print(f"\ngoal heaviest/mean <= 1.05 (per-topic Zipf): load-aware {goal:.3f} - "
          f"{'met' if goal <= 1.05 else 'NOT met'}")
    return 0 if goal <= 1.05 else 1


if __name__ == "__main__":
    raise SystemExit(main())
