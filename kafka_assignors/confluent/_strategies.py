"""``partition.assignment.strategy`` for the bridge: wire names or assignor objects.

The value can be a comma-separated string (as in confluent-kafka), or a list of
wire names, import paths (``module:Class``), assignor classes and assignor
instances, most preferred first.  Names resolve through the project's one
registry (:mod:`kafka_assignors.simulator.registry`): every assignor we export
and kafka-python's own (``range``, ``roundrobin``, ``sticky``,
``cooperative-sticky``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol

from ..kafka_python.assignor import KafkaPythonAssignor
from ..simulator.registry import UnknownAssignorError, new_instance, resolve_assignor
from ._errors import UnsupportedConfigError


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
    out = [_one(item, client_rack) for item in items]
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise UnsupportedConfigError(f"partition.assignment.strategy lists a name twice: {names}")
    return out


def _one(item: Any, rack: str | None) -> Any:
    if isinstance(item, str):
        try:
            item = resolve_assignor(item)
        except UnknownAssignorError as exc:
            raise UnsupportedConfigError(f"partition.assignment.strategy: {exc}") from None
    if inspect.isclass(item) and issubclass(item, AbstractPartitionAssignor):
        return new_instance(item, rack)  # with client_rack when the class takes it
    if isinstance(item, AbstractPartitionAssignor):
        return item  # as given: its last_report stays readable
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
