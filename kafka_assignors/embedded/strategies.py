"""Turn assignment-strategy names into what kafka-python's ``partition_assignment_strategy`` takes.

A strategy is given as a string so it can cross a process boundary: a wire name
(kafka-python's ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``, or
any of ours such as ``balanced-sticky``) or an import path ``module:Attr`` naming
an assignor class or instance.  The names are resolved by the one registry the
simulator and the CLI use too.
"""

from __future__ import annotations

from typing import Any

from ..simulator.registry import UnknownAssignorError, resolve_assignor
from ..simulator.registry import wire_name as _wire_name

#: Raised for a strategy name that cannot be resolved.
StrategyError = UnknownAssignorError


def resolve_strategy(spec: str) -> Any:
    """The assignor class (or instance) named by ``spec``."""
    return resolve_assignor(spec)


def resolve_strategies(specs: list[str] | tuple[str, ...]) -> list[Any]:
    """Resolve a preference-ordered list of strategies (first = most preferred)."""
    if not specs:
        raise StrategyError("at least one assignment strategy is needed")
    return [resolve_strategy(s) for s in specs]


def wire_name(spec: str) -> str:
    """The protocol name the broker will see for ``spec``."""
    return _wire_name(spec)
