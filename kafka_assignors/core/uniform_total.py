"""Total-only balanced sticky assignment for identical subscriptions (the old tie-breaking).

Kept for ``per_topic_balance=False``: every member gets
``floor(N/C)`` or ``ceil(N/C)`` partitions; the ``N mod C`` larger quotas go
to the members that already own the most, so the number of partitions kept in
place is the largest possible.  Freed and new partitions are dealt out in
round-robin order over the members that are short, which spreads each topic's
partitions across the group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .uniform import IndexedAssignment


def assign_uniform_total(
    member_ids: Sequence[int],
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    owned: Sequence[Mapping[str, list[int]]],
    claimed: Mapping[str, set[int]],
) -> IndexedAssignment:
    """Assign all partitions of ``topics`` (sorted) to ``member_ids`` (canonical order).

    ``owned[i]`` holds member ``i``'s resolved claims, all within ``topics``, and
    ``claimed[t]`` every claimed partition of topic ``t``.
    """
    total = sum(partition_counts[t] for t in topics)
    count = len(member_ids)
    base, extra = divmod(total, count)

    owned_n = {i: sum(map(len, owned[i].values())) for i in member_ids}
    # Larger quotas go first to members that can fill them with what they own.
    ranked = sorted(member_ids, key=lambda i: (-min(owned_n[i], base + 1), i))
    quota = dict.fromkeys(member_ids, base)
    for i in ranked[:extra]:
        quota[i] = base + 1

    result: IndexedAssignment = {}
    shed: dict[str, list[int]] = {}
    deficits = []
    for i in member_ids:
        room = quota[i] - owned_n[i]
        if room >= 0:
            # keeps everything it owns (the usual case)
            result[i] = dict(owned[i])
            if room:
                deficits.append((i, room))
            continue
        mine: dict[str, list[int]] = {}
        room = quota[i]
        for topic in sorted(owned[i]):
            ps = sorted(owned[i][topic])
            take = ps[:room]
            if take:
                mine[topic] = take
                room -= len(take)
            if len(take) < len(ps):
                shed.setdefault(topic, []).extend(ps[len(take) :])
        result[i] = mine

    order = _round_robin_order(deficits)
    pool = _free_partitions(topics, partition_counts, claimed, shed)
    touched = set()
    for member, (topic, partition) in zip(order, pool, strict=True):
        got = result[member].get(topic)
        if got is None:
            result[member][topic] = [partition]
        else:
            if (member, topic) not in touched:
                # a copy: the list may be the member's claim (read only)
                got = result[member][topic] = list(got)
                touched.add((member, topic))
            got.append(partition)
    for member, topic in touched:
        result[member][topic].sort()
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
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    claimed: Mapping[str, set[int]],
    shed: Mapping[str, list[int]],
) -> list[tuple[str, int]]:
    """Unclaimed partitions and those shed by members over quota, in topic-partition order."""
    pool: list[tuple[str, int]] = []
    for topic in topics:
        taken = claimed.get(topic)
        n = partition_counts[topic]
        if topic in shed:
            free = set(shed[topic])
            free.update(p for p in range(n) if taken is None or p not in taken)
            pool.extend([(topic, p) for p in sorted(free)])
        elif not taken:
            pool.extend([(topic, p) for p in range(n)])
        elif len(taken) < n:
            pool.extend([(topic, p) for p in range(n) if p not in taken])
    return pool
