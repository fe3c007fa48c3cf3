"""The worked examples of the source documents (shared/SEEDS.md) as unit tests."""

from __future__ import annotations

from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.model import GroupSpec, MemberSpec

from . import reference as ref

T4 = ["t0", "t1", "t2", "t3"]


def member(mid: str, topics: list[str], owned: dict[str, list[int]] | None = None) -> MemberSpec:
    return MemberSpec(mid, frozenset(topics), owned or {}, generation=1 if owned else -1)


def test_sticky_fresh_assignment_matches_the_documents() -> None:
    """t0..t3 x 2 partitions over C0..C2 gives the documents' sticky layout (the same
    topics per member; partition numbers within a topic are interchangeable)."""
    group = GroupSpec.build([member(c, T4) for c in ("C0", "C1", "C2")], dict.fromkeys(T4, 2))
    documents = {
        "C0": {"t0": [0], "t1": [1], "t3": [0]},
        "C1": {"t0": [1], "t2": [0], "t3": [1]},
        "C2": {"t1": [0], "t2": [1]},
    }
    result = balanced_sticky(group)
    assert {m: {t: len(ps) for t, ps in bt.items()} for m, bt in result.items()} == {
        m: {t: len(ps) for t, ps in bt.items()} for m, bt in documents.items()
    }


def test_sticky_after_c1_leaves_moves_only_c1s_partitions() -> None:
    """When C1 leaves, C0 and C2 keep everything and split C1's three partitions 2/1."""
    c0 = member("C0", T4, {"t0": [0], "t1": [1], "t3": [0]})
    c2 = member("C2", T4, {"t1": [0], "t2": [1]})
    result = balanced_sticky(GroupSpec.build([c0, c2], dict.fromkeys(T4, 2)))
    kept0 = {(t, p) for t, ps in c0.owned.items() for p in ps}
    kept2 = {(t, p) for t, ps in c2.owned.items() for p in ps}
    got = ref.owner_map(result)
    assert all(got[tp] == "C0" for tp in kept0) and all(got[tp] == "C2" for tp in kept2)
    assert sorted(ref.loads(result).values()) == [4, 4]


def test_unequal_subscriptions_reach_the_optimum_roundrobin_misses() -> None:
    """t0(1), t1(2), t2(3); C0 on t0, C1 on t0+t1, C2 on all: the documents' sticky optimum."""
    group = GroupSpec.build(
        [member("C0", ["t0"]), member("C1", ["t0", "t1"]), member("C2", ["t0", "t1", "t2"])],
        {"t0": 1, "t1": 2, "t2": 3},
    )
    assert balanced_sticky(group) == {
        "C0": {"t0": [0]},
        "C1": {"t1": [0, 1]},
        "C2": {"t2": [0, 1, 2]},
    }


def test_range_worst_case_is_balanced_here() -> None:
    """100 topics x 100 partitions over 1,000 consumers: every consumer gets 10 (range: 100/0)."""
    topics = [f"t{i}" for i in range(100)]
    group = GroupSpec.build([member(f"c{i:04d}", topics) for i in range(1000)],
                            dict.fromkeys(topics, 100))
    assert set(ref.loads(balanced_sticky(group)).values()) == {10}
