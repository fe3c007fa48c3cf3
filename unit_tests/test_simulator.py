"""The simulator: real assignors run as a kafka-python leader would, with hand-checked figures."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_assignors import GroupSpec, KafkaPythonAssignor, TopicPartition, make_assignor
from kafka_assignors.simulator import (
    Event,
    Scenario,
    SimMember,
    UnknownAssignorError,
    assignor_names,
    resolve_assignor,
    run_scenario,
    simulate,
)
from kafka_assignors.simulator.metrics import copartition_violations

ALL4 = ("t0", "t1", "t2", "t3")


def members(n: int, topics: tuple[str, ...], racks: tuple[str, ...] = ()) -> tuple[SimMember, ...]:
    return tuple(
        SimMember(f"C{i}", topics, rack=racks[i % len(racks)] if racks else None) for i in range(n)
    )


def sticky_example(*events: Event) -> Scenario:
    return Scenario("seed", {t: 2 for t in ALL4}, members(3, ALL4), events=events)


def test_every_known_name_resolves_and_kafka_python_builtins_are_there() -> None:
    """Wire names cover ours and kafka-python's four built-ins."""
    names = assignor_names()
    assert {"range", "roundrobin", "sticky", "cooperative-sticky", "balanced-sticky"} <= set(names)
    for name in names:
        assert resolve_assignor(name).name == name


def test_import_path_and_unknown_names() -> None:
    """`module:Class` resolves; an unknown name says what is known."""
    cls = resolve_assignor("kafka_assignors:BalancedStickyAssignor")
    assert cls.name == "balanced-sticky"
    with pytest.raises(UnknownAssignorError, match="balanced-sticky"):
        resolve_assignor("no-such-assignor")
    with pytest.raises(UnknownAssignorError):
        resolve_assignor("kafka_assignors:NoSuchThing")


def test_when_a_member_leaves_sticky_moves_only_its_partitions_and_roundrobin_reshuffles() -> None:
    """The source's example: C1 leaves; sticky moves C1's 3 partitions, roundrobin more."""
    scenario = sticky_example(Event("leave", leaves=("C1",)))
    rr = run_scenario(scenario, "roundrobin", keep_assignments=True)
    assert rr[1].assignment == {
        "C0": {"t0": [0], "t1": [0], "t2": [0], "t3": [0]},
        "C2": {"t0": [1], "t1": [1], "t2": [1], "t3": [1]},
    }
    assert rr[1].moved is not None and rr[1].moved > 3 and rr[1].moved_from_stayers
    for name in ("sticky", "balanced-sticky"):
        steps = run_scenario(scenario, name)
        assert steps[1].moved == 3 and steps[1].moved_from_stayers == 0, name
        assert steps[1].count_imbalance == 0


def test_a_failing_assignor_is_recorded_and_the_simulation_goes_on() -> None:
    """kafka-python 3.0.12's roundrobin raises on unequal subscriptions: an error row, no crash."""
    ms = (
        SimMember("C0", ("t0",)),
        SimMember("C1", ("t0", "t1")),
        SimMember("C2", ("t0", "t1", "t2")),
    )
    scenario = Scenario(
        "unequal",
        {"t0": 1, "t1": 2, "t2": 3},
        ms,
        events=(Event("join", joins=(SimMember("C3", ("t0",)),)),),
    )
    steps = run_scenario(scenario, "roundrobin")
    assert len(steps) == 2
    assert all(s.error and "KeyError" in s.error for s in steps)
    assert steps[0].count_imbalance is None
    ok = run_scenario(scenario, "sticky", keep_assignments=True)
    assert ok[0].error is None
    assert ok[0].assignment == {"C0": {"t0": [0]}, "C1": {"t1": [0, 1]}, "C2": {"t2": [0, 1, 2]}}


def test_cooperative_assignors_take_two_rounds_when_partitions_move() -> None:
    """A join under a cooperative assignor revokes first and assigns in a second round."""
    scenario = Scenario(
        "coop",
        {"t": 6},
        members(2, ("t",)),
        events=(Event("join", joins=(SimMember("C2", ("t",)),)), Event("rebalance")),
    )
    for name in ("cooperative-sticky", "cooperative-balanced-sticky"):
        steps = run_scenario(scenario, name, keep_assignments=True)
        assert [s.rounds for s in steps] == [1, 2, 1], name
        assert steps[1].moved == 2 and steps[1].count_imbalance == 0
        assert steps[1].unassigned == 0 and steps[1].duplicated == 0
        assert steps[2].moved == 0
    assert [s.rounds for s in run_scenario(scenario, "balanced-sticky")] == [1, 1, 1]


def test_counts_and_load_imbalance_by_hand() -> None:
    """range on 10 partitions, 3 consumers: 4/3/3; weights p+1 give loads 10, 18, 27."""
    weights = {TopicPartition("t", p): float(p + 1) for p in range(10)}
    scenario = Scenario("range", {"t": 10}, members(3, ("t",)), weights=weights)
    (step,) = run_scenario(scenario, "range", keep_assignments=True)
    assert step.assignment == {
        "C0": {"t": [0, 1, 2, 3]},
        "C1": {"t": [4, 5, 6]},
        "C2": {"t": [7, 8, 9]},
    }
    assert step.count_imbalance == 1
    assert step.loads == {"C0": 10.0, "C1": 18.0, "C2": 27.0}
    assert step.load_imbalance == pytest.approx(27 / (55 / 3))
    assert step.idle_members == 0 and step.seconds >= 0


def test_moved_weight_and_added_partitions_weigh_the_mean() -> None:
    """New partitions (no weight given) weigh the mean; moved weight sums what moved."""
    weights = {TopicPartition("t", p): w for p, w in enumerate([1.0, 1.0, 4.0, 2.0])}
    scenario = Scenario(
        "grow",
        {"t": 4},
        members(2, ("t",)),
        weights=weights,
        events=(Event("add-partitions", partitions={"t": 6}),),
    )
    steps = run_scenario(scenario, "range", keep_assignments=True)
    # range: C0 [0,1] C1 [2,3] -> C0 [0,1,2] C1 [3,4,5]; partition 2 (weight 4) moved
    assert steps[1].assignment == {"C0": {"t": [0, 1, 2]}, "C1": {"t": [3, 4, 5]}}
    assert steps[1].moved == 1 and steps[1].moved_weight == 4.0
    assert steps[1].loads == {"C0": 6.0, "C1": 2.0 + 2 * 2.0}


def test_rack_locality_by_hand() -> None:
    """One rack per replica: range puts 2 of 4 partitions on a consumer in the replica's rack."""
    scenario = Scenario(
        "racks", {"t": 4}, members(2, ("t",), racks=("a", "b")), racks=("a", "b"), replication=1
    )
    (step,) = run_scenario(scenario, "range", keep_assignments=True)
    owners = {p: m for m, by_t in (step.assignment or {}).items() for p in by_t.get("t", [])}
    # worked by hand: range gives C0 (rack a) partitions 0, 1 and C1 (rack b) 2, 3; the single
    # replicas alternate over the racks, 0:a 1:b 2:a 3:b, so 0 and 3 are local: 2 of 4
    assert owners == {0: "C0", 1: "C0", 2: "C1", 3: "C1"}
    assert [set(scenario.replica_racks("t", p)) for p in range(4)] == [{"a"}, {"b"}, {"a"}, {"b"}]
    assert step.rack_locality == 0.5
    no_racks = run_scenario(Scenario("none", {"t": 4}, members(2, ("t",))), "range")
    assert no_racks[0].rack_locality is None


def test_copartition_violations_range_keeps_numbers_together_roundrobin_does_not() -> None:
    """t0 and t1 with 3 partitions each: range has 0 violations, roundrobin all 3 numbers."""
    scenario = Scenario("co", {"t0": 3, "t1": 3}, members(2, ("t0", "t1")))
    assert run_scenario(scenario, "range")[0].copartition_violations == 0
    assert run_scenario(scenario, "roundrobin")[0].copartition_violations == 3
    # topics with different subscribers are not co-partitioned
    ms = (SimMember("C0", ("t0", "t1")), SimMember("C1", ("t0",)))
    assert (
        copartition_violations(
            {"C0": {"t0": [0], "t1": [0]}, "C1": {"t0": [1]}}, ms, {"t0": 2, "t1": 2}
        )
        == 0
    )


def test_leader_leaving_hands_over_and_crashes_count_apart() -> None:
    """The first member leads; when it crashes the next one leads and the step still works."""
    scenario = sticky_example(Event("crash", leaves=("C0",), label="crash C0"))
    steps = list(simulate(scenario, "balanced-sticky"))
    assert steps[1].kind == "crash" and steps[1].label == "crash C0"
    assert steps[1].members == 2 and steps[1].error is None and steps[1].moved == 3


def test_custom_assignor_by_class_and_configured_instance() -> None:
    """A make_assignor class and a ready instance both run; instances are copied per member."""

    def everything_to_first(group):  # type: ignore[no-untyped-def]
        first = min(m.member_id for m in group.members)
        return {first: {t: list(range(group.partition_count(t))) for t in group.topics}}

    cls = make_assignor("first-takes-all", everything_to_first)
    scenario = Scenario("custom", {"t": 4}, members(2, ("t",)))
    for assignor in (cls, cls()):
        (step,) = run_scenario(scenario, assignor)
        assert step.error is None and step.count_imbalance == 4 and step.idle_members == 1


def test_empty_group_is_an_error_row() -> None:
    """Everyone leaving is recorded, not raised."""
    scenario = Scenario(
        "empty", {"t": 2}, members(1, ("t",)), events=(Event("leave", leaves=("C0",)),)
    )
    steps = run_scenario(scenario, "range")
    assert steps[1].error == "the group is empty" and steps[1].members == 0


class _WeightSeeing(KafkaPythonAssignor):
    """Gives everything to one member unless it was told partition weights."""

    name = "weight-seeing"

    def __init__(self, weights: Any = None, *, client_rack: str | None = None) -> None:
        super().__init__(client_rack=client_rack)
        self.weights = weights

    def assign_group(self, group: GroupSpec) -> Any:
        tps = [(t, p) for t in sorted(group.topics) for p in range(group.partition_count(t))]
        seen = self.weights(tps) if self.weights else {}
        heavy = [tp for tp in tps if seen.get(TopicPartition(*tp), 0) > 1]
        first, *rest = sorted(m.member_id for m in group.members)
        return {
            first: heavy,
            **{
                m: [tp for tp in tps if tp not in heavy][i :: len(rest)] for i, m in enumerate(rest)
            },
        }


def test_assignors_that_take_weights_get_the_scenarios_weights() -> None:
    """A constructor with `weights=` receives the scenario's weights (mean for new partitions)."""
    weights = {TopicPartition("t", 0): 5.0, TopicPartition("t", 1): 1.0}
    scenario = Scenario("w", {"t": 4}, members(3, ("t",)), weights=weights)
    (step,) = run_scenario(scenario, _WeightSeeing, keep_assignments=True)
    # t0 weighs 5; t2, t3 weigh the mean 3 > 1: the heavy ones go to C0
    assert step.assignment is not None and step.assignment["C0"] == {"t": [0, 2, 3]}


@pytest.mark.skipif("load-aware" not in assignor_names(), reason="LoadAwareAssignor not built")
def test_load_aware_balances_simulated_weights_better_than_counting() -> None:
    """With skewed weights, load-aware's busiest member carries less than balanced-sticky's."""
    from kafka_assignors.simulator.grid import make_weights

    topics = {"t": 24}
    scenario = Scenario(
        "skew", topics, members(4, ("t",)), weights=make_weights("zipf:1.2", topics, seed=2)
    )
    aware = run_scenario(scenario, "load-aware")[0]
    counted = run_scenario(scenario, "balanced-sticky")[0]
    assert aware.error is None and aware.load_imbalance is not None
    assert counted.load_imbalance is not None
    assert aware.load_imbalance < counted.load_imbalance


def test_topic_spread_counts_subscribers_that_hold_none_of_the_topic() -> None:
    """Worst per-topic spread: a subscriber holding none of a topic counts as 0."""
    from kafka_assignors.core.metrics import topic_spread

    assignment = {"a": {"t": [0, 1, 2]}, "b": {"t": [3]}, "c": {"u": [0]}}
    assert topic_spread(assignment) == 3  # c holds no t
    assert topic_spread(assignment, {"a": ["t", "u"], "b": ["t", "u"], "c": ["u"]}) == 2
    assert topic_spread({"a": {"t": [0]}, "b": {"t": [1]}}) == 0


def test_every_rebalance_reports_the_worst_topic_spread() -> None:
    """2 topics x 4, 4 members, one leaves, one joins: the figure matches the assignment, and
    balanced-sticky keeps every topic within one."""
    scenario = Scenario(
        "two-by-four",
        {"t0": 4, "t1": 4},
        members(4, ("t0", "t1")),
        events=(Event("leave", leaves=("C1",)), Event("join", joins=members(5, ("t0", "t1"))[4:])),
    )
    for name in ("sticky", "balanced-sticky", "range"):
        for step in run_scenario(scenario, name, keep_assignments=True):
            assert step.assignment is not None and step.topic_spread is not None
            spreads = []
            for t in ("t0", "t1"):
                held = [len(step.assignment[m].get(t, ())) for m in step.assignment]
                spreads.append(max(held) - min(held))
            assert step.topic_spread == max(spreads), (name, step.step)
            if name == "balanced-sticky":
                assert step.topic_spread <= 1
