"""Reading a value from the client library's calling frame.

Neither kafka-python nor aiokafka passes an assignor everything the protocol
knows (the consumer's rebalance protocol, the generation, the raw member
metadata), but their coordinators hold it in the frame that calls us.  This is
the one place that looks; every caller has a fallback when nothing is found.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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
