"""The incremental cooperative protocol (KIP-429) on the model, for any strategy.

Round one gives every member its target assignment minus the partitions that
another member still holds; those holders see their assignment shrink, revoke
the partitions and rejoin.  In round two nobody holds them any more and the
same strategy hands them to their new owners.  No partition is ever held by
two members at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .model import Assignment


def withhold_moving(
    target: Mapping[str, Mapping[str, Sequence[int]]],
    holders: Mapping[str, Mapping[int, frozenset[str]]],
) -> tuple[Assignment, int]:
    """Drop from ``target`` each partition whose current holders do not include its new owner.

    ``holders`` maps topic -> partition -> members that still hold it (members
    that revoked everything before joining, as in the eager protocol, hold
    nothing).  Returns the first-round assignment and how many partitions wait
    for the second round.
    """
    out: Assignment = {}
    pending = 0
    for member, by_topic in target.items():
        mine: dict[str, list[int]] = {}
        for topic, partitions in by_topic.items():
            held = holders.get(topic)
            if not held:
                mine[topic] = list(partitions)
                continue
            keep = []
            for p in partitions:
                who = held.get(p)
                if who and member not in who:
                    pending += 1
                else:
                    keep.append(p)
            if keep:
                mine[topic] = keep
        out[member] = mine
    return out, pending
