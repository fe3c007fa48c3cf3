"""Turn assignment-strategy names into what kafka-python's ``partition_assignment_strategy`` takes.

A strategy is given as a string so it can cross a process boundary:

* a kafka-python wire name: ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``;
* an import path ``module:Attr`` (e.g. ``kafka_assignors:BalancedStickyAssignor``) naming
  an assignor class (kafka-python instantiates it) or a ready assignor instance.
"""

from __future__ import annotations

import importlib
from typing import Any

BUILTIN = {
    "range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
    "cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky",
        "CooperativeStickyAssignor",
    ),
}


class StrategyError(ValueError):
    """A strategy name that cannot be resolved."""


def resolve_strategy(spec: str) -> Any:
    """The assignor class (or instance) named by ``spec``."""
    spec = spec.strip()
    if spec in BUILTIN:
        module_name, attr = BUILTIN[spec]
    elif ":" in spec:
        module_name, _, attr = spec.partition(":")
    else:
        raise StrategyError(
            f"unknown assignment strategy {spec!r}: use one of {sorted(BUILTIN)} "
            "or an import path 'module:Attr'"
        )
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise StrategyError(f"strategy {spec!r}: cannot import {module_name}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise StrategyError(f"strategy {spec!r}: {module_name} has no {attr}") from exc
    if not hasattr(obj, "name"):
        raise StrategyError(f"strategy {spec!r} resolved to {obj!r}, which has no wire 'name'")
    return obj


def resolve_strategies(specs: list[str] | tuple[str, ...]) -> list[Any]:
    """Resolve a preference-ordered list of strategies (first = most preferred)."""
    if not specs:
        raise StrategyError("at least one assignment strategy is needed")
    return [resolve_strategy(s) for s in specs]


def wire_name(spec: str) -> str:
    """The protocol name the broker will see for ``spec``."""
    return str(resolve_strategy(spec).name)
