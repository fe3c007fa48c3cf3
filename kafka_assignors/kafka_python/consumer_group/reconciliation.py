"""What one reconciliation does: the partitions to revoke, to assign and to own after.

Pure: the target comes by topic id (the broker never names topics in KIP-848), names come
from the consumer's metadata through ``name_of``.  A target partition whose topic has no
name yet is left for a later reconciliation (after a metadata refresh); a partition the
member owns keeps the name it was assigned under, so it can be revoked even once its
topic is gone from the metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .membership import Assignment

#: (topic name, partition)
NamedPartition = tuple[str, int]


@dataclass(frozen=True)
class Plan:
    """Revoke first, then assign; ``owned`` is what the member owns afterwards (by id)."""

    revoke: frozenset[NamedPartition]
    assign: frozenset[NamedPartition]
    keep: frozenset[NamedPartition]
    owned: Assignment
    names: Mapping[str, str]  # topic id -> name, of everything in ``owned``
    unresolved: frozenset[str]  # topic ids of the target without a name yet

    @property
    def changes(self) -> bool:
        return bool(self.revoke or self.assign)


def plan(current: Assignment, target: Assignment, known: Mapping[str, str],
         name_of: Callable[[str], str | None]) -> Plan:
    """The reconciliation of ``current`` (named in ``known``) towards ``target``."""
    names: dict[str, str] = {}
    unresolved: set[str] = set()
    for tid, _ in target:
        name = known.get(tid) or name_of(tid)
        if name is None:
            unresolved.add(tid)
        else:
            names[tid] = name
    revoke = frozenset((known[tid], p) for tid, p in current - target)
    kept_ids = current & target
    added_ids = frozenset((tid, p) for tid, p in target - current if tid in names)
    owned = kept_ids | added_ids
    return Plan(revoke=revoke,
                assign=frozenset((names[tid], p) for tid, p in added_ids),
                keep=frozenset((names[tid], p) for tid, p in kept_ids),
                owned=owned,
                names={tid: names[tid] for tid, _ in owned},
                unresolved=frozenset(unresolved))
