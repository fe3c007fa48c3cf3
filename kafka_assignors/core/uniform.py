"""Balanced sticky assignment for members that all subscribe to the same topics.

With ``M`` members, ``N`` partitions in all and ``P_t`` partitions of topic ``t``:

(a) every member holds ``floor(N/M)`` or ``ceil(N/M)`` partitions in all;
(b) every member holds ``floor(P_t/M)`` or ``ceil(P_t/M)`` partitions of every topic;
(c) among the assignments with (a) and (b), the most owned partitions stay put.

(a) and (b) always hold together: the counts are ``x[m][t] = f_t + y[m][t]`` with
``f_t = P_t // M`` and ``y`` a 0/1 matrix whose column ``t`` has ``r_t = P_t % M``
ones and whose rows have ``k`` or ``k + 1`` ones, exactly ``e`` of them ``k + 1``,
where ``sum(r_t) = k*M + e``.  Such a matrix always exists (deal the ones of
each column to the rows with the most room left: the Gale-Ryser construction).

A member keeps ``min(x[m][t], owned[m][t])`` partitions of a topic, so a one in
cell ``(m, t)`` keeps one more exactly when the member owns more than ``f_t`` of
``t`` (a *wanted* cell); (c) asks for a ``y`` with as many wanted cells as
possible.  :func:`plan_uniform` takes wanted cells row by row, then completes
the matrix; when the wanted cells taken reach a simple upper bound (per row:
at most ``k``, or ``k + 1`` for ``e`` rows; per column: at most ``r_t``), the
plan is provably optimal.  Otherwise the caller finishes with the exact search
of :mod:`.unequal`, which treats this part as a special case.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import NamedTuple

from .claims import Kind

#: member index -> topic -> partitions
IndexedAssignment = dict[int, dict[str, list[int]]]
#: topic -> members that get the ceiling of that topic (the ones of ``y``)
Ceilings = dict[str, set[int]]


class Plan(NamedTuple):
    """What :func:`plan_uniform` decided."""

    #: None if the completion got stuck (never expected; then nothing is known)
    ones: Ceilings | None
    #: the plan provably keeps the most owned partitions
    proven: bool
    #: members whose counts are exactly what they own (their lists stay as they are)
    settled: frozenset[int] = frozenset()


def held_counts(
    member_ids: Sequence[int], owned: Sequence[Mapping[str, Sequence[int]]]
) -> dict[int, dict[str, int]]:
    """member -> topic -> how many partitions of it the member owns (0 where it lists none)."""
    # (one dict's keys and values: equally long, no need for zip's check)
    return {i: dict(zip(owned[i], map(len, owned[i].values()), strict=False)) for i in member_ids}


class HeldCounts(dict[int, dict[str, int]]):
    """:func:`held_counts` of every member, each worked out when first read."""

    def __init__(self, owned: Sequence[Mapping[str, Sequence[int]]]) -> None:
        super().__init__()
        self.owned = owned

    def __missing__(self, i: int) -> dict[str, int]:
        mine = self.owned[i]
        counts = self[i] = dict(zip(mine, map(len, mine.values()), strict=False))
        return counts


def plan_uniform(
    member_ids: Sequence[int],
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    held: Mapping[int, Mapping[str, int]],
    owned: Sequence[Mapping[str, Sequence[int]]] | None = None,
    kinds: Sequence[Kind] | None = None,
) -> Plan:
    """Choose which members get the ceiling of each topic; see the module docstring.

    ``held`` comes from :func:`held_counts` (or is a :class:`HeldCounts`); ``owned``, the
    partitions behind it, lets the usual cases read the lists without the counts.
    ``kinds`` (:attr:`.claims.Claims.kinds` of ``owned``) lets them be read once per kind.
    """
    m_count = len(member_ids)
    floor = {t: partition_counts[t] // m_count for t in topics}
    rem = {t: partition_counts[t] % m_count for t in topics if partition_counts[t] % m_count}
    ones: Ceilings = {t: set() for t in rem}
    k, e = divmod(sum(rem.values()), m_count)

    wants: dict[int, list[str]] = {}
    exact: set[int] = set()  # members owning the floor or, where they want it, one more
    at_floor = floor.items()
    floor_topics = {t for t, f in at_floor if f}
    rem_topics = rem.keys()
    # the floor as a member's lists hold it when they name its topics in its order
    floor_order = list(floor)
    floor_counts = list(floor.values())
    # wants of whole kinds of members, each kind's read once (with its members, alike below)
    kind_alike: dict[tuple[str, ...], list[int]] = {}
    kind_wants: dict[int, list[str]] = {}
    rest: Sequence[int] | set[int] = member_ids
    if kinds and owned is not None:
        rest = set(member_ids)
        all_ones = floor_counts.count(1) == len(floor_counts)
        for topics_k, kind, singles in kinds:
            if kind[0] not in rest:
                continue  # (another part's: a kind's members share one subscription)
            if not floor_topics:
                # what the first branch below works out for each member of the kind (its
                # lists are never empty)
                if not rem_topics >= set(topics_k):
                    continue
                w = list(topics_k)  # (one list for the kind: nothing changes a want)
                kind_wants.update(dict.fromkeys(kind, w))
                # (kinds may share their topics in claim order: one claimed them in another)
                kind_alike.setdefault(topics_k, []).extend(kind)
                if singles:
                    exact.update(kind)
                else:  # (some member claims more than one partition of a topic)
                    exact.update(i for i in kind
                                 if sum(map(len, owned[i].values())) == len(topics_k))
            elif singles and all_ones and list(topics_k) == floor_order:
                exact.update(kind)  # the floor of every topic, as below
            else:
                continue
            rest.difference_update(kind)
        if rest:
            rest = [i for i in member_ids if i in rest]  # (in their order)
    for i in rest:
        if not floor_topics:
            # fewer partitions than members in every topic: a held cell is wanted where
            # the topic has a ceiling here (a class's share of a topic may be 0)
            if owned is not None:
                mine = owned[i]
                if mine.keys() <= rem_topics and all(mine.values()):
                    # the usual case, checked in C: every held cell (a non-empty list) is
                    # wanted
                    w = list(mine)
                    if w:
                        wants[i] = w
                    if sum(map(len, mine.values())) == len(w):  # (all ones)
                        exact.add(i)
                    continue
            held_i = held[i]
            if held_i.keys() <= rem_topics and 0 not in held_i.values():
                # the usual case, checked in C: every held cell is wanted
                w = list(held_i)
                if w:
                    wants[i] = w
                if sum(held_i.values()) == len(w):  # (all ones)
                    exact.add(i)
                continue
            w = [t for t, c in held_i.items() if c and t in rem]
            if w:
                wants[i] = w
            if all(c == 0 or (c == 1 and t in rem) for t, c in held_i.items()):
                exact.add(i)
            continue
        if owned is not None:
            mine = owned[i]
            if (len(mine) == len(floor_order) and list(map(len, mine.values())) == floor_counts
                    and list(mine) == floor_order):
                # the floor of every topic (after a leave, say), read from the lists in C:
                # its held counts are not worked out (that is, made) at all
                exact.add(i)
                continue
        held_i = held[i]
        if held_i == floor:
            exact.add(i)  # the floor of every topic (after a leave, say): compared in C
            continue
        # set difference of (topic, count) pairs: only the cells off the floor, in C
        off = held_i.items() - at_floor
        if not off:
            if floor_topics <= held_i.keys():
                exact.add(i)
            continue
        w = [t for t, c in off if c == floor[t] + 1 and t in rem]
        if len(w) == len(off):
            if floor_topics <= held_i.keys():
                exact.add(i)
        else:  # some cell is further off: every cell above the floor is wanted
            w = [t for t, c in off if c > floor[t] and t in rem]
        if w:
            wants[i] = w
    rest_wants = wants
    if kind_wants:
        wants = kind_wants | wants
    if not rem:
        return Plan(ones, True, frozenset(exact))
    left = dict(rem)
    deg = dict.fromkeys(member_ids, 0)
    hub = e  # rows that may still take k + 1
    bound = 0  # the most wanted cells any plan can take
    taken = 0
    took_all: set[int] = set()  # rows given every column they want
    if wants:
        # rows wanting the same columns (after a leave, the members that got the same
        # topics) are counted and, in the usual case below, given them together
        alike = kind_alike  # (the members read by kind, grouped already; the rest here)
        for i, w in rest_wants.items():
            key = tuple(w)
            same = alike.get(key)
            if same is None:
                alike[key] = [i]
            else:
                same.append(i)
        if len(alike) * 4 <= len(wants):
            contest: Counter[str] = Counter()
            for key, same in alike.items():  # (topics first counted in the same order)
                n = len(same)
                for t in key:
                    contest[t] += n
        else:
            contest = Counter(chain.from_iterable(wants.values()))
        col_bound = sum(min(rem[t], c) for t, c in contest.items())
        lengths = list(map(len, wants.values()))
        short = max(lengths) <= k  # (no row wants more than k: the sums below in C)
        if short:
            row_bound = sum(lengths)
        else:
            row_bound = sum(min(n, k) for n in lengths) + min(e, sum(n > k for n in lengths))
        bound = min(row_bound, col_bound)
        if bound == row_bound == col_bound and short:
            # the usual case (after a leave, say): every row takes every column it wants
            for key, same in alike.items():
                for t in key:
                    ones[t].update(same)
            deg.update(zip(wants, lengths, strict=True))
            for t, c in contest.items():
                left[t] -= c
            taken = bound
            took_all.update(wants)
            wants_left: dict[int, list[str]] = {}
        else:
            wants_left = wants
        # rows wanting more than k first (they can use the e larger rows); a row that
        # must leave some wanted columns leaves those left least often so far (each
        # left column needs another row with room), then the most contested
        dropped = dict.fromkeys(contest, 0)
        for i in sorted(wants_left, key=lambda i: (-min(len(wants[i]), k + 1), i)):
            w = wants[i]
            cap = k + 1 if hub and len(w) > k else k
            if len(w) <= cap and all(left[t] for t in w):
                # the usual case: the row takes every column it wants
                for t in w:
                    left[t] -= 1
                    ones[t].add(i)
                deg[i] = len(w)
                taken += len(w)
                took_all.add(i)
                if len(w) > k:
                    hub -= 1
                continue
            got = 0
            for t in sorted(w, key=lambda t: (-dropped[t], contest[t] - rem[t], t)):
                if got < cap and left[t]:
                    left[t] -= 1
                    ones[t].add(i)
                    got += 1
                else:
                    dropped[t] += 1
            if got > k:
                hub -= 1
            deg[i] = got
            taken += got
            if got == len(w):
                took_all.add(i)

    if not wants:
        _deal_cyclic(member_ids, rem, ones)
        # the rows dealt a ceiling hold more than they own now
        return Plan(ones, True, frozenset(exact.difference(*ones.values())))
    done = _Completion(member_ids, k, hub, deg, ones, wants)
    for t in sorted(left, key=lambda t: (-left[t], t)):
        if not done.fill(t, left[t]):
            return Plan(None, False)
    if done.cols_of is not None:
        # a repair may have traded wanted cells: count what the plan keeps
        taken = sum(1 for i, w in wants.items() for t in w if i in ones[t])
    # exact members that got just the columns they want keep their lists
    untouched = exact - done.touched
    settled = frozenset(untouched & took_all).union(untouched.difference(wants))  # (in C)
    return Plan(ones, taken == bound, settled)


def _deal_cyclic(member_ids: Sequence[int], rem: Mapping[str, int], ones: Ceilings) -> None:
    """No row holds a one yet: column after column, the next ``r_t`` rows in a circle.

    Each column has at most ``M - 1`` ones, so it never meets a row twice, and the rows
    end with ``k`` or ``k + 1`` ones, the ``k + 1`` on the ``e`` rows first reached.
    """
    rows = list(member_ids)
    m_count = len(rows)
    pos = 0
    for t in sorted(rem, key=lambda t: (-rem[t], t)):
        r = rem[t]
        end = pos + r
        if end <= m_count:
            ones[t] = set(rows[pos:end])
        else:
            ones[t] = set(rows[pos:]) | set(rows[: end - m_count])
        pos = end % m_count


class _Completion:
    """Deals the remaining ones of each column; repairs with augmenting paths when stuck.

    A row has room ``k - deg`` while below ``k``; at ``k`` it may take one more while
    fewer than ``e`` rows hold ``k + 1`` (``hub`` counts what is left of those).
    """

    def __init__(
        self,
        member_ids: Sequence[int],
        k: int,
        hub: int,
        deg: dict[int, int],
        ones: Ceilings,
        wants: Mapping[int, Sequence[str]],
    ) -> None:
        self.members = member_ids
        self.k, self.hub, self.deg, self.ones = k, hub, deg, ones
        self.wants = wants
        self.wanted: set[tuple[int, str]] | None = None  # built on the first repair
        # levels[r]: rows with room r = k - deg (level 0: rows at k, which need the hub);
        # entries go stale when a row's degree changes and are skipped then
        self.levels: list[deque[int]] = [deque() for _ in range(k + 1)]
        for i in sorted(member_ids, key=deg.__getitem__):  # stable: by degree, then index
            if deg[i] <= k:
                self.levels[k - deg[i]].append(i)
        self.cols_of: dict[int, set[str]] | None = None  # built on the first repair
        self.touched: set[int] = set()  # rows given or relieved of a one here

    def fill(self, t: str, need: int) -> bool:
        """Give column ``t`` ``need`` more ones, rows with the most room first."""
        k, deg, col = self.k, self.deg, self.ones[t]
        chosen: dict[int, None] = {}  # ordered; a row may sit twice in a level
        hub = self.hub
        for lvl in range(k, -1, -1):
            q = self.levels[lvl]
            skipped = []
            while need and q and (lvl or hub):
                i = q.popleft()
                if deg[i] != k - lvl:
                    continue  # stale
                if i in chosen:
                    continue
                if i in col:
                    skipped.append(i)
                    continue
                chosen[i] = None
                need -= 1
                if not lvl:
                    hub -= 1
            q.extendleft(reversed(skipped))
            if not need:
                break
        for i in chosen:
            self._add(i, t)
        return all(self._augment(t) for _ in range(need))

    def _add(self, i: int, t: str) -> None:
        self.touched.add(i)
        self.ones[t].add(i)
        if self.cols_of is not None:
            self.cols_of.setdefault(i, set()).add(t)
        self.deg[i] += 1
        if self.deg[i] > self.k:
            self.hub -= 1
        else:
            self.levels[self.k - self.deg[i]].append(i)

    def _remove(self, i: int, t: str) -> None:
        self.touched.add(i)
        self.ones[t].discard(i)
        assert self.cols_of is not None
        self.cols_of[i].discard(t)
        if self.deg[i] > self.k:
            self.hub += 1
        self.deg[i] -= 1
        self.levels[self.k - self.deg[i]].append(i)

    def _augment(self, t: str) -> bool:
        """One more one in column ``t`` along a shortest path: ``t`` to a full row, which
        passes one of its columns on to another row, ... until a row with room.  Cost: the
        wanted cells given up (0-1 breadth-first search).  Such a path always exists
        while a completion does (flow augmentation), which is always."""
        if self.wanted is None:
            self.wanted = {(i, t) for i, w in self.wants.items() for t in w}
        wanted = self.wanted
        if self.cols_of is None:
            self.cols_of = {}
            for c, rows in self.ones.items():
                for i in rows:
                    self.cols_of.setdefault(i, set()).add(c)
        cols_of = self.cols_of
        dist_c: dict[str, int] = {t: 0}
        dist_r: dict[int, int] = {}
        took: dict[int, str] = {}  # row -> column it takes
        gave: dict[str, int] = {}  # column -> row that gives it up
        queue: deque[tuple[int, str | int]] = deque([(0, t)])
        while queue:
            d, node = queue.popleft()
            if isinstance(node, str):
                if d > dist_c[node]:
                    continue
                col = self.ones[node]
                for i in self.members:
                    if i not in col and d < dist_r.get(i, d + 1):
                        dist_r[i] = d
                        took[i] = node
                        queue.appendleft((d, i))
                continue
            if d > dist_r[node]:
                continue
            if self.deg[node] < self.k or (self.deg[node] == self.k and self.hub > 0):
                row: int | None = node
                while row is not None:
                    c = took[row]
                    self._add(row, c)
                    giver = gave.get(c) if c != t else None
                    if giver is not None:
                        self._remove(giver, c)
                    row = giver
                return True
            for c in sorted(cols_of.get(node, ())):
                nd = d + ((node, c) in wanted)
                if c != t and nd < dist_c.get(c, nd + 1):
                    dist_c[c] = nd
                    gave[c] = node
                    (queue.append if nd > d else queue.appendleft)((nd, c))
        return False


def plan_counts(
    member_ids: Sequence[int],
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    ones: Ceilings,
) -> dict[int, dict[str, int]]:
    """The plan as counts ``member -> topic -> how many`` (zeros left out)."""
    m_count = len(member_ids)
    floors = {t: partition_counts[t] // m_count for t in topics if partition_counts[t] >= m_count}
    x = {i: floors.copy() for i in member_ids}
    for t, rows in ones.items():
        f = floors.get(t, 0)
        for i in rows:
            x[i][t] = f + 1
    return x


def deal_uniform(
    member_ids: Sequence[int],
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    owned: Sequence[Mapping[str, list[int]]],
    claimed: Mapping[str, set[int]],
    held: Mapping[int, Mapping[str, int]],
    ones: Ceilings,
    settled: frozenset[int] = frozenset(),
) -> tuple[IndexedAssignment, int]:
    """Partitions for the plan: owners keep their lowest-numbered own first.

    Returns the assignment and how many owned partitions changed owner.
    """
    m_count = len(member_ids)
    if not any(claimed.get(t) for t in topics):
        return _deal_fresh(member_ids, topics, partition_counts, ones), 0
    floors = {t: partition_counts[t] // m_count for t in topics if partition_counts[t] >= m_count}
    ceilings_of: dict[int, list[str]] = {}
    for t, rows in ones.items():
        for i in rows - settled if settled else rows:
            ceilings_of.setdefault(i, []).append(t)
    result: IndexedAssignment = {}
    freed: dict[str, list[int]] = {}
    short: dict[str, list[tuple[int, int]]] = {}
    moved = 0
    # the floors as a member's lists hold them when they name the topics in this order
    floor_order = list(floors)
    floor_counts = list(floors.values())
    for i in member_ids:
        mine = owned[i]
        if i in settled:
            # its counts are what it owns: its claims as they are (read only, like the
            # lists every member keeps)
            result[i] = mine if mine.__class__ is dict else dict(mine)
            continue
        res = dict(mine)
        result[i] = res
        if (len(mine) == len(floor_order) and list(map(len, mine.values())) == floor_counts
                and list(mine) == floor_order):
            # it holds the floors (after a leave, say), read from its lists in C: it is
            # one short in each of its ceilings and nothing else changes
            for t in ceilings_of.get(i, ()):
                short.setdefault(t, []).append((i, 1))
            continue
        target = floors.copy()
        for t in ceilings_of.get(i, ()):
            target[t] = target.get(t, 0) + 1
        off = held[i].items() ^ target.items()
        if not off:
            continue  # keeps exactly what it owns (the usual case after a leave)
        for t in {t for t, _c in off}:
            want = target.get(t, 0)
            ps = mine.get(t)
            h = len(ps) if ps else 0
            if h > want:
                assert ps is not None
                srt = sorted(ps)
                if want:
                    res[t] = srt[:want]
                else:
                    del res[t]
                freed.setdefault(t, []).extend(srt[want:])
                moved += h - want
            elif h < want:
                short.setdefault(t, []).append((i, want - h))
    for t, needs in short.items():
        taken = claimed.get(t, set())
        pool = freed.get(t, [])
        n = partition_counts[t]
        unclaimed = n - len(taken)  # (claims name existing partitions only: resolve_claims)
        if unclaimed == 1:
            # the usual case after a leave, one partition of a topic with many: the one
            # number missing from 0..n-1, without a set of all n
            pool.append(n * (n - 1) // 2 - sum(taken))
        elif unclaimed:
            free = set(range(n))
            free.difference_update(taken)  # in C: a topic may have many partitions
            pool.extend(free)
        pool.sort()
        pos = 0
        for i, c in needs:
            got = result[i].get(t)
            more = pool[pos : pos + c]
            pos += c
            result[i][t] = sorted(got + more) if got else more
    return result, moved


def _deal_fresh(
    member_ids: Sequence[int],
    topics: Sequence[str],
    partition_counts: Mapping[str, int],
    ones: Ceilings,
) -> IndexedAssignment:
    """Nobody owns anything: consecutive blocks per topic, members in order."""
    m_count = len(member_ids)
    result: IndexedAssignment = {i: {} for i in member_ids}
    for t in topics:
        f = partition_counts[t] // m_count
        plus = ones.get(t)
        pos = 0
        if not f:  # fewer partitions than members: only the ceilings get one
            for i in sorted(plus or ()):
                result[i][t] = [pos]
                pos += 1
            continue
        for i in member_ids:
            c = f + 1 if plus and i in plus else f
            result[i][t] = list(range(pos, pos + c))
            pos += c
    return result
