"""Our assignors on whichever kafka-python is installed (2.2, 2.3 or 3.x), through that
version's own wire classes; ``make test`` also runs this file in kafka-python 2.x venvs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

import kafka_assignors
from kafka_assignors import (
    BalancedStickyAssignor,
    BroadcastAssignor,
    CooperativeBalancedStickyAssignor,
    CooperativeBroadcastAssignor,
    CooperativeCoPartitionedAssignor,
    CooperativeLoadAwareAssignor,
    CooperativePinnedAssignor,
    CooperativeRackAwareAssignor,
    CoPartitionedAssignor,
    GroupSpec,
    LoadAwareAssignor,
    PinnedAssignor,
    RackAwareAssignor,
    make_assignor,
)
from kafka_assignors.core.model import UNKNOWN_GENERATION
from kafka_assignors.kafka_python import assignor as adapter
from kafka_assignors.kafka_python.compat import KAFKA_PYTHON_2, RebalanceProtocol

from .fakes import FakeCluster
from .kafka_python_wire import Coordinator, assignment_of, partitions_of, round_trip, sent

COUNTS = {"orders": 6, "payments": 6}


def _round_robin(group: GroupSpec) -> dict[str, list[tuple[str, int]]]:
    """A custom strategy: partition i of every topic to member i mod n."""
    ids = [m.member_id for m in sorted(group.members, key=lambda m: m.sort_key)]
    out: dict[str, list[tuple[str, int]]] = {m: [] for m in ids}
    for topic, spec in sorted(group.topics.items()):
        for p in range(spec.partitions):
            out[ids[p % len(ids)]].append((topic, p))
    return out


FACTORIES: dict[str, Callable[[], Any]] = {
    "balanced-sticky": BalancedStickyAssignor,
    "cooperative-balanced-sticky": CooperativeBalancedStickyAssignor,
    "load-aware": lambda: LoadAwareAssignor(weights={}),
    "cooperative-load-aware": lambda: CooperativeLoadAwareAssignor(weights={}),
    "rack-aware": RackAwareAssignor,
    "cooperative-rack-aware": CooperativeRackAwareAssignor,
    "co-partitioned": CoPartitionedAssignor,
    "cooperative-co-partitioned": CooperativeCoPartitionedAssignor,
    "pinned": lambda: PinnedAssignor(pinned=["orders:0"]),
    "cooperative-pinned": lambda: CooperativePinnedAssignor(pinned=["orders:0"]),
    "broadcast": BroadcastAssignor,
    "cooperative-broadcast": CooperativeBroadcastAssignor,
    "custom-round-robin": lambda: make_assignor("custom-round-robin", _round_robin)(),
    "custom-cooperative": lambda: make_assignor("custom-cooperative", _round_robin,
                                                cooperative=True)(),
}


def test_import_and_version_flag() -> None:
    """``import kafka_assignors`` works and knows which kafka-python line it runs on."""
    import kafka

    assert kafka_assignors.__version__
    assert kafka.__version__.startswith("2.") == KAFKA_PYTHON_2


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_every_assignor_assigns_through_the_installed_wire_format(name: str) -> None:
    """Each assignor (and a make_assignor strategy), three members, two topics: the leader's
    answer covers every partition exactly once (every member everything for broadcast) and
    each member reads its own assignment back."""
    members = {f"m{i}": Coordinator(FACTORIES[name]()) for i in range(3)}
    result = round_trip(members, ["orders", "payments"], FakeCluster(COUNTS), generation=1)
    assert set(result) == set(members)
    got = {m: partitions_of(assignment_of(result, m)) for m in members}
    pairs = [(t, p) for by_t in got.values() for t, ps in by_t.items() for p in ps]
    everything = {(t, p) for t, n in COUNTS.items() for p in range(n)}
    if "broadcast" in name:
        assert all(set((t, p) for t, ps in g.items() for p in ps) == everything
                   for g in got.values())
    else:
        assert sorted(pairs) == sorted(everything)
    if "pinned" in name:
        assert 0 in got["m0"].get("orders", [])
    # (kafka-python 2.x passes an assignor no generation: its claims are undated there)
    generation = UNKNOWN_GENERATION if KAFKA_PYTHON_2 else 1
    for m, c in members.items():
        assert c.owned() == (got[m], generation)


@pytest.mark.skipif(not KAFKA_PYTHON_2, reason="kafka-python 2.x only")
def test_cooperative_classes_run_eager_on_2x_and_say_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On kafka-python 2.x a cooperative class announces the eager protocol in every
    subscription and logs one warning per strategy and process."""
    adapter._noted_eager.discard("cooperative-balanced-sticky")
    a = CooperativeBalancedStickyAssignor()
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        raws = [sent(a, ["orders"]) for _ in range(3)]
    assert all(b'"mode":"eager"' in raw for raw in raws)
    notes = [r for r in caplog.records if "no cooperative rebalance protocol" in r.message]
    assert len(notes) == 1
    assert RebalanceProtocol.EAGER == 0


@pytest.mark.skipif(KAFKA_PYTHON_2, reason="kafka-python 3 only")
def test_cooperative_classes_stay_cooperative_on_3x() -> None:
    """On kafka-python 3 the cooperative classes keep offering COOPERATIVE first."""
    assert CooperativeBalancedStickyAssignor().supported_protocols()[0] == (
        RebalanceProtocol.COOPERATIVE)


@pytest.mark.skipif(not KAFKA_PYTHON_2, reason="kafka-python 3 instantiates a class itself")
def test_a_class_works_as_well_as_an_instance_on_2x() -> None:
    """A class given as is (kafka-python 2.x does not instantiate it) joins, leads and
    completes like an instance; instances, one per consumer, keep each consumer's ownership
    apart (a class is one shared default instance there: docs/runtime.md, shared instances)."""
    alone = {"m0": Coordinator(BalancedStickyAssignor)}
    result = round_trip(alone, ["orders"], FakeCluster(COUNTS), generation=3)
    assert partitions_of(assignment_of(result, "m0"))["orders"] == list(range(6))
    assert alone["m0"].owned() == ({"orders": list(range(6))}, UNKNOWN_GENERATION)
    group = {f"m{i}": Coordinator(BalancedStickyAssignor()) for i in range(2)}
    result = round_trip(group, ["orders"], FakeCluster(COUNTS), generation=3)
    got = {m: partitions_of(assignment_of(result, m))["orders"] for m in sorted(group)}
    assert sorted(p for ps in got.values() for p in ps) == list(range(6))
    assert {m: c.owned() for m, c in group.items()} == {
        m: ({"orders": ps}, UNKNOWN_GENERATION) for m, ps in got.items()}
