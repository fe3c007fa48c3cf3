"""How many partitions a topic needs and how many consumers are worth running.

From the source documents (see SEEDS.md): with Tp the throughput one
partition takes from producers, Tc the throughput one consumer gets from one
partition, and Tt the target, a topic needs at least ``max(Tt/Tp, Tt/Tc)``
partitions (the source's ``Tt / max(Tp, Tc)`` undercounts).  Consumers beyond
the partition count sit idle.  A key always lands on one partition, so a key
hotter than Tc overloads its consumer whatever the partition count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..load.profile import LoadProfile, PartitionLoad

#: The Java producer's default batch.size: one batch buffer per partition it writes to.
PRODUCER_BATCH_BYTES = 16 * 1024


class SizingError(ValueError):
    """Sizing inputs that make no sense, with the reason."""


@dataclass(frozen=True, slots=True)
class HotKey:
    topic: str
    partition: int
    key: str
    rate: float
    share: float


@dataclass(frozen=True, slots=True)
class Sizing:
    """The answer, in the unit the throughputs were given in (``unit``)."""

    target: float
    producer_per_partition: float
    consumer_per_partition: float
    unit: str
    headroom: float
    #: ceil(max(Tt/Tp, Tt/Tc)): the least that carries the target.
    partitions_needed: int
    #: partitions_needed with headroom for growth (adding partitions later remaps keys).
    partitions_recommended: int
    #: ceil(Tt/Tc), at most the partition count: more consumers would sit idle.
    consumers_worth_running: int
    #: Memory one producer writing every partition holds in batch buffers.
    producer_buffer_mib: float
    warnings: list[str] = field(default_factory=list)
    hot_keys: list[HotKey] = field(default_factory=list)
    #: Where the target came from ("given" or "measured x growth").
    source: str = "given"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def size(
    target: float,
    producer_per_partition: float,
    consumer_per_partition: float,
    *,
    unit: str = "bytes/s",
    headroom: float = 1.5,
    current_partitions: int | None = None,
    hot_keys: Iterable[HotKey] = (),
    source: str = "given",
) -> Sizing:
    """Size a topic for ``target`` throughput; all rates in the same ``unit``."""
    for name, value in (
        ("target", target),
        ("producer throughput", producer_per_partition),
        ("consumer throughput", consumer_per_partition),
    ):
        if not math.isfinite(value) or value <= 0:
            raise SizingError(f"{name} must be a positive number (got {value})")
    if headroom < 1:
        raise SizingError(f"headroom is a factor of at least 1 (got {headroom})")
    needed = max(
        1, math.ceil(max(target / producer_per_partition, target / consumer_per_partition) - 1e-9)
    )
    recommended = max(needed, math.ceil(needed * headroom - 1e-9))
    consumers = min(recommended, max(1, math.ceil(target / consumer_per_partition - 1e-9)))
    warnings = []
    hot = sorted(hot_keys, key=lambda h: -h.rate)
    for h in hot:
        if h.rate > consumer_per_partition:
            warnings.append(
                f"key {h.key!r} on {h.topic}:{h.partition} carries {human(h.rate, unit)}, more "
                f"than one consumer takes ({human(consumer_per_partition, unit)}); no partition "
                "count fixes this: split the key (e.g. add a suffix) or speed up its processing"
            )
    if current_partitions is not None and current_partitions < needed:
        warnings.append(
            f"the topic has {current_partitions} partitions; {needed} are needed for the target"
        )
    return Sizing(
        target=target,
        producer_per_partition=producer_per_partition,
        consumer_per_partition=consumer_per_partition,
        unit=unit,
        headroom=headroom,
        partitions_needed=needed,
        partitions_recommended=recommended,
        consumers_worth_running=consumers,
        producer_buffer_mib=recommended * PRODUCER_BATCH_BYTES / 2**20,
        warnings=warnings,
        hot_keys=hot,
        source=source,
    )


def size_from_profile(
    profile: LoadProfile,
    producer_per_partition: float,
    consumer_per_partition: float,
    *,
    metric: str = "bytes_per_s",
    growth: float = 1.0,
    headroom: float = 1.5,
    target: float | None = None,
) -> Sizing:
    """Size from a measured profile: the target is the measured total x ``growth``.

    Hot keys are each partition's hottest key, at its measured rate x ``growth``.
    """
    parts = profile.partitions
    if not parts:
        raise SizingError("the profile has no partitions")
    measured = sum(_rate(p, metric) for p in parts)
    unit = "bytes/s" if metric.startswith("bytes") else "messages/s"
    hot = []
    for p in parts:
        share = p.measured.get("hot_key_share")
        key = p.measured.get("hot_key")
        if isinstance(share, int | float) and share > 0 and key is not None:
            hot.append(
                HotKey(
                    p.topic, p.partition, str(key), _rate(p, metric) * share * growth, float(share)
                )
            )
    topics = {p.topic for p in parts}
    current = len(parts) if len(topics) == 1 else None
    return size(
        target if target is not None else measured * growth,
        producer_per_partition,
        consumer_per_partition,
        unit=unit,
        headroom=headroom,
        current_partitions=current,
        hot_keys=hot,
        source="given" if target is not None else f"measured {human(measured, unit)} x {growth:g}",
    )


def _rate(p: PartitionLoad, metric: str) -> float:
    value = p.measured.get(metric, p.weight if metric == "weight" else None)
    if not isinstance(value, int | float):
        raise SizingError(f"{p.topic}:{p.partition} has no measured {metric!r}")
    return float(value)


def human(value: float, unit: str) -> str:
    """1500000, 'bytes/s' -> '1.5 MB/s' (decimal prefixes); other units keep plain numbers."""
    if unit.startswith("bytes"):
        for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if abs(value) >= scale:
                return f"{value / scale:,.3g} {prefix}B/s"
        return f"{value:,.3g} B/s"
    return f"{value:,.4g} {unit}"


def describe(s: Sizing) -> str:
    """A few plain sentences for the terminal and the report."""
    lines = [
        f"Target {human(s.target, s.unit)} ({s.source}); one partition takes "
        f"{human(s.producer_per_partition, s.unit)} from producers and gives "
        f"{human(s.consumer_per_partition, s.unit)} to a consumer.",
        f"Partitions needed: {s.partitions_needed} (max of target/producer and "
        f"target/consumer); with {s.headroom:g}x headroom: {s.partitions_recommended}.",
        f"Consumers worth running: {s.consumers_worth_running} (more than "
        f"{s.partitions_recommended} would sit idle).",
        f"A producer writing every partition holds about {s.producer_buffer_mib:,.1f} MiB "
        "in batch buffers.",
    ]
    lines += [f"Warning: {w}" for w in s.warnings]
    return "\n".join(lines)
