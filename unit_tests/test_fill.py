"""The shared sticky fill: optimal balance on top of fixed loads, owners kept where possible."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors.core.fill import sticky_fill

Item = tuple[str, int]
Case = tuple[int, list[tuple[str, Item]], dict[str, list[int]], dict[Item, int], list[int]]


@st.composite
def fills(draw: st.DrawFn) -> Case:
    n = draw(st.integers(1, 6))
    classes = draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True))
    eligible = {c: sorted(draw(st.sets(st.integers(0, n - 1), min_size=1))) for c in classes}
    items = [(c, (c, p)) for c in classes for p in range(draw(st.integers(0, 7)))]
    owner = {item: draw(st.integers(0, n - 1)) for _c, item in items if draw(st.booleans())}
    fixed = [draw(st.integers(0, 4)) for _ in range(n)]
    return n, items, eligible, owner, fixed


def improving_chain(result: list[list[Item]], fixed: list[int],
                    eligible: dict[str, list[int]]) -> bool:
    """Whether items can be passed along a chain from a member with k+2 to one with k."""
    load = [f + len(r) for f, r in zip(fixed, result, strict=True)]
    for start in range(len(load)):
        seen = {start}
        queue = deque([start])
        while queue:
            u = queue.popleft()
            if load[u] <= load[start] - 2:
                return True
            for c in {c for c, _p in result[u]}:
                for v in eligible[c]:
                    if v not in seen:
                        seen.add(v)
                        queue.append(v)
    return False


@settings(max_examples=400, deadline=None)
@given(fills())
def test_every_item_once_to_an_eligible_member_optimally_balanced(case: Case) -> None:
    """All items placed once, only on eligible members, and no improving chain remains."""
    n, items, eligible, owner, fixed = case
    result = sticky_fill(n, items, eligible, owner, fixed)
    placed = sorted(i for r in result for i in r)
    assert placed == sorted(i for _c, i in items)
    for m, r in enumerate(result):
        assert all(m in eligible[c] for c, _p in r)
    assert not improving_chain(result, fixed, eligible)


@settings(max_examples=300, deadline=None)
@given(fills())
def test_result_fed_back_as_owners_is_kept(case: Case) -> None:
    """Running again with the result as the owners changes nothing."""
    n, items, eligible, owner, fixed = case
    first = sticky_fill(n, items, eligible, owner, fixed)
    again = sticky_fill(n, items, eligible, {i: m for m, r in enumerate(first) for i in r}, fixed)
    assert again == first


def test_owners_keep_what_balance_allows() -> None:
    """A joiner takes only the surplus; owners keep the rest."""
    items = [("t", ("t", p)) for p in range(9)]
    owner = {("t", p): p % 2 for p in range(9)}
    result = sticky_fill(3, items, {"t": [0, 1, 2]}, owner)
    assert [len(r) for r in result] == [3, 3, 3]
    kept = sum(1 for m in (0, 1) for i in result[m] if owner[i] == m)
    assert kept == 6


def test_fixed_load_counts_towards_balance() -> None:
    """A member that already carries 4 gets nothing until the others catch up."""
    items = [("t", ("t", p)) for p in range(6)]
    result = sticky_fill(2, items, {"t": [0, 1]}, {}, fixed=[4, 0])
    assert [len(r) for r in result] == [1, 5]
