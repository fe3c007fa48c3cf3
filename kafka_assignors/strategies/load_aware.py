"""``load-aware`` and ``cooperative-load-aware``."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..core.load_aware import DEFAULT_TOLERANCE, load_aware
from ..core.model import Assignment, GroupSpec, TopicPartition, TopicSpec
from ..load.live_lag import LiveLag
from ..load.sources import WeightContext, WeightSource, as_weight_source
from .base import Strategy

log = logging.getLogger("kafka_assignors")


class LoadAware(Strategy):
    """Balances the total weight (lag, bytes/s ...) per member, not the partition count.

    Use it when partitions carry very different load (hot keys, skewed
    producers) and counting partitions leaves some consumers far behind.
    Weights come from ``weights=``: a mapping ``{TopicPartition: float}``, a
    function of the partitions, a load profile path (or
    :class:`~kafka_assignors.load.sources.ProfileFile`), a profile published to
    a compacted topic (:class:`~kafka_assignors.load.profile_topic.ProfileTopic`),
    or by default
    :class:`~kafka_assignors.load.live_lag.LiveLag` - the group's lag, read
    by the leader at each rebalance with the consumer's own connection
    settings.  Sticky: partitions stay put while loads are within
    ``tolerance`` (a fraction of the mean member load) of the best found;
    zero-weight partitions are spread by count.  If the weight source fails
    the leader logs a warning and assigns as ``balanced-sticky`` does.

    Wire name ``load-aware``; eager.  Every member of a group should use the
    same weight source (only the leader's is used).
    """

    name: ClassVar[str] = "load-aware"

    def __init__(
        self,
        weights: Mapping[Any, float] | WeightSource | Any = None,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        client_rack: str | None = None,
    ) -> None:
        super().__init__(client_rack=client_rack)
        if not (isinstance(tolerance, int | float) and 0 <= tolerance < math.inf):
            raise ValueError("tolerance must be a number >= 0 (a fraction of the mean load)")
        self.tolerance = float(tolerance)
        self.weight_source: WeightSource = LiveLag() if weights is None else as_weight_source(
            weights)

    def assign_group(self, group: GroupSpec) -> Assignment:
        return load_aware(group, self.tolerance)

    def partition_weights(
        self, topics: Mapping[str, TopicSpec], context: WeightContext
    ) -> Mapping[TopicPartition, float] | None:
        """The weight source's answer, cleaned; None (count-based) if it fails."""
        partitions = [TopicPartition(t, p) for t, spec in sorted(topics.items())
                      for p in range(spec.partitions)]
        if not partitions:
            return None
        source = self.weight_source.description
        try:
            raw = self.weight_source.weights(partitions, context)
            wanted = set(partitions)
            weights: dict[TopicPartition, float] = {}
            bad = 0
            for key, value in raw.items():
                tp = TopicPartition(*key)
                if tp not in wanted:
                    continue
                if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
                    weights[tp] = float(value)
                else:
                    bad += 1
        except Exception as exc:
            log.warning(
                "%s: weight source %s failed (%s: %s); assigning by partition count "
                "(balanced-sticky) this round", self.name, source, type(exc).__name__, exc,
            )
            return None
        if bad:
            log.warning("%s: %s gave %d weight(s) that are not finite numbers >= 0; those "
                        "partitions weigh the mean", self.name, source, bad)
        if not weights:
            log.warning("%s: %s gave no weight for any of the %d partitions; assigning by "
                        "partition count (balanced-sticky) this round", self.name, source,
                        len(partitions))
            return None
        log.info("%s: %d of %d partition weights from %s (total %.6g)", self.name,
                 len(weights), len(partitions), source, sum(weights.values()))
        return weights


class CooperativeLoadAware(LoadAware):
    """The load-aware assignment handed over in two cooperative rounds (KIP-429).

    Wire name ``cooperative-load-aware``; cooperative and eager.
    """

    name: ClassVar[str] = "cooperative-load-aware"
    cooperative: ClassVar[bool] = True
