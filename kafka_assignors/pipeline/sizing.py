"""How many partitions a topic needs and how many consumers are worth running.

From the source documents (see SEEDS.md): with Tp the throughput one
partition takes from producers, Tc the throughput one consumer gets from one
partition, and Tt the target, a topic needs at least ``max(Tt/Tp, Tt/Tc)``
partitions (the source's ``Tt / max(Tp, Tc)`` undercounts).  Consumers beyond
the partition count sit idle.  A key always lands on one partition, so a key
hotter than Tc overloads its consumer whatever the partition count.

Every input carries its :class:`Origin` (measured, given or assumed, and from
where), so that the terminal and the report can say where each number came from.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..load.profile import LoadProfile, PartitionLoad

#: The Java producer's default batch.size: one batch buffer per partition it writes to.
PRODUCER_BATCH_BYTES = 16 * 1024
MEASURED, GIVEN, ASSUMED = "measured", "given", "assumed"


class SizingError(ValueError):
    """Sizing inputs that make no sense, with the reason."""


@dataclass(frozen=True, slots=True)
class Origin:
    """How an input is known (``measured``, ``given`` or ``assumed``) and one sentence on
    where it came from; for an assumed input, how to measure it."""

    kind: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SizingInput:
    """One number the rule uses (or, with ``used`` False, one shown beside it)."""

    name: str
    value: float
    unit: str
    kind: str
    detail: str
    used: bool = True


@dataclass(frozen=True, slots=True)
class HotKey:
    topic: str
    partition: int
    key: str
    rate: float
    share: float


@dataclass(frozen=True, slots=True)
class TopicSizing:
    """The same rule for one topic's own traffic."""

    topic: str
    partitions_now: int
    target: float
    partitions_needed: int
    partitions_recommended: int
    consumers_worth_running: int


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
    #: Every input with its origin, in the order a reader needs them.
    inputs: list[SizingInput] = field(default_factory=list)
    #: With a multi-topic profile: the rule applied to each topic's own traffic.
    per_topic: list[TopicSizing] = field(default_factory=list)
    batch_bytes: int = PRODUCER_BATCH_BYTES
    #: The topic's partition count now, when one topic was sized.
    current_partitions: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sizing:
        """The inverse of :meth:`to_json` (older files without inputs load too)."""
        fields = dict(data)
        fields["hot_keys"] = [HotKey(**h) for h in data.get("hot_keys", [])]
        fields["inputs"] = [SizingInput(**i) for i in data.get("inputs", [])]
        fields["per_topic"] = [TopicSizing(**t) for t in data.get("per_topic", [])]
        return cls(**fields)


def _needed(target: float, tp: float, tc: float, headroom: float) -> tuple[int, int, int]:
    """(partitions needed, recommended, consumers worth running)."""
    needed = max(1, math.ceil(max(target / tp, target / tc) - 1e-9))
    recommended = max(needed, math.ceil(needed * headroom - 1e-9))
    consumers = min(recommended, max(1, math.ceil(target / tc - 1e-9)))
    return needed, recommended, consumers


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
    origins: Mapping[str, Origin] | None = None,
    extra_inputs: Iterable[SizingInput] = (),
    per_topic: Iterable[TopicSizing] = (),
) -> Sizing:
    """Size a topic for ``target`` throughput; all rates in the same ``unit``.

    ``origins`` says how each input is known, by name: ``target``, ``producer``,
    ``consumer``, ``headroom``, ``growth`` (default: given).
    """
    for name, value in (
        ("target", target),
        ("producer throughput", producer_per_partition),
        ("consumer throughput", consumer_per_partition),
    ):
        if not math.isfinite(value) or value <= 0:
            raise SizingError(f"{name} must be a positive number (got {value})")
    if headroom < 1:
        raise SizingError(f"headroom is a factor of at least 1 (got {headroom})")
    needed, recommended, consumers = _needed(
        target, producer_per_partition, consumer_per_partition, headroom
    )
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
    o = dict(origins or {})
    given = Origin(GIVEN)
    inputs = [
        _input("target throughput (Tt)", target, unit, o.get("target", Origin(GIVEN, source))),
        _input("producer throughput per partition (Tp)", producer_per_partition, unit,
               o.get("producer", given)),
        _input("consumer throughput per partition (Tc)", consumer_per_partition, unit,
               o.get("consumer", given)),
        *extra_inputs,
        _input("headroom", headroom, "x", o.get("headroom", given)),
        _input("producer batch size", PRODUCER_BATCH_BYTES / 1024, "KiB", Origin(
            ASSUMED, "the Java producer's default batch.size: read your producers' batch.size "
            "setting and scale the buffer memory by it")),
    ]
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
        inputs=inputs,
        per_topic=list(per_topic),
        current_partitions=current_partitions,
    )


def _input(name: str, value: float, unit: str, origin: Origin) -> SizingInput:
    return SizingInput(name, float(value), unit, origin.kind, origin.detail)


def size_from_profile(
    profile: LoadProfile,
    producer_per_partition: float,
    consumer_per_partition: float,
    *,
    metric: str = "bytes_per_s",
    growth: float = 1.0,
    headroom: float = 1.5,
    target: float | None = None,
    origins: Mapping[str, Origin] | None = None,
    extra_inputs: Iterable[SizingInput] = (),
) -> Sizing:
    """Size from a measured profile: the target is the measured total x ``growth``.

    Hot keys are each partition's hottest key, at its measured rate x ``growth``.  With
    several topics, each topic is also sized on its own traffic (``per_topic``).
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
    topics = sorted({p.topic for p in parts})
    current = len(parts) if len(topics) == 1 else None
    window = profile.meta.get("window", {})
    seconds = window.get("seconds") if isinstance(window, Mapping) else None
    over = f" over {seconds:,.0f} s" if isinstance(seconds, int | float) and seconds else ""
    source = "given" if target is not None else f"measured {human(measured, unit)} x {growth:g}"
    o = {
        "target": Origin(GIVEN, "--target")
        if target is not None
        else Origin(
            MEASURED,
            f"the profile: {len(parts)} partitions of {', '.join(topics)} carried "
            f"{human(measured, unit)}{over}, times growth {growth:g}",
        ),
        **dict(origins or {}),
    }
    rows = []
    if len(topics) > 1 and target is None:
        tp_, tc_ = producer_per_partition, consumer_per_partition
        for t in topics:
            mine = [p for p in parts if p.topic == t]
            t_target = sum(_rate(p, metric) for p in mine) * growth
            if t_target > 0 and tp_ > 0 and tc_ > 0:
                n, r, c = _needed(t_target, tp_, tc_, max(headroom, 1.0))
                rows.append(TopicSizing(t, len(mine), t_target, n, r, c))
    extra = [*extra_inputs]
    if target is None:
        extra.append(_input("growth", growth, "x", o.get("growth", Origin(GIVEN))))
    return size(
        target if target is not None else measured * growth,
        producer_per_partition,
        consumer_per_partition,
        unit=unit,
        headroom=headroom,
        current_partitions=current,
        hot_keys=hot,
        source=source,
        origins=o,
        extra_inputs=extra,
        per_topic=rows,
    )


def _rate(p: PartitionLoad, metric: str) -> float:
    value = p.measured.get(metric, p.weight if metric == "weight" else None)
    if not isinstance(value, int | float):
        raise SizingError(f"{p.topic}:{p.partition} has no measured {metric!r}")
    return float(value)


def num(value: float, digits: int = 3, *, sep: bool = True) -> str:
    """``digits`` significant figures with thousands separators, no trailing zeros:
    25312.7 -> '25,300', 0.8231 -> '0.823', 117.0 -> '117', 16.0 -> '16'.  ``sep=False``
    leaves the separators out (inside a formula, where commas separate arguments)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    places = digits - 1 - math.floor(math.log10(abs(value)))
    text = f"{round(value, places):{',' if sep else ''}.{max(places, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def human_parts(value: float, unit: str) -> tuple[str, str]:
    """(number, unit) for people: 1500000, 'bytes/s' -> ('1.5', 'MB/s') with decimal
    prefixes; other units keep plain numbers rounded to 3 significant figures."""
    if unit.startswith("bytes"):
        suffix = "B/s" if unit.endswith("/s") else "B"
        for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if abs(value) >= scale:
                return num(value / scale), f"{prefix}{suffix}"
        return num(value), suffix
    if unit == "x":
        return f"{value:g}", "x"
    return num(value), unit


def human(value: float, unit: str) -> str:
    """1500000, 'bytes/s' -> '1.5 MB/s'; 1.5, 'x' -> '1.5x'; 117.3, 'messages/s' ->
    '117 messages/s'."""
    number, shown = human_parts(value, unit)
    return f"{number}x" if shown == "x" else f"{number} {shown}"


def memory(mib: float) -> str:
    """Binary units, as the source counts producer buffers: 0.03125 -> '32 KiB'."""
    return f"{num(mib)} MiB" if mib >= 1 else f"{num(mib * 1024)} KiB"


def rule_lines(s: Sizing) -> list[str]:
    """The rule with the numbers put in, one line per figure of the answer."""
    tt, tp, tc = s.target, s.producer_per_partition, s.consumer_per_partition

    def n(value: float) -> str:  # no thousands commas among a function's arguments
        return num(value, sep=False)

    return [
        f"partitions needed = ceil(max(Tt/Tp, Tt/Tc)) = ceil(max({n(tt)} / {n(tp)}, "
        f"{n(tt)} / {n(tc)})) = ceil(max({n(tt / tp)}, {n(tt / tc)})) "
        f"= {s.partitions_needed}",
        f"partitions recommended = ceil(needed x headroom) = ceil({s.partitions_needed} x "
        f"{s.headroom:g}) = {s.partitions_recommended}",
        f"consumers worth running = min(partitions, ceil(Tt/Tc)) = "
        f"min({s.partitions_recommended}, ceil({n(tt / tc)})) = {s.consumers_worth_running}",
        f"producer buffer memory = partitions x batch.size = {s.partitions_recommended} x "
        f"{s.batch_bytes // 1024} KiB = {memory(s.producer_buffer_mib)}",
    ]


def describe(s: Sizing) -> str:
    """A few plain lines for the terminal: inputs with their origin, the rule, warnings."""
    lines = [
        f"{i.name}: {human(i.value, i.unit)} ({i.kind}{': ' + i.detail if i.detail else ''})"
        for i in s.inputs
        if i.used
    ]
    lines += [f"Partitions needed: {s.partitions_needed}; with {s.headroom:g}x headroom: "
              f"{s.partitions_recommended}. Consumers worth running: "
              f"{s.consumers_worth_running}."]
    lines += rule_lines(s)
    lines += [f"Warning: {w}" for w in s.warnings]
    return "\n".join(lines)
