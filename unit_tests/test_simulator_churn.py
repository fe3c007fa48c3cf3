"""Churn strings and scenario grids become explicit, reproducible scenarios."""

from __future__ import annotations

import pytest

from kafka_assignors.load.profile import LoadProfile, PartitionLoad
from kafka_assignors.simulator import (
    ChurnError,
    GridError,
    SimMember,
    expand_events,
    expand_grid,
    run_scenario,
)
from kafka_assignors.simulator.grid import make_weights, subscribe


def new(i: int) -> SimMember:
    return SimMember(f"c{i}", ("t",))


START = tuple(new(i) for i in range(3))


def test_each_string_is_one_rebalance_with_explicit_members() -> None:
    """join/scale-out make new members, leave/scale-in/crash name who goes, partitions grow."""
    events = expand_events(
        [
            "join",
            "scale-out 2",
            "leave c0",
            "crash",
            "scale-in 2",
            "add-partitions t +3",
            "add-partitions 20",
            "rebalance",
        ],
        START,
        {"t": 6},
        new,
        seed=1,
    )
    kinds = [e.kind for e in events]
    assert kinds == [
        "join",
        "scale-out",
        "leave",
        "crash",
        "scale-in",
        "add-partitions",
        "add-partitions",
        "rebalance",
    ]
    assert [m.member_id for m in events[0].joins] == ["c3"]
    assert [m.member_id for m in events[1].joins] == ["c4", "c5"]
    assert events[2].leaves == ("c0",)
    assert len(events[3].leaves) == 1 and len(events[4].leaves) == 2
    assert events[5].partitions == {"t": 9} and events[6].partitions == {"t": 20}


def test_same_seed_same_sequence_and_random_never_empties_the_group() -> None:
    """`random N` is reproducible and keeps at least one member."""
    one = (new(0),)
    a = expand_events(["random 40"], one, {"t": 2}, new, seed=7)
    b = expand_events(["random 40"], one, {"t": 2}, new, seed=7)
    assert a == b and len(a) == 40
    size = 1
    for e in a:
        size += len(e.joins) - len(e.leaves)
        assert size >= 1


@pytest.mark.parametrize(
    "spec, message",
    [
        ("leave nobody", "no member"),
        ("scale-in 3", "only 3"),
        ("add-partitions t 2", "cannot shrink"),
        ("add-partitions u +1", "no topic"),
        ("scale-out x", "not a number"),
        ("explode", "unknown churn event"),
    ],
)
def test_bad_churn_is_refused_with_the_reason(spec: str, message: str) -> None:
    """Errors name the event and what is wrong."""
    with pytest.raises(ChurnError, match=message):
        expand_events([spec], START, {"t": 6}, new)


def test_subscription_patterns() -> None:
    """all, unequal (the source's example), halves."""
    topics = ["t0", "t1", "t2"]
    assert subscribe("all", 5, topics) == ("t0", "t1", "t2")
    assert [subscribe("unequal", i, topics) for i in range(3)] == [
        ("t0",),
        ("t0", "t1"),
        ("t0", "t1", "t2"),
    ]
    assert subscribe("halves", 1, topics) == ("t0",) and subscribe("halves", 2, topics) == (
        "t0",
        "t1",
        "t2",
    )


@pytest.mark.parametrize("spec", ["zipf:1.2", "hot:0.5", "lognormal:1"])
def test_weights_have_mean_one(spec: str) -> None:
    """Generated weights are relative: their mean is 1, so load imbalance reads directly."""
    w = make_weights(spec, {"a": 10, "b": 6}, seed=3)
    assert w is not None and len(w) == 16
    assert sum(w.values()) / 16 == pytest.approx(1.0)
    assert make_weights("uniform", {"a": 2}, 0) is None
    with pytest.raises(GridError):
        make_weights("pareto:2", {"a": 2}, 0)


def test_grid_is_the_product_of_its_axes() -> None:
    """2 clusters x 2 sizes x 2 patterns x 2 churns = 16 scenarios, tagged with coordinates."""
    grid = {
        "clusters": [
            {"name": "a", "topics": {"x": 4, "y": 4}},
            {"name": "b", "topic_count": 3, "partitions": 5},
        ],
        "consumers": [2, 3],
        "subscriptions": ["all", "halves"],
        "racks": [3],
        "churn": {"steady": ["rebalance"], "growth": ["scale-out 2", "add-partitions +1"]},
    }
    scenarios = expand_grid(grid)
    assert len(scenarios) == 16
    assert len({s.name for s in scenarios}) == 16
    first = scenarios[0]
    assert first.tags["cluster"] == "a" and first.tags["racks"] == "3"
    assert all(m.rack is not None for m in first.members)
    b = next(s for s in scenarios if s.tags["cluster"] == "b")
    assert sorted(b.topics) == ["t0", "t1", "t2"]
    assert sum(s.steps for s in scenarios) == 8 * 2 + 8 * 3


def test_measured_cluster_takes_counts_and_weights_from_a_profile(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A profile cluster replaces the weights axis with the measured weights."""
    path = tmp_path / "p.json"
    LoadProfile(
        tuple(PartitionLoad("orders", p, float(p + 1)) for p in range(4)), "bytes_per_s"
    ).write(path)
    scenarios = expand_grid(
        {
            "clusters": [{"name": "m", "profile": str(path)}],
            "weights": ["uniform", "zipf:1"],
            "churn": {"s": ["rebalance"]},
        }
    )
    assert len(scenarios) == 1
    (s,) = scenarios
    assert s.topics == {"orders": 4} and s.tags["weights"] == "measured"
    steps = run_scenario(s, "range")
    assert steps[0].load_imbalance is not None and steps[0].load_imbalance > 1


def test_bad_grids_are_refused() -> None:
    """Unknown keys, patterns and empty axes are errors, not silent defaults."""
    with pytest.raises(GridError, match="unknown grid keys"):
        expand_grid({"clusters": [{"topics": {"t": 1}}], "consumer": [3]})
    with pytest.raises(GridError, match="subscription"):
        expand_grid({"clusters": [{"topics": {"t": 1}}], "subscriptions": ["some"]})
    with pytest.raises(GridError, match="clusters"):
        expand_grid({"consumers": [3]})
    with pytest.raises(GridError, match="churn"):
        expand_grid(
            {"clusters": [{"topics": {"t": 1}}], "consumers": [1], "churn": {"x": ["leave"]}}
        )
