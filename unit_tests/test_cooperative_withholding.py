"""The fast cooperative withholding agrees with the per-partition definition."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors.core.cooperative import (
    _holders_by_partition,
    withhold_held,
    withhold_moving,
)

partitions = st.lists(st.integers(0, 7), max_size=6, unique=True).map(sorted)
by_topic = st.dictionaries(st.sampled_from(["a", "b"]), partitions, max_size=2)
members = st.sampled_from(["m0", "m1", "m2", "m3"])


def _once_each(target: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, list[int]]]:
    """The target with each partition kept by its first member only (as a valid one gives)."""
    given: set[tuple[str, int]] = set()
    out = {}
    for m, bt in target.items():
        out[m] = {t: [p for p in ps if (t, p) not in given] for t, ps in bt.items()}
        given.update((t, p) for t, ps in bt.items() for p in ps)
    return out


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(members, by_topic, min_size=1).map(_once_each),
    st.dictionaries(members, st.tuples(st.integers(-1, 2), by_topic)),
    st.booleans(),
)
def test_fast_path_equals_the_definition(target, holding, one_generation) -> None:  # type: ignore[no-untyped-def]
    """Same first-round assignment and pending count as checking every partition's holders."""
    if one_generation:
        holding = {m: (1, parts) for m, (_g, parts) in holding.items()}
    fast, fast_pending = withhold_held(target, holding)
    slow, slow_pending = withhold_moving(target, _holders_by_partition(holding))
    assert fast_pending == slow_pending
    assert _nonempty(fast) == _nonempty(slow)


def _nonempty(a: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, list[int]]]:
    return {m: {t: ps for t, ps in bt.items() if ps} for m, bt in a.items()}


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(members, by_topic, min_size=1).map(_once_each), st.data())
def test_holders_that_keep_everything_and_gain_hold_nothing_back(target, data) -> None:  # type: ignore[no-untyped-def]
    """Holdings near the target (the same, a part of it, nothing, or more: some given to
    others) give what checking every partition's holders gives."""
    holding = {}
    for m, bt in target.items():
        kind = data.draw(st.sampled_from(["same", "fewer", "none", "more"]))
        if kind == "none":
            continue
        if kind == "same":
            held = {t: list(ps) for t, ps in bt.items()}
        elif kind == "fewer":
            held = {t: [p for p in ps if data.draw(st.booleans())] for t, ps in bt.items()}
        else:
            held = {t: sorted(set(bt.get(t, [])) | set(data.draw(partitions))) for t in ("a", "b")}
        holding[m] = (1, held)
    fast, fast_pending = withhold_held(target, holding)
    slow, slow_pending = withhold_moving(target, _holders_by_partition(holding))
    assert fast_pending == slow_pending
    assert _nonempty(fast) == _nonempty(slow)
