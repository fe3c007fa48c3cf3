"""Reading a value from the client library's calling frame.

Neither kafka-python nor aiokafka passes an assignor everything the protocol
knows (the consumer's rebalance protocol, the generation, the raw member
metadata), but their coordinators hold it in the frame that calls us.  This is
the one place that looks; every caller has a fallback when nothing is found.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

_MISSING = object()


def caller_value(read: Callable[[dict[str, Any]], Any], depth: int = 8) -> Any:
    """The first non-None ``read(frame.f_locals)`` among the callers, or None."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return None
        try:
            value = read(frame.f_locals)
        except Exception:  # a frame of another shape: keep looking
            value = None
        if value is not None:
            return value
        frame = frame.f_back
    return None


def calling_coordinator(assignor: object) -> object | None:
    """The group coordinator (one per consumer) whose call reached ``assignor``, or None.

    kafka-python and aiokafka use an assignor instance passed in
    ``partition_assignment_strategy`` as is, so one instance may serve several
    consumers; their coordinators tell them apart.  A coordinator is recognised
    by an ``_assignors`` collection (kafka-python 2.x: ``config["assignors"]``) holding
    ``assignor`` (or a wrapper of it);
    aiokafka's per-rebalance helper leads to it through ``_coordinator``.
    """

    def read(f: dict[str, Any]) -> object | None:
        owner: object = f.get("self")
        if owner is None or owner is assignor:
            return None
        inner: object = getattr(owner, "_coordinator", None)
        if inner is not None and _holds(inner, assignor):
            return inner
        return owner if _holds(owner, assignor) else None

    found: object | None = caller_value(read, depth=10)
    return found


def _holds(coordinator: object, assignor: object) -> bool:
    held = getattr(coordinator, "_assignors", None)
    if held is None:  # kafka-python 2.x keeps them, as given, in its config
        config = getattr(coordinator, "config", None)
        held = config.get("assignors") if isinstance(config, Mapping) else None
    if held is None:
        return False
    items = held.values() if isinstance(held, Mapping) else held
    # (kafka-python 2.x keeps a class as given; its default instance is the one called)
    return any(a is assignor or a is type(assignor) or getattr(a, "_inner", None) is assignor
               for a in items)
