"""Members' usable subscriptions, worked out once per distinct subscription."""

from __future__ import annotations

from collections.abc import Sequence

from .balanced_sticky import usable_topics
from .model import GroupSpec, MemberSpec


def usable_subscriptions(group: GroupSpec, members: Sequence[MemberSpec]) -> list[frozenset[str]]:
    """Each member's topics that exist with partitions (members mostly share a few
    subscriptions, so each distinct one is checked once)."""
    seen: dict[frozenset[str], frozenset[str]] = {}
    out = []
    for m in members:
        u = seen.get(m.topics)
        if u is None:
            u = seen[m.topics] = usable_topics(group, m)
        out.append(u)
    return out
