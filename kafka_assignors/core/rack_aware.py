"""Rack-aware assignment (KIP-881): prefer a consumer in a rack that holds a replica.

Objective, in this order:

1. balance - exactly as balanced-sticky: an optimal semi-matching (with
   identical subscriptions partition counts differ by at most one);
2. locality - the most partitions consumed from a rack that holds one of their
   replicas (a member with no rack, or a partition with no rack data, never
   counts as local);
3. stickiness - the fewest partitions move to another member.

Like the Java client (``AbstractPartitionAssignor.useRackAwareAssignment``),
racks are used only when some member has a rack that holds replicas and not
every partition has replicas on the same full set of racks; otherwise this is
exactly :func:`~.balanced_sticky.balanced_sticky`.

Method: members with the same subscription and rack form a group; partitions
with the same subscribers, replica racks and previous owner's group form a
class.  A min-cost flow with convex balancing costs (:mod:`.flow`) decides how
many partitions of each class each group gets (balance and locality are exact
there, as is movement between groups); inside a group members keep what they
owned up to an even share, and the rest is dealt out round-robin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .balanced_sticky import balanced_sticky, canonical_members
from .claims import resolve_claims
from .flow import convex_transport
from .model import Assignment, GroupSpec, MemberSpec, TopicPartition
from .subscriptions import usable_subscriptions


def rack_aware_enabled(group: GroupSpec) -> bool:
    """Java's rule: some member rack meets a replica rack, and racks tell partitions apart."""
    member_racks = {m.rack for m in group.members if m.rack}
    if not member_racks:
        return False
    per_partition = [
        spec.replica_racks.get(p, frozenset())
        for t in group.subscribed_topics()
        for spec in (group.topics[t],)
        for p in range(spec.partitions)
    ]
    all_racks = frozenset().union(*per_partition) if per_partition else frozenset()
    if member_racks.isdisjoint(all_racks):
        return False
    return not all(r == all_racks for r in per_partition)


def is_local(member: MemberSpec, racks: frozenset[str]) -> bool:
    return member.rack is not None and member.rack in racks


def _remote(group: GroupSpec, member: MemberSpec, tp: TopicPartition) -> int:
    return 0 if is_local(member, group.topics[tp.topic].replica_racks.get(tp.partition,
                                                                            _NO_RACKS)) else 1


_NO_RACKS: frozenset[str] = frozenset()


def rack_aware(group: GroupSpec) -> Assignment:
    """Balanced, then rack-local, then sticky; see the module docstring."""
    if not rack_aware_enabled(group):
        return balanced_sticky(group)
    members = canonical_members(group)
    subs = usable_subscriptions(group, members)
    counts = {t: spec.partitions for t, spec in group.topics.items()}
    claims = resolve_claims(members, subs, counts)
    member_racks = frozenset(m.rack for m in members if m.rack)

    # member groups: same usable subscription, same rack
    group_of: dict[tuple[frozenset[str], str | None], int] = {}
    member_group: list[int] = []
    group_members: list[list[int]] = []
    for i, m in enumerate(members):
        if not subs[i]:
            member_group.append(-1)
            continue
        g = group_of.setdefault((subs[i], m.rack), len(group_of))
        if g == len(group_members):
            group_members.append([])
        group_members[g].append(i)
        member_group.append(g)
    group_keys = sorted(group_of, key=group_of.__getitem__)

    owner: dict[TopicPartition, int] = {
        TopicPartition(t, p): i for i, by_t in enumerate(claims.owned)
        for t, ps in by_t.items() for p in ps
    }
    # partition classes: (subscriber groups, useful replica racks, owner's group)
    class_of: dict[tuple[tuple[int, ...], frozenset[str], int], int] = {}
    class_parts: list[list[TopicPartition]] = []
    for t in group.subscribed_topics():
        takers = tuple(g for g, (s, _r) in enumerate(group_keys) if t in s)
        if not takers:
            continue
        replica_racks = group.topics[t].replica_racks
        for p in range(counts[t]):
            tp = TopicPartition(t, p)
            racks = replica_racks.get(p, frozenset()) & member_racks
            o = owner.get(tp)
            key = (takers, racks, member_group[o] if o is not None else -1)
            k = class_of.setdefault(key, len(class_of))
            if k == len(class_parts):
                class_parts.append([])
            class_parts[k].append(tp)
    class_keys = sorted(class_of, key=class_of.__getitem__)

    # lexicographic costs: balance >> locality >> moves between groups >> tie-break
    n = sum(map(len, class_parts))
    move_cost = n + 1
    remote_cost = (n + 1) * move_cost
    arcs: dict[tuple[int, int], int] = {}
    for k, (takers, racks, owner_group) in enumerate(class_keys):
        for g in takers:
            rack = group_keys[g][1]
            remote = 0 if rack is not None and rack in racks else 1
            moved = 1 if owner_group >= 0 and owner_group != g else 0
            arcs[(k, g)] = remote * remote_cost + moved * move_cost
    flow = convex_transport(
        [len(ps) for ps in class_parts],
        [len(ms) for ms in group_members],
        arcs,
        level_cost=(n + 1) * remote_cost,
        holdings=[[claims.count(i) for i in ms] for ms in group_members],
    )

    result: list[list[TopicPartition]] = [[] for _ in members]
    pools = [list(ps) for ps in class_parts]
    kept_by: list[set[TopicPartition]] = [set() for _ in class_parts]
    received: list[list[tuple[int, int]]] = [[] for _ in group_members]  # (class, units)
    for (k, g), units in sorted(flow.items()):
        received[g].append((k, units))
    rooms: list[dict[int, int]] = []
    for g, ms in enumerate(group_members):
        rooms.append(_keep_owned(g, ms, received[g], class_keys, class_parts, owner,
                                 kept_by, result))
    for k, kept in enumerate(kept_by):
        if kept:
            pools[k] = [tp for tp in pools[k] if tp not in kept]
    for g in range(len(group_members)):
        got: list[TopicPartition] = []
        for k, units in received[g]:
            need = units - (len(kept_by[k]) if class_keys[k][2] == g else 0)
            got.extend(pools[k][:need])
            del pools[k][:need]
        _deal(sorted(got), rooms[g], result)
    _swap_back(group, members, subs, owner, result)
    return {m.member_id: _by_topic(result[i]) for i, m in enumerate(members)}


def _keep_owned(
    g: int,
    ms: Sequence[int],
    received: Sequence[tuple[int, int]],
    class_keys: Sequence[tuple[tuple[int, ...], frozenset[str], int]],
    class_parts: Sequence[Sequence[TopicPartition]],
    owner: Mapping[TopicPartition, int],
    kept_by: list[set[TopicPartition]],
    result: list[list[TopicPartition]],
) -> dict[int, int]:
    """Members of group ``g`` keep owned partitions of the classes the group keeps.

    Returns each member's remaining room.
    """
    total = sum(units for _k, units in received)
    base, extra = divmod(total, len(ms))
    allowance = {k: units for k, units in received if class_keys[k][2] == g}
    mine: dict[int, list[tuple[int, TopicPartition]]] = {i: [] for i in ms}
    for k in allowance:
        for tp in class_parts[k]:
            mine[owner[tp]].append((k, tp))
    # larger shares go to the members that can fill them with what they own
    ranked = sorted(ms, key=lambda i: (-min(len(mine[i]), base + 1), i))
    room = dict.fromkeys(ms, base)
    for i in ranked[:extra]:
        room[i] += 1
    # how many of its own partitions of class k member i keeps: greedy, then
    # augmenting paths (a bipartite b-matching between members and classes)
    own: dict[int, dict[int, list[TopicPartition]]] = {i: {} for i in ms}
    for i in ms:
        for k, tp in sorted(mine[i], key=lambda e: e[1]):
            own[i].setdefault(k, []).append(tp)
    keep: dict[int, dict[int, int]] = {i: {} for i in ms}
    for i in ms:
        for k, tps in own[i].items():
            n = min(len(tps), room[i], allowance[k])
            if n:
                keep[i][k] = n
                room[i] -= n
                allowance[k] -= n
    while _augment(ms, own, keep, room, allowance):
        pass
    for i in ms:
        for k, n in keep[i].items():
            result[i].extend(own[i][k][:n])
            kept_by[k].update(own[i][k][:n])
    return room


def _augment(
    ms: Sequence[int],
    own: Mapping[int, Mapping[int, Sequence[TopicPartition]]],
    keep: dict[int, dict[int, int]],
    room: dict[int, int],
    allowance: dict[int, int],
) -> bool:
    """One more kept partition along an alternating path, if there is one."""
    holders: dict[int, list[int]] = {}
    for i in ms:
        for k, n in keep[i].items():
            if n:
                holders.setdefault(k, []).append(i)
    came_from: dict[tuple[str, int], tuple[str, int] | None] = {}
    frontier = [("m", i) for i in ms if room[i] and any(
        keep[i].get(k, 0) < len(tps) for k, tps in own[i].items())]
    for node in frontier:
        came_from[node] = None
    while frontier:
        nxt: list[tuple[str, int]] = []
        for kind, x in frontier:
            if kind == "m":
                steps = [("c", k) for k, tps in own[x].items() if keep[x].get(k, 0) < len(tps)]
            else:
                if allowance[x]:
                    _apply(("c", x), came_from, keep, room, allowance)
                    return True
                steps = [("m", j) for j in holders.get(x, ())]
            for step in steps:
                if step not in came_from:
                    came_from[step] = (kind, x)
                    nxt.append(step)
        frontier = nxt
    return False


def _apply(
    end: tuple[str, int],
    came_from: Mapping[tuple[str, int], tuple[str, int] | None],
    keep: dict[int, dict[int, int]],
    room: dict[int, int],
    allowance: dict[int, int],
) -> None:
    allowance[end[1]] -= 1
    node: tuple[str, int] | None = end
    while node is not None:
        prev = came_from[node]
        if prev is None:
            room[node[1]] -= 1
        elif node[0] == "c":  # member prev[1] keeps one more of class node[1]
            keep[prev[1]][node[1]] = keep[prev[1]].get(node[1], 0) + 1
        else:  # member node[1] keeps one fewer of class prev[1]
            keep[node[1]][prev[1]] -= 1
        node = prev


def _swap_back(
    group: GroupSpec,
    members: Sequence[MemberSpec],
    subs: Sequence[frozenset[str]],
    owner: Mapping[TopicPartition, int],
    result: list[list[TopicPartition]],
) -> None:
    """Give a moved partition back to its owner in exchange for one the owner never had.

    Loads stay the same and locality does not get worse; each swap saves a move.
    (Members of one group are interchangeable to the flow, so a few such swaps
    can remain after dealing.)
    """
    holder = {tp: i for i, tps in enumerate(result) for tp in tps}
    changed = True
    while changed:
        changed = False
        for tp in sorted(holder):
            o, h = owner.get(tp), holder[tp]
            if o is None or o == h:
                continue
            for q in sorted(result[o]):
                if owner.get(q) == o or q.topic not in subs[h]:
                    continue
                before = _remote(group, members[h], tp) + _remote(group, members[o], q)
                if _remote(group, members[h], q) + _remote(group, members[o], tp) <= before:
                    result[o].remove(q)
                    result[h].remove(tp)
                    result[o].append(tp)
                    result[h].append(q)
                    holder[tp], holder[q] = o, h
                    changed = True
                    break


def _deal(parts: Sequence[TopicPartition], room: dict[int, int], result: list[list[
        TopicPartition]]) -> None:
    """Deal partitions round-robin over the members with room (spreads each topic)."""
    order = [i for i in sorted(room) if room[i]]
    it = iter(parts)
    while order:
        nxt = []
        for i in order:
            tp = next(it, None)
            if tp is None:
                return
            result[i].append(tp)
            room[i] -= 1
            if room[i]:
                nxt.append(i)
        order = nxt


def _by_topic(tps: Sequence[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out

