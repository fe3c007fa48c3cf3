"""Balanced sticky assignment for members that all subscribe to the same topics.

This is the common case and it has an exact closed form: every member gets
``floor(N/C)`` or ``ceil(N/C)`` partitions; the ``N mod C`` larger quotas go
to the members that already own the most, so the number of partitions kept in
place is the largest possible.  Freed and new partitions are dealt out in
round-robin order over the members that are short, which spreads each topic's
partitions across the group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: member index -> topic -> partitions
IndexedAssignment = dict[int, dict[str, list[int]]]


def assign_uniform(
    member_ids: Sequence[int],
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    owned: Sequence[Mapping[str, Sequence[int]]],
) -> IndexedAssignment:
    """Assign all partitions of ``topics`` (sorted) to ``member_ids`` (canonical order).

    ``owned[i]`` holds member ``i``'s resolved claims, all within ``topics``.
    """
    total = sum(partition_counts[t] for t in topics)
    count = len(member_ids)
    base, extra = divmod(total, count)

    owned_n = {i: sum(len(ps) for ps in owned[i].values()) for i in member_ids}
    # Larger quotas go first to members that can fill them with what they own.
    ranked = sorted(member_ids, key=lambda i: (-min(owned_n[i], base + 1), i))
    quota = dict.fromkeys(member_ids, base)
    for i in ranked[:extra]:
        quota[i] = base + 1

    result: IndexedAssignment = {i: {} for i in member_ids}
    kept: dict[str, set[int]] = {}
    for i in member_ids:
        room = quota[i]
        if room == 0 or not owned_n[i]:
            continue
        mine = result[i]
        for topic in sorted(owned[i]):
            ps = owned[i][topic]
            take = ps if len(ps) <= room else ps[:room]
            if take:
                mine[topic] = list(take)
                kept.setdefault(topic, set()).update(take)
                room -= len(take)
            if room == 0:
                break

    deficits = [(i, quota[i] - sum(len(ps) for ps in result[i].values())) for i in member_ids]
    order = _round_robin_order(deficits)
    pool_iter = _free_partitions(topics, partition_counts, kept)
    for member, (topic, partition) in zip(order, pool_iter, strict=True):
        result[member].setdefault(topic, []).append(partition)
    for by_topic in result.values():
        for ps in by_topic.values():
            ps.sort()
    return result


def _round_robin_order(deficits: Sequence[tuple[int, int]]) -> list[int]:
    """Member sequence that deals one partition per round to every member still short."""
    order: list[int] = []
    active = [(i, d) for i, d in deficits if d > 0]
    done = 0
    while active:
        rounds = min(d for _i, d in active) - done
        order.extend([i for i, _d in active] * rounds)
        done += rounds
        active = [(i, d) for i, d in active if d > done]
    return order


def _free_partitions(
    topics: Sequence[str], partition_counts: Mapping[str, int], kept: Mapping[str, set[int]]
) -> list[tuple[str, int]]:
    pool: list[tuple[str, int]] = []
    for topic in topics:
        taken = kept.get(topic)
        n = partition_counts[topic]
        if not taken:
            pool.extend([(topic, p) for p in range(n)])
        elif len(taken) < n:
            pool.extend([(topic, p) for p in range(n) if p not in taken])
    return pool
