"""``partition.assignment.strategy`` for the bridge: wire names or assignor objects.

The value can be a comma-separated string (as in confluent-kafka), or a list of
wire names, assignor classes and assignor instances, most preferred first.
Wire names cover every assignor in :mod:`kafka_assignors.assignors` and
kafka-python's own (``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol

from ..adapters.kafka_python import KafkaPythonAssignor
from ._errors import UnsupportedConfigError

_KAFKA_PYTHON_BUILTINS = {
    "range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
    "cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky",
        "CooperativeStickyAssignor",
    ),
}


def our_assignors() -> dict[str, type[KafkaPythonAssignor]]:
    """Wire name -> class of every assignor shipped in :mod:`kafka_assignors.assignors`.

    The package is scanned, so assignors added later are found without a list here.
    """
    package = importlib.import_module("kafka_assignors.assignors")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    found: dict[str, type[KafkaPythonAssignor]] = {}
    pending: list[type[KafkaPythonAssignor]] = [KafkaPythonAssignor]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.name and cls.__module__.startswith(package.__name__ + "."):
            found.setdefault(cls.name, cls)
    return found


def resolve_strategies(value: Any, *, client_rack: str | None = None) -> list[Any]:
    """Assignor instances for kafka-python's ``partition_assignment_strategy``."""
    items: Sequence[Any]
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        items = [value]
    if not items:
        raise UnsupportedConfigError("partition.assignment.strategy is empty")
    ours = our_assignors()
    out = [_one(item, ours, client_rack) for item in items]
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise UnsupportedConfigError(f"partition.assignment.strategy lists a name twice: {names}")
    return out


def _one(item: Any, ours: dict[str, type[KafkaPythonAssignor]], rack: str | None) -> Any:
    if isinstance(item, str):
        if item in ours:
            return ours[item](client_rack=rack)
        if item in _KAFKA_PYTHON_BUILTINS:
            module, attr = _KAFKA_PYTHON_BUILTINS[item]
            return getattr(importlib.import_module(module), attr)()
        known = sorted(set(ours) | set(_KAFKA_PYTHON_BUILTINS))
        raise UnsupportedConfigError(
            f"unknown partition.assignment.strategy {item!r}; known wire names: {known} "
            "(or pass an assignor instance)"
        )
    if isinstance(item, type) and issubclass(item, KafkaPythonAssignor):
        return item(client_rack=rack)
    if isinstance(item, type) and issubclass(item, AbstractPartitionAssignor):
        return item()
    if isinstance(item, AbstractPartitionAssignor):
        return item
    inner = getattr(item, "_inner", None)  # an aiokafka wrapper of one of ours
    if isinstance(inner, KafkaPythonAssignor):
        return inner
    raise UnsupportedConfigError(
        f"partition.assignment.strategy item {item!r} is neither a wire name nor a "
        "kafka-python assignor (class or instance)"
    )


def rebalance_protocol(assignors: Sequence[Any]) -> RebalanceProtocol:
    """The protocol kafka-python will run: the highest one every assignor supports."""
    common: set[RebalanceProtocol] | None = None
    for assignor in assignors:
        supported = set(assignor.supported_protocols())
        common = supported if common is None else common & supported
    if not common:
        names = [a.name for a in assignors]
        raise UnsupportedConfigError(
            f"assignors {names} share no rebalance protocol: do not mix eager-only and "
            "cooperative-only strategies"
        )
    return max(common)
