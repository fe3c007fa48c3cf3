"""Naming members in a log line without letting a huge group flood the log."""

from __future__ import annotations

from collections.abc import Sequence

#: How many member ids a warning spells out; the rest are counted.
SHOWN = 5


def some_ids(ids: Sequence[str], shown: int = SHOWN) -> str:
    """``"a, b, c"`` or, for a long list, ``"a, b, c, d, e and 9,995 more"``."""
    head = ", ".join(ids[:shown])
    rest = len(ids) - shown
    return f"{head} and {rest:,} more" if rest > 0 else head
