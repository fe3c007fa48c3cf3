"""Balanced sticky assignment when members subscribe to different topics.

The problem is solved on counts, not partitions: ``x[m][t]`` is how many
partitions of topic ``t`` member ``m`` gets.  Partitions of one topic are
interchangeable except for who owned them, so a member keeps
``min(x[m][t], owned[m][t])`` of its own and the rest is dealt out at the end.

Objective, in this order (a lexicographic min-cost flow):

1. balance - the loads form an optimal semi-matching: no partition can be
   passed along a chain of members, each subscribed to the topic it receives,
   from a member with ``k + 2`` or more partitions to one with ``k`` or fewer
   (equivalently: the sum of squared loads is the least possible);
2. per-topic balance (``per_topic``, the default) - among those, the least
   ``sum over topics t, members m of x[m][t]**2``: each topic spread over its
   subscribers as evenly as 1 allows (with identical subscriptions: the floor
   or the ceiling of ``P_t / M`` everywhere);
3. movement - among those, the fewest owned partitions leave their owner.

Steps: keep every claim; place unowned partitions by water-filling, most
constrained topic first; remove imbalance along cheapest cost-reducing paths
(objective 1 is then met); then cancel negative cycles of the residual graph
(with "level" nodes that allow load-neutral swaps), which is the optimality
test of min-cost flow, under the cost ``scale * d2 + d3`` of a unit move:
``d2`` its change of objective 2 (``2x + 1`` to take a unit of a topic the
member holds ``x`` of, ``-(2x - 1)`` to give one up), ``d3`` its change of
moved partitions, and ``scale`` larger than any ``|d3|`` along a simple cycle
(the number of topics plus one), so a cycle improves 2 first, then 3.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Mapping, Sequence

from .class_shares import balance_shares
from .paths import Budget, cycle_in_predecessors, trace_path
from .uniform import IndexedAssignment, plan_counts, plan_uniform

log = logging.getLogger("kafka_assignors.core")

#: Default work budget of movement minimisation, in Bellman-Ford edge relaxations
#: (about 10 s of work at the ~5 million a second CPython manages on one core).  A
#: count, not a clock, so a slow or busy leader computes the same assignment as a
#: fast one, and the second cooperative round reproduces the first.  The benchmark
#: workloads (up to 1,000,000 partitions x 2,000 members, unequal) use none of it.
POLISH_BUDGET = 50_000_000


class _State:
    """Counts per member and topic, with the owned counts they are measured against."""

    def __init__(
        self,
        member_ids: Sequence[int],
        subscriptions: Mapping[int, Sequence[str]],
        partition_counts: Mapping[str, int],
        owned: Sequence[Mapping[str, list[int]]],
        per_topic: bool = True,
        claimed: Mapping[str, set[int]] | None = None,
    ) -> None:
        self.members = list(member_ids)
        #: topic -> every partition somebody owns (computed when needed if not given)
        self.claimed = claimed
        self.subs = {i: list(subscriptions[i]) for i in self.members}
        self.topics = sorted({t for i in self.members for t in self.subs[i]})
        self.counts = partition_counts
        self.subscribers: dict[str, list[int]] = {t: [] for t in self.topics}
        for i in self.members:
            for t in self.subs[i]:
                self.subscribers[t].append(i)
        self.owned_lists = owned
        self.own: dict[int, dict[str, int]] = {
            i: {t: len(ps) for t, ps in owned[i].items() if ps} for i in self.members
        }
        self.x: dict[int, dict[str, int]] = {i: dict(self.own[i]) for i in self.members}
        self.load: dict[int, int] = {i: sum(self.x[i].values()) for i in self.members}
        # weight of objective 2 against objective 3 in a cycle's cost (0: ignore 2)
        self.scale = len(self.topics) + 1 if per_topic else 0

    def start_from(self, x: Mapping[int, Mapping[str, int]]) -> None:
        """Start from given counts (already optimally balanced) instead of the claims."""
        self.x = {i: dict(x[i]) for i in self.members}  # callers leave out zeros
        self.load = {i: sum(self.x[i].values()) for i in self.members}

    def move(self, giver: int, topic: str, taker: int, amount: int = 1) -> None:
        left = self.x[giver][topic] - amount
        if left:
            self.x[giver][topic] = left
        else:
            del self.x[giver][topic]
        self.x[taker][topic] = self.x[taker].get(topic, 0) + amount
        self.load[giver] -= amount
        self.load[taker] += amount

    def give_cost(self, member: int, topic: str) -> int:
        """Cost of ``member`` giving up one partition of ``topic``: 1 if it is one it owned."""
        return 1 if self.x[member][topic] <= self.own[member].get(topic, 0) else 0

    def take_cost(self, member: int, topic: str) -> int:
        """Cost of ``member`` taking one: -1 if that gives back one it owned."""
        return -1 if self.x[member].get(topic, 0) < self.own[member].get(topic, 0) else 0

    def give_weight(self, member: int, topic: str) -> int:
        """Cycle cost of giving one up: per-topic balance first, then movement."""
        return self.scale * (1 - 2 * self.x[member][topic]) + self.give_cost(member, topic)

    def take_weight(self, member: int, topic: str) -> int:
        """Cycle cost of taking one: per-topic balance first, then movement."""
        x = self.x[member].get(topic, 0)
        return self.scale * (2 * x + 1) + self.take_cost(member, topic)

    def topics_even(self) -> bool:
        """Every topic's counts differ by at most one over its subscribers (objective 2's bound)."""
        for t, subs in self.subscribers.items():
            lo, hi = divmod(self.counts[t], len(subs))
            hi = lo + 1 if hi else lo
            for i in subs:
                c = self.x[i].get(t, 0)
                if c < lo or c > hi:
                    return False
        return True


def assign_unequal(
    member_ids: Sequence[int],
    subscriptions: Mapping[int, Sequence[str]],
    partition_counts: Mapping[str, int],
    owned: Sequence[Mapping[str, list[int]]],
    polish_budget: int = POLISH_BUDGET,
    per_topic: bool = True,
    start: Mapping[int, Mapping[str, int]] | None = None,
    claimed: Mapping[str, set[int]] | None = None,
) -> IndexedAssignment:
    """Optimal balanced, minimal-movement assignment for one connected set of members.

    ``polish_budget`` caps the work (edge relaxations) spent on per-topic balance
    and movement; when it runs out the result is still balanced and deterministic,
    but may be less even per topic or move more partitions than necessary.
    ``start`` gives optimally balanced counts to improve instead of computing them;
    ``claimed`` (topic -> partitions somebody owns) saves working it out.
    """
    st = _State(member_ids, subscriptions, partition_counts, owned, per_topic, claimed)
    budget = Budget(polish_budget)
    topics_done = False  # objective 2 known to be optimal
    if start is None:
        _place_unowned(st)
        _balance(st)
        if per_topic:
            planned = _class_plan(st, budget)
            if planned is not None:
                st.start_from(planned)
                topics_done = True
    else:
        st.start_from(start)
    if not _polish(st, budget, topics_done):
        log.warning(
            "movement minimisation stopped after its work budget (%d edge relaxations); "
            "the assignment is balanced but may be less even per topic or move more "
            "partitions than necessary",
            polish_budget,
        )
    log.debug("movement minimisation used %d edge relaxations", polish_budget - budget.left)
    return _deal_out(st)


def _class_plan(st: _State, budget: Budget) -> dict[int, dict[str, int]] | None:
    """Counts with optimal balance and per-topic balance, solved on classes of members with
    identical subscriptions (:mod:`.class_shares`), then spread inside each class by the
    uniform plan (floor or ceiling of the class's share, the most owned kept).  None if a
    class's plan could not be completed (never expected) or the budget ran out."""
    members_of: dict[tuple[str, ...], list[int]] = {}
    for i in st.members:
        members_of.setdefault(tuple(st.subs[i]), []).append(i)
    classes = list(members_of.items())
    shares: list[dict[str, int]] = []
    holdings: list[dict[str, int]] = []
    for _topics, ms in classes:
        share: dict[str, int] = {}
        held: dict[str, int] = {}
        for i in ms:
            for t, c in st.x[i].items():
                share[t] = share.get(t, 0) + c
            for t, c in st.own[i].items():
                held[t] = held.get(t, 0) + c
        shares.append(share)
        holdings.append(held)
    before = [dict(share) for share in shares]
    if not balance_shares([t for t, _ms in classes], [len(ms) for _t, ms in classes],
                          shares, holdings, budget):
        return None
    x: dict[int, dict[str, int]] = {}
    for (topics, ms), share, old in zip(classes, shares, before, strict=True):
        counts = {t: share.get(t, 0) for t in topics}
        if share == old and _settled(st, ms, counts):
            x.update((i, st.x[i]) for i in ms)  # already what the plan would give
            continue
        ones, _kept_most = plan_uniform(ms, topics, counts, st.own)
        if ones is None:
            return None
        x.update(plan_counts(ms, topics, counts, ones))
    return x


def _settled(st: _State, members: Sequence[int], counts: Mapping[str, int]) -> bool:
    """The class's members hold the floor or ceiling of each topic's share and lack none
    of what they owned (so no plan keeps more); set operations on (topic, count) pairs."""
    size = len(members)
    floors = {t: c // size for t, c in counts.items() if c >= size}
    at_floor = floors.items()
    for i in members:
        xi = st.x[i]
        if floors.keys() - xi.keys():
            return False
        if any(c != floors.get(t, 0) + 1 for t, c in xi.items() - at_floor):
            return False
        if st.own[i].items() - xi.items() and any(
            xi.get(t, 0) < c for t, c in st.own[i].items()
        ):
            return False
    return True


def _place_unowned(st: _State) -> None:
    owned_total: dict[str, int] = {}
    for i in st.members:
        for t, c in st.own[i].items():
            owned_total[t] = owned_total.get(t, 0) + c
    for t in sorted(st.topics, key=lambda t: (len(st.subscribers[t]), t)):
        units = st.counts[t] - owned_total.get(t, 0)
        if units <= 0:
            continue
        for i, amount in _water_fill(st.subscribers[t], st.load, units):
            st.x[i][t] = st.x[i].get(t, 0) + amount
            st.load[i] += amount


def _water_fill(members: Sequence[int], load: Mapping[int, int], units: int) -> list[
    tuple[int, int]
]:
    """Split ``units`` over ``members`` so the least loaded are raised to a common level."""
    order = sorted(members, key=lambda i: (load[i], i))
    prefix = 0
    k = 0
    for k in range(1, len(order) + 1):
        prefix += load[order[k - 1]]
        if k == len(order) or k * load[order[k]] - prefix >= units:
            break
    level, extra = divmod(units + prefix, k)
    out = []
    for j, i in enumerate(order[:k]):
        amount = level - load[i] + (1 if j < extra else 0)
        if amount > 0:
            out.append((i, amount))
    return out


def _balance(st: _State) -> None:
    """Apply cost-reducing paths until none is left (an optimal semi-matching)."""
    active = set(st.members)
    while active:
        loads = [st.load[i] for i in active]
        top = max(loads)
        if top - min(loads) <= 1:
            return
        sources = sorted(i for i in active if st.load[i] == top)
        found, reached = _cheapest_path(st, sources, active, top - 2)
        if found is None:
            # Nothing the busiest members hold can reach a lighter member: this
            # closed set is already optimal; continue below it.
            active -= reached
            continue
        hops, target = found
        amount = (top - st.load[target]) // 2
        for giver, topic, _taker in hops:
            spare = st.x[giver][topic] - st.own[giver].get(topic, 0)
            amount = min(amount, spare if spare > 0 else st.x[giver][topic])
        for giver, topic, taker in hops:
            st.move(giver, topic, taker, amount)


def _cheapest_path(
    st: _State, sources: Sequence[int], active: set[int], max_target_load: int
) -> tuple[tuple[list[tuple[int, str, int]], int] | None, set[int]]:
    """0-1 BFS from ``sources`` to the cheapest member loaded at most ``max_target_load``.

    Returns ``((hops, target), reached)`` or ``(None, reached)``; cost counts owned
    partitions that would leave their owner.
    """
    dist_m: dict[int, int] = dict.fromkeys(sources, 0)
    via_topic: dict[int, str] = {}
    dist_t: dict[str, int] = {}
    via_member: dict[str, int] = {}
    done_m: set[int] = set()
    done_t: set[str] = set()
    queue: deque[tuple[int, int | str]] = deque((0, s) for s in sources)
    while queue:
        d, node = queue.popleft()
        if isinstance(node, int):
            if node in done_m or d > dist_m[node]:
                continue
            done_m.add(node)
            if st.load[node] <= max_target_load:
                return (trace_path(node, via_topic, via_member), node), done_m
            for t in st.x[node]:
                nd = d + st.give_cost(node, t)
                if t not in done_t and nd < dist_t.get(t, nd + 1):
                    dist_t[t] = nd
                    via_member[t] = node
                    (queue.append if nd > d else queue.appendleft)((nd, t))
        else:
            if node in done_t or d > dist_t[node]:
                continue
            done_t.add(node)
            for j in st.subscribers[node]:
                if j in active and j not in done_m and d < dist_m.get(j, d + 1):
                    dist_m[j] = d
                    via_topic[j] = node
                    queue.appendleft((d, j))
    return None, done_m


def _polish(st: _State, budget: Budget, topics_done: bool = False) -> bool:
    """Cancel negative cycles until none is left; False if the budget ran out first.

    ``topics_done``: objective 2 is known to be optimal (cycles then only trade moves).
    """
    while True:
        if not any(
            st.x[i].get(t, 0) < c for i in st.members for t, c in st.own[i].items()
        ) and (not st.scale or topics_done or st.topics_even()):
            # no member lacks an owned partition and no topic can be more even:
            # nothing can get cheaper
            return True
        cycle = _negative_cycle(st, budget)
        if cycle is None:
            return True
        if not cycle:
            return False
        for giver, topic, taker in cycle:
            st.move(giver, topic, taker)


def _negative_cycle(st: _State, budget: Budget) -> list[tuple[int, str, int]] | None:
    """Bellman-Ford over members, topics and load levels.

    Level node ``L`` joins "a member at load L gives" to "a member at load L-1
    receives", so a cycle through it keeps the multiset of loads (and therefore
    the balance) unchanged.  Returns the unit moves of a negative cycle, ``None``
    if there is none, or ``[]`` if the budget cannot pay for the next round.
    """
    node_of: dict[tuple[str, int | str], int] = {}
    names: list[tuple[str, int | str]] = []

    def nid(key: tuple[str, int | str]) -> int:
        n = node_of.get(key)
        if n is None:
            n = node_of[key] = len(names)
            names.append(key)
        return n

    edges: list[tuple[int, int, int]] = []
    for i in st.members:
        m = nid(("m", i))
        edges.append((nid(("L", st.load[i])), m, 0))
        edges.append((m, nid(("L", st.load[i] + 1)), 0))
        for t in st.x[i]:
            edges.append((m, nid(("t", t)), st.give_weight(i, t)))
        for t in st.subs[i]:
            edges.append((nid(("t", t)), m, st.take_weight(i, t)))
    size = len(names)
    dist = [0] * size
    pred = [-1] * size
    for _round in range(size):
        if budget.left < len(edges):
            return []
        budget.left -= len(edges)
        changed = False
        for u, v, w in edges:
            if dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                pred[v] = u
                changed = True
        if not changed:
            return None
        start = cycle_in_predecessors(pred)
        if start is not None:
            return _cycle_moves(start, pred, names)
    return None


def _cycle_moves(
    start: int, pred: Sequence[int], names: Sequence[tuple[str, int | str]]
) -> list[tuple[int, str, int]]:
    cycle = [start]
    v = pred[start]
    while v != start:
        cycle.append(v)
        v = pred[v]
    cycle.reverse()  # forward order: cycle[k] -> cycle[k+1]
    moves = []
    n = len(cycle)
    for k in range(n):
        kind, topic = names[cycle[k]]
        if kind == "t":
            giver = names[cycle[k - 1]][1]
            taker = names[cycle[(k + 1) % n]][1]
            assert isinstance(topic, str) and isinstance(giver, int) and isinstance(taker, int)
            moves.append((giver, topic, taker))
    return moves


def _deal_out(st: _State) -> IndexedAssignment:
    """Turn counts into partitions: owners keep their lowest-numbered own first, the rest
    (unclaimed and given-up partitions, in order) is dealt to the members short of their
    count, in member order.  A member whose counts equal what it owns keeps its lists."""
    result: IndexedAssignment = {}
    shed: dict[str, list[int]] = {}
    short: dict[str, list[tuple[int, int]]] = {}
    for i in st.members:
        xi, mine = st.x[i], st.owned_lists[i]
        res = dict(mine)  # lists shared, never changed: a changed topic gets a new list
        result[i] = res
        off = st.own[i].items() ^ xi.items()  # (topic, count) pairs that differ, in C
        for t in sorted({t for t, _c in off}):
            want = xi.get(t, 0)
            ps = mine.get(t, ())
            if len(ps) > want:
                srt = sorted(ps)
                if want:
                    res[t] = srt[:want]
                else:
                    del res[t]
                shed.setdefault(t, []).extend(srt[want:])
            elif len(ps) < want:
                short.setdefault(t, []).append((i, want - len(ps)))
    for t, needs in short.items():
        claimed = st.claimed.get(t) if st.claimed is not None else None
        if claimed is None:
            claimed = set()
            for i in st.subscribers[t]:
                claimed.update(st.owned_lists[i].get(t, ()))
        pool = shed.get(t, [])
        pool.extend(p for p in range(st.counts[t]) if p not in claimed)
        pool.sort()
        pos = 0
        for i, n in needs:
            got = result[i].get(t)
            more = pool[pos : pos + n]
            pos += n
            result[i][t] = sorted(got + more) if got else more
    return result
