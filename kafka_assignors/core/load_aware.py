"""Load-aware assignment: balance the total weight (lag, bytes/s ...) each member carries.

Objective, in this order:

1. the heaviest member carries as little weight as the search finds
   (longest-processing-time-first placement, then moves and swaps away from
   the heaviest member; exact optimisation is NP-hard);
2. stickiness - previous owners keep their partitions while the loads stay
   within ``tolerance`` of that best result: with ``tolerance=0.05`` nothing
   moves unless keeping it would leave the heaviest member more than 5% of the
   mean load above the best found (or the lightest more than 5% below);
3. partitions of weight zero (no lag) are spread by count: they go to the
   members holding the fewest partitions, never all to one member; partitions
   of equal positive weight are spread by count too, as far as that keeps each
   pair of members at least as balanced.

Partitions without a weight weigh the mean of the weighed ones.  Without
weights, or when every partition weighs the same, this is exactly
:func:`~.balanced_sticky.balanced_sticky`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

from .balanced_sticky import balanced_sticky, canonical_members
from .claims import resolve_claims
from .fill import sticky_fill
from .model import Assignment, GroupSpec, TopicPartition
from .subscriptions import usable_subscriptions

DEFAULT_TOLERANCE = 0.05


def effective_weights(group: GroupSpec) -> dict[TopicPartition, float] | None:
    """Weights of every subscribed partition: given ones if finite and >= 0, else the mean.

    None when there is nothing usable to balance on.
    """
    if not group.weights:
        return None
    parts = [TopicPartition(t, p) for t in group.subscribed_topics()
             for p in range(group.partition_count(t))]
    given: dict[TopicPartition, float] = {}
    for tp in parts:
        w = group.weights.get(tp)
        if isinstance(w, int | float) and math.isfinite(w) and w >= 0:
            given[tp] = float(w)
    if not given:
        return None
    mean = sum(given.values()) / len(given)
    return {tp: given.get(tp, mean) for tp in parts}


def load_aware(group: GroupSpec, tolerance: float = DEFAULT_TOLERANCE) -> Assignment:
    """Weight-balanced, sticky within ``tolerance``; see the module docstring."""
    weights = effective_weights(group)
    if weights is None or len(set(weights.values())) <= 1:
        return balanced_sticky(group)
    members = canonical_members(group)
    subs = usable_subscriptions(group, members)
    counts = {t: spec.partitions for t, spec in group.topics.items()}
    claims = resolve_claims(members, subs, counts)
    owner = {TopicPartition(t, p): i for i, by_t in enumerate(claims.owned)
             for t, ps in by_t.items() for p in ps}
    eligible: dict[str, list[int]] = {}
    for i, s in enumerate(subs):
        for t in sorted(s):
            eligible.setdefault(t, []).append(i)

    heavy = sorted((tp for tp, w in weights.items() if w > 0), key=lambda tp: (-weights[tp], tp))
    light = sorted(tp for tp, w in weights.items() if w == 0)
    search = _Search(len(members), eligible, weights)
    fresh = search.place({}, heavy)
    search.improve(fresh, target=0.0)
    mean = sum(weights[tp] for tp in heavy) / max(1, len({i for t in eligible
                                                         for i in eligible[t]}))
    slack = tolerance * mean
    best_max, best_min = search.extremes(fresh)
    sticky = search.place({tp: owner[tp] for tp in heavy if tp in owner}, heavy)
    search.improve(sticky, target=best_max + slack, floor=best_min - slack)
    hi, lo = search.extremes(sticky)
    chosen = sticky if hi <= best_max + slack and lo >= best_min - slack else fresh
    search.smooth_counts(chosen, owner, cap=max(best_max + slack, search.extremes(chosen)[0]))

    per_member: list[list[TopicPartition]] = [[] for _ in members]
    for tp, i in chosen.items():
        per_member[i].append(tp)
    # zero-weight partitions: by count, on top of what each member already holds
    placed = sticky_fill(
        len(members),
        [(tp.topic, tp) for tp in light],
        eligible,
        owner,
        fixed=[len(ps) for ps in per_member],
    )
    for i, tps in enumerate(placed):
        per_member[i].extend(tps)
    return {m.member_id: _by_topic(per_member[i]) for i, m in enumerate(members)}


class _Search:
    """Greedy placement and local search on ``{partition: member}`` maps."""

    def __init__(
        self,
        n_members: int,
        eligible: Mapping[str, Sequence[int]],
        weights: Mapping[TopicPartition, float],
    ) -> None:
        self.n = n_members
        self.eligible = eligible
        self.allowed = {t: frozenset(ms) for t, ms in eligible.items()}
        self.w = weights
        self.takers = sorted({i for ms in eligible.values() for i in ms})
        # topics with the same subscribers share one heap in place()
        ids: dict[tuple[int, ...], int] = {}
        self.heap_of = {t: ids.setdefault(tuple(ms), len(ids)) for t, ms in eligible.items()}

    def loads(self, placed: Mapping[TopicPartition, int]) -> list[float]:
        load = [0.0] * self.n
        for tp, i in placed.items():
            load[i] += self.w[tp]
        return load

    def extremes(self, placed: Mapping[TopicPartition, int]) -> tuple[float, float]:
        load = self.loads(placed)
        return max(load[i] for i in self.takers), min(load[i] for i in self.takers)

    def place(
        self, kept: Mapping[TopicPartition, int], parts: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """Keep ``kept``; the rest, heaviest first, each to its lightest allowed member."""
        placed = dict(kept)
        load = self.loads(placed)
        count = [0] * self.n
        for i in placed.values():
            count[i] += 1
        heaps: dict[int, list[tuple[float, int, int]]] = {}
        for tp in parts:
            if tp in placed:
                continue
            heap = heaps.get(self.heap_of[tp.topic])
            if heap is None:
                heap = heaps[self.heap_of[tp.topic]] = [
                    (load[i], count[i], i) for i in self.eligible[tp.topic]
                ]
                heapq.heapify(heap)
            while True:  # entries go stale when a member gains partitions of another topic
                lo, c, i = heapq.heappop(heap)
                if lo == load[i] and c == count[i]:
                    break
                heapq.heappush(heap, (load[i], count[i], i))
            placed[tp] = i
            load[i] += self.w[tp]
            count[i] += 1
            heapq.heappush(heap, (load[i], count[i], i))
        return placed

    def improve(
        self, placed: dict[TopicPartition, int], target: float, floor: float | None = None
    ) -> None:
        """Move or swap partitions off the heaviest member while it is above ``target``.

        With ``floor``, also move partitions onto the lightest member while it is
        below ``floor``.  Every step lowers the heavier of the two members it
        touches, so the search ends.
        """
        load = self.loads(placed)
        held: list[list[TopicPartition]] = [[] for _ in range(self.n)]
        for tp, i in sorted(placed.items()):
            held[i].append(tp)
        eps = 1e-9 * (max(load) or 1.0)
        for _ in range(20 * len(placed) + 100):
            heavy = max(self.takers, key=lambda i: (load[i], -i))
            light = min(self.takers, key=lambda i: (load[i], i))
            if load[heavy] > target + eps:
                step = self._best_step(heavy, held, load, eps)
            elif floor is not None and load[light] < floor - eps:
                step = self._feed(light, held, load, eps)
            else:
                return
            if step is None:
                return
            for tp, src, dst in step:
                held[src].remove(tp)
                held[dst].append(tp)
                load[src] -= self.w[tp]
                load[dst] += self.w[tp]
                placed[tp] = dst

    def smooth_counts(
        self, placed: dict[TopicPartition, int], owner: Mapping[TopicPartition, int], cap: float
    ) -> None:
        """Spread partitions of equal weight by count, where the loads allow it.

        Within each set of partitions that weigh exactly the same, a member holding
        two or more of them more than another member that may take one gives one away
        (one it did not own, if it can), provided the taker ends no heavier than the
        giver was and below ``cap``: the pair gets no less balanced.  So equal
        partitions do not pile up on the member that happened to own them.
        """
        load = self.loads(placed)
        classes: dict[float, list[TopicPartition]] = {}
        for tp in sorted(placed):
            classes.setdefault(self.w[tp], []).append(tp)
        eps = 1e-9 * (max(load) or 1.0)
        for w, tps in sorted(classes.items(), reverse=True):
            if len(tps) < 2:
                continue
            mine: dict[int, list[TopicPartition]] = {}
            for tp in tps:
                mine.setdefault(placed[tp], []).append(tp)
            for _ in range(2 * len(tps)):
                move = None
                for a in sorted(mine, key=lambda i: (-len(mine[i]), i)):
                    have = len(mine[a])
                    if have < 2:
                        break
                    for tp in sorted(mine[a], key=lambda tp: (owner.get(tp) == a, tp)):
                        fits = [b for b in self.eligible[tp.topic]
                                if len(mine.get(b, ())) <= have - 2
                                and load[b] + w <= min(load[a], cap) + eps]
                        if fits:
                            b = min(fits, key=lambda b: (len(mine.get(b, ())), load[b], b))
                            move = (tp, a, b)
                            break
                    if move is not None:
                        break
                if move is None:
                    break
                tp, a, b = move
                mine[a].remove(tp)
                mine.setdefault(b, []).append(tp)
                load[a] -= w
                load[b] += w
                placed[tp] = b

    def _best_step(
        self, h: int, held: Sequence[list[TopicPartition]], load: Sequence[float], eps: float
    ) -> list[tuple[TopicPartition, int, int]] | None:
        """The move, or else the swap, that leaves the pair's heavier side lightest."""
        by_load = sorted(self.takers, key=lambda i: (load[i], i))
        best: tuple[float, list[tuple[TopicPartition, int, int]]] | None = None
        for tp in held[h]:
            wp = self.w[tp]
            j = next((j for j in by_load if j != h and j in self.allowed[tp.topic]), None)
            if j is None:
                continue
            after = max(load[h] - wp, load[j] + wp)
            if after < load[h] - eps and (best is None or after < best[0] - eps):
                best = (after, [(tp, h, j)])
        if best is not None:
            return best[1]
        for j in by_load[:8]:
            if j == h:
                continue
            for tp in held[h]:
                if j not in self.allowed[tp.topic]:
                    continue
                for q in held[j]:
                    d = self.w[tp] - self.w[q]
                    if d <= eps or h not in self.allowed[q.topic]:
                        continue
                    after = max(load[h] - d, load[j] + d)
                    if after < load[h] - eps and (best is None or after < best[0] - eps):
                        best = (after, [(tp, h, j), (q, j, h)])
            if best is not None:
                return best[1]
        return None

    def _feed(
        self, lo: int, held: Sequence[list[TopicPartition]], load: Sequence[float], eps: float
    ) -> list[tuple[TopicPartition, int, int]] | None:
        """A move onto the lightest member that keeps the giver at least as heavy."""
        best: tuple[float, list[tuple[TopicPartition, int, int]]] | None = None
        for src in sorted(self.takers, key=lambda i: (-load[i], i)):
            for tp in held[src]:
                wp = self.w[tp]
                if src == lo or lo not in self.allowed[tp.topic]:
                    continue
                if load[lo] + wp <= load[src] - wp + eps:
                    gain = min(load[lo] + wp, load[src] - wp)
                    if best is None or gain > best[0] + eps:
                        best = (gain, [(tp, src, lo)])
            if best is not None:
                return best[1]
        return None


def _by_topic(tps: Sequence[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out
