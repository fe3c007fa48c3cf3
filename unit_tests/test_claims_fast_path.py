"""Resolving claims member by member (the uncontested usual case) gives exactly what the
per-topic definition gives: the same claims, in the same topic order, the same counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors.core.claims import resolve_claims
from kafka_assignors.core.model import MemberSpec

COUNTS = {"a": 4, "b": 3, "c": 5}


Claims = list[list[tuple[str, list[int]]]]


def per_topic(members: Sequence[MemberSpec], subs: Sequence[frozenset[str]],
              counts: Mapping[str, int]) -> tuple[Claims, dict[str, set[int]]]:
    """Claims by the definition: topics in first-claimed order, each resolved on its own."""
    lists_of: dict[str, list[tuple[int, Sequence[int]]]] = {}
    for i, m in enumerate(members):
        for t, ps in m.owned.items():
            if t in subs[i] and ps:
                lists_of.setdefault(t, []).append((i, ps))
    owned: list[dict[str, list[int]]] = [{} for _ in members]
    claimed = {}
    for t, pairs in lists_of.items():
        slot: dict[int, tuple[int, int]] = {}
        for i, ps in pairs:
            gen = members[i].generation
            for p in ps:
                if not 0 <= p < counts[t]:
                    continue
                prev = slot.get(p)
                if prev is None or (prev[1] != i and gen > prev[0]):
                    slot[p] = (gen, i)
        distinct = set().union(*(ps for _i, ps in pairs))
        if sum(len(ps) for _i, ps in pairs) == len(distinct) and distinct <= set(range(counts[t])):
            for i, ps in pairs:
                owned[i][t] = list(ps)
        else:
            for p, (_g, i) in sorted(slot.items()):
                owned[i].setdefault(t, []).append(p)
        claimed[t] = set(slot)
    return [list(o.items()) for o in owned], claimed


partitions = st.lists(st.integers(-1, 6), max_size=4)
owned_maps = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]),
                             partitions | partitions.map(tuple), max_size=4)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(owned_maps, st.integers(0, 2), st.sets(st.sampled_from("abc"))),
                max_size=5),
       st.booleans())
def test_claims_equal_the_per_topic_definition(specs, disjoint) -> None:  # type: ignore[no-untyped-def]
    """Same claims (contents and order), same claimed partitions, whatever the members send."""
    if disjoint:  # mostly the usual case: each partition claimed once, on subscribed topics
        seen: set[tuple[str, int]] = set()
        cleaned = []
        for owned, gen, subs in specs:
            mine = {t: sorted({p for p in ps if 0 <= p < COUNTS.get(t, 0) and (t, p) not in seen})
                    for t, ps in owned.items() if t in COUNTS}
            seen.update((t, p) for t, ps in mine.items() for p in ps)
            cleaned.append((mine, gen, set(mine) | subs))
        specs = cleaned
    members = [MemberSpec(f"m{i}", frozenset(subs), owned, gen)
               for i, (owned, gen, subs) in enumerate(specs)]
    subs = [frozenset(m.topics & COUNTS.keys()) for m in members]
    got = resolve_claims(members, subs, COUNTS)
    want_owned, want_claimed = per_topic(members, subs, COUNTS)
    assert [list(o.items()) for o in got.owned] == want_owned
    assert got.claimed == want_claimed and list(got.claimed) == list(want_claimed)
