"""Who owns what before the rebalance: resolve stale and conflicting owner claims.

A member's claim counts only for a partition that still exists, of a topic it
still subscribes to.  When several members claim one partition, the claim from
the newest generation wins; on a tie the member that sorts first wins (so the
answer does not depend on the order members arrive in).  Either way exactly one
member keeps the claim.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .model import MemberSpec

log = logging.getLogger("kafka_assignors.core")


@dataclass(slots=True)
class Claims:
    """Resolved claims, indexed like the member list they were built from."""

    #: member index -> topic -> claimed partitions (sorted, unique, valid).
    owned: list[dict[str, list[int]]]
    #: How many claims were dropped, by reason (for logs and tests).
    dropped_stale: int = 0
    dropped_conflict: int = 0
    dropped_invalid: int = 0

    def count(self, i: int) -> int:
        return sum(len(ps) for ps in self.owned[i].values())


def resolve_claims(
    members: Sequence[MemberSpec],
    subscriptions: Sequence[frozenset[str]],
    partition_counts: Mapping[str, int],
) -> Claims:
    """Resolve every member's owned partitions into at most one owner per partition.

    ``members`` must already be in canonical (sorted) order and ``subscriptions``
    hold each member's usable topics.
    """
    # topic -> partition -> (generation, member index) of the winning claim
    best: dict[str, dict[int, tuple[int, int]]] = {}
    result = Claims(owned=[{} for _ in members])
    conflicts: list[str] = []
    for i, member in enumerate(members):
        subs = subscriptions[i]
        gen = member.generation
        for topic, partitions in member.owned.items():
            n = partition_counts.get(topic, 0)
            if topic not in subs or n <= 0:
                result.dropped_invalid += len(partitions)
                continue
            slot = best.setdefault(topic, {})
            for p in partitions:
                if not 0 <= p < n:
                    result.dropped_invalid += 1
                    continue
                prev = slot.get(p)
                if prev is None:
                    slot[p] = (gen, i)
                elif prev[1] == i:
                    continue  # the member listed the partition twice
                elif gen > prev[0]:
                    slot[p] = (gen, i)
                    result.dropped_stale += 1
                elif gen < prev[0]:
                    result.dropped_stale += 1
                else:
                    result.dropped_conflict += 1
                    if len(conflicts) < 5:
                        conflicts.append(
                            f"{topic}-{p} claimed by {members[prev[1]].member_id} and "
                            f"{member.member_id} in generation {gen}"
                        )
    for topic, slot in best.items():
        for p, (_gen, i) in slot.items():
            result.owned[i].setdefault(topic, []).append(p)
    for by_topic in result.owned:
        for ps in by_topic.values():
            ps.sort()
    if result.dropped_conflict:
        log.warning(
            "%d partition(s) claimed by two members in the same generation; "
            "the first member in sort order keeps each (e.g. %s)",
            result.dropped_conflict,
            "; ".join(conflicts),
        )
    if result.dropped_stale:
        log.info("%d stale owner claim(s) from older generations ignored", result.dropped_stale)
    return result
