"""Which client binding records the metrics of which consumer.

The metrics layer names no client: each binding registers, on import of its own package, the
consumer class it serves and what it offers (:class:`Binding`). A consumer is served by the
binding registered for the nearest class in its MRO, so a subclass of a client's consumer
(ours included) is served by that client's binding.

A binding package is imported with ``kafka_assignors`` (kafka-python's) or carries its
client's import name (``kafka_assignors.<client package>``): a consumer of a client whose
binding was not imported yet has it imported on first use, so ``instrument(consumer)`` works
without importing the binding first.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import GroupMetrics

_ROOT = __name__.split(".")[0]


@dataclass(frozen=True)
class Binding:
    """What a client binding offers the metrics layer."""

    #: the consumer it takes, for messages ("a kafka-python KafkaConsumer")
    description: str
    #: ``kafka_assignors.metrics.instrument`` for this client's consumers
    instrument: Callable[[Any], GroupMetrics | None]
    #: the metrics a consumer of this client carries or is given on first ask (the
    #: exporters' lookup); None if only ``instrument`` attaches them
    find: Callable[[Any], GroupMetrics | None] | None = None


_lock = threading.Lock()
_bindings: dict[type, Binding] = {}


def register(client_type: type, binding: Binding) -> None:
    """Serve consumers of ``client_type`` (and its subclasses) with ``binding``."""
    with _lock:
        _bindings[client_type] = binding


def binding_for(consumer: object) -> Binding | None:
    """The binding serving ``consumer`` (importing its client's binding package if needed)."""
    found = _lookup(type(consumer))
    if found is None and _import_bindings(type(consumer)):
        found = _lookup(type(consumer))
    return found


def described() -> str:
    """The consumers the registered bindings take, for an error message."""
    with _lock:
        names = sorted({b.description for b in _bindings.values()})
    return " or ".join(names) if names else "a consumer of a supported client"


def _lookup(cls: type) -> Binding | None:
    with _lock:
        for klass in cls.__mro__:
            found = _bindings.get(klass)
            if found is not None:
                return found
    return None


def _import_bindings(cls: type) -> bool:
    """Import ``kafka_assignors.<package>`` for the top-level package of each class in
    ``cls``'s MRO that has one; True if one was imported."""
    imported = False
    for package in dict.fromkeys(k.__module__.partition(".")[0] for k in cls.__mro__):
        if package in (_ROOT, "builtins"):
            continue
        name = f"{_ROOT}.{package}"
        try:
            if importlib.util.find_spec(name) is None:
                continue
            importlib.import_module(name)
        except ImportError:  # the binding's optional dependencies are missing
            continue
        imported = True
    return imported
