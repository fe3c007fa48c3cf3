"""The uniform plan reads the claim lists themselves where it can (issue 41): it decides
exactly what it decides from the held counts alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors.core.balanced_sticky import _total_only_moves
from kafka_assignors.core.uniform import HeldCounts, deal_uniform, held_counts, plan_uniform

TOPICS = ["a", "b", "c", "d"]


@st.composite
def groups(draw: st.DrawFn) -> tuple[int, dict[str, int], list[dict[str, list[int]]]]:
    """Members and partition counts (often fewer partitions than members per topic), and
    what each member holds of the topics that have partitions: disjoint lists, some empty,
    some long."""
    m = draw(st.integers(1, 7))
    counts = {t: draw(st.integers(0, 2 * m)) for t in TOPICS}
    owned: list[dict[str, list[int]]] = [{} for _ in range(m)]
    for t, n in counts.items():
        for p in range(n):
            who = draw(st.integers(-1, m - 1))  # -1: nobody holds it
            if who >= 0:
                owned[who].setdefault(t, []).append(p)
    used = [t for t in TOPICS if counts[t]]
    for mine in owned:
        if draw(st.booleans()) and used:
            mine.setdefault(draw(st.sampled_from(used)), [])  # an empty list
    return m, counts, owned


@settings(max_examples=500, deadline=None)
@given(groups())
def test_plan_from_the_lists_is_the_plan_from_the_counts(group) -> None:  # type: ignore[no-untyped-def]
    """Same ceilings, proof and settled members, with or without the lists beside the counts."""
    m, counts, owned = group
    ids = list(range(m))
    topics = [t for t in TOPICS if counts[t]]
    want = plan_uniform(ids, topics, counts, held_counts(ids, owned))
    lazy = HeldCounts(owned)
    got = plan_uniform(ids, topics, counts, lazy, owned)
    assert got == want
    assert all(lazy[i] == held_counts(ids, owned)[i] for i in ids)


@st.composite
def after_a_leave(draw: st.DrawFn) -> tuple[int, dict[str, int], list[dict[str, list[int]]]]:
    """Members that mostly hold exactly the floor of every topic with at least as many
    partitions as members (in topic order), the rest left for the ceilings, as after a
    leave; sometimes a member holds more, less or other topics (any disjoint claims)."""
    m = draw(st.integers(1, 6))
    counts = {t: draw(st.integers(0, 3 * m)) for t in TOPICS}
    owned: list[dict[str, list[int]]] = [{} for _ in range(m)]
    for t, n in counts.items():
        f = n // m
        free = list(range(n))
        for i in range(m):
            if f:
                owned[i][t], free = free[:f], free[f:]
        for p in free:
            who = draw(st.integers(-1, m - 1))
            if who >= 0 and draw(st.integers(0, 3)) == 0:
                owned[who].setdefault(t, []).append(p)
    return m, counts, owned


@settings(max_examples=500, deadline=None)
@given(after_a_leave(), st.data())
def test_deal_from_the_floor_is_the_deal_from_the_counts(group, data) -> None:  # type: ignore[no-untyped-def]
    """A member holding the floors exactly (read from its lists) is dealt what the held-count
    comparison deals it: the same assignment and moves as when its topics come in another
    order (which the list check does not recognise)."""
    m, counts, owned = group
    ids = list(range(m))
    topics = [t for t in TOPICS if counts[t]]
    claimed = {t: {p for mine in owned for p in mine.get(t, ())} for t in topics}
    plan = plan_uniform(ids, topics, counts, HeldCounts(owned), owned)
    if plan.ones is None or not plan.proven:
        return
    settled = data.draw(st.sampled_from([plan.settled, frozenset()]))
    got = deal_uniform(ids, topics, counts, owned, claimed, HeldCounts(owned), plan.ones, settled)
    turned = [dict(reversed(list(mine.items()))) for mine in owned]
    want = deal_uniform(ids, topics, counts, turned, claimed, HeldCounts(turned), plan.ones,
                        settled)
    assert got == want


@settings(max_examples=500, deadline=None)
@given(st.one_of(groups(), after_a_leave()))
def test_a_deal_moves_at_least_what_total_balance_needs(group) -> None:  # type: ignore[no-untyped-def]
    """The extra moves logged are never negative: a deal that moves nothing needs no count
    of what total balance alone would move (it is 0)."""
    m, counts, owned = group
    ids = list(range(m))
    topics = [t for t in TOPICS if counts[t]]
    if not topics:
        return
    claimed = {t: {p for mine in owned for p in mine.get(t, ())} for t in topics}
    held = HeldCounts(owned)
    plan = plan_uniform(ids, topics, counts, held, owned)
    if plan.ones is None or not plan.proven:
        return
    _got, moved = deal_uniform(ids, topics, counts, owned, claimed, held, plan.ones, plan.settled)
    assert moved >= _total_only_moves(ids, topics, counts, owned, held)
