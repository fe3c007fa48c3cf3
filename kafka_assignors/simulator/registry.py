"""Find an assignor by wire name or import path, and make one instance per simulated member.

Wire names cover kafka-python's built-ins and every assignor exported by
``kafka_assignors`` (new ones are found automatically).  Anything else is an
import path ``module:Class`` (or ``module:instance``, copied per member).
"""

from __future__ import annotations

import copy
import importlib
import inspect
from collections.abc import Callable, Collection
from typing import Any

import kafka_assignors

from ..kafka_python.assignor import KafkaPythonAssignor

KAFKA_PYTHON = {
    "range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
    "cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky",
        "CooperativeStickyAssignor",
    ),
}


class UnknownAssignorError(ValueError):
    """An assignor name or import path that does not resolve to an assignor."""


def _ours() -> dict[str, type[Any]]:
    found: dict[str, type[Any]] = {}
    for attr in getattr(kafka_assignors, "__all__", ()):
        obj = getattr(kafka_assignors, attr, None)
        if (
            inspect.isclass(obj)
            and issubclass(obj, KafkaPythonAssignor)
            and obj is not KafkaPythonAssignor
            and obj.name
        ):
            found[obj.name] = obj
    return found


def assignor_names() -> list[str]:
    """Every wire name :func:`resolve_assignor` knows: ours, then kafka-python's."""
    return sorted(_ours()) + sorted(KAFKA_PYTHON)


def resolve_assignor(spec: str | type[Any] | Any) -> Any:
    """The assignor class (or configured instance) for a wire name or ``module:attr``."""
    if not isinstance(spec, str):
        return spec
    spec = spec.strip()
    ours = _ours()
    if spec in ours:
        return ours[spec]
    if spec in KAFKA_PYTHON:
        module_name, attr = KAFKA_PYTHON[spec]
    elif ":" in spec:
        module_name, _, attr = spec.partition(":")
    else:
        raise UnknownAssignorError(
            f"unknown assignor {spec!r}: use a wire name ({', '.join(assignor_names())}) "
            "or an import path 'module:Class'"
        )
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise UnknownAssignorError(f"assignor {spec!r}: {exc}") from exc
    if not callable(getattr(obj, "assign", None)) or not getattr(obj, "name", None):
        raise UnknownAssignorError(f"{spec!r} is not an assignor (no `name` and `assign`)")
    return obj


def wire_name(spec: str | type[Any] | Any) -> str:
    return str(resolve_assignor(spec).name)


def new_instance(
    assignor: Any, rack: str | None, weights: Callable[[Collection[Any]], Any] | None = None
) -> Any:
    """One member's own assignor, as ``KafkaConsumer`` makes it from its configuration.

    A class is instantiated with ``client_rack`` and ``weights`` (the
    scenario's partition weights, as a function of the partitions) when its
    constructor takes them, so load-aware assignors see the simulated load.
    An instance is deep-copied so members never share state.
    """
    if not inspect.isclass(assignor):
        return copy.deepcopy(assignor)
    factory: Any = assignor
    try:
        params = set(inspect.signature(factory).parameters)
    except (TypeError, ValueError):
        params = set()
    kwargs: dict[str, Any] = {}
    if "client_rack" in params:
        kwargs["client_rack"] = rack
    if "weights" in params and weights is not None:
        kwargs["weights"] = weights
    return factory(**kwargs)
