"""The five new assignors through the kafka-python adapter: names, user data, racks, bad input."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kafka.cluster import ClusterMetadata
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.protocol.metadata import MetadataResponse

import kafka_assignors as ka
from kafka_assignors.kafka_python.racks import replica_racks
from kafka_assignors.strategies.pinned import parse_pins

from .fakes import FakeCluster, FakeMember, assigned, subscription_of

PAIRS = [
    (ka.LoadAwareAssignor, ka.CooperativeLoadAwareAssignor, "load-aware"),
    (ka.RackAwareAssignor, ka.CooperativeRackAwareAssignor, "rack-aware"),
    (ka.CoPartitionedAssignor, ka.CooperativeCoPartitionedAssignor, "co-partitioned"),
    (ka.PinnedAssignor, ka.CooperativePinnedAssignor, "pinned"),
    (ka.BroadcastAssignor, ka.CooperativeBroadcastAssignor, "broadcast"),
]


@pytest.mark.parametrize(("eager", "coop", "wire"), PAIRS)
def test_wire_names_protocols_and_exports(
    eager: type[ka.KafkaPythonAssignor], coop: type[ka.KafkaPythonAssignor], wire: str
) -> None:
    """Each strategy has an eager class and a Cooperative<Name> class, both exported."""
    assert eager.name == wire and coop.name == f"cooperative-{wire}"
    assert issubclass(eager, AbstractPartitionAssignor) and issubclass(coop, eager)
    assert eager().supported_protocols() == [RebalanceProtocol.EAGER]
    assert coop().supported_protocols() == [RebalanceProtocol.COOPERATIVE,
                                            RebalanceProtocol.EAGER]
    assert eager.__name__ in ka.__all__ and coop.__name__ in ka.__all__
    assert "Wire name" in (eager.__doc__ or "")


def members_of(assignor: Any, topics: list[str], n: int, prefix: str = "m") -> list[FakeMember]:
    return [FakeMember(f"{prefix}{i}", subscription_of(assignor, topics)) for i in range(n)]


def loads(got: dict[str, dict[str, list[int]]], weights: dict[Any, float]) -> dict[str, float]:
    return {m: sum(weights.get(ka.TopicPartition(t, p), 0.0) for t, ps in v.items() for p in ps)
            for m, v in got.items()}


# --- load-aware ------------------------------------------------------------------

SKEWED = {ka.TopicPartition("t", p): (90.0 if p == 0 else 10.0) for p in range(10)}


def test_load_aware_balances_given_weights() -> None:
    """With one hot partition, its owner gets little else; loads are 90 / 90."""
    leader = ka.LoadAwareAssignor(weights=SKEWED)
    got = assigned(leader.assign(FakeCluster({"t": 10}), members_of(leader, ["t"], 2)))
    assert sorted(loads(got, SKEWED).values()) == [90.0, 90.0]


def test_load_aware_takes_a_weight_function_and_tuple_keys() -> None:
    """A function of the partitions works, and keys may be plain (topic, partition) tuples."""
    def lag(partitions: Any) -> dict[tuple[str, int], float]:
        return {(tp.topic, tp.partition): (90.0 if tp.partition == 0 else 10.0)
                for tp in partitions}

    leader = ka.LoadAwareAssignor(weights=lag)
    got = assigned(leader.assign(FakeCluster({"t": 10}), members_of(leader, ["t"], 2)))
    assert sorted(loads(got, SKEWED).values()) == [90.0, 90.0]


def failing(partitions: Any) -> dict[Any, float]:
    raise PermissionError("GROUP_AUTHORIZATION_FAILED")


@pytest.mark.parametrize("weights", [failing, {}, {("t", 0): float("nan")}, "/nonexistent.json"])
def test_load_aware_falls_back_to_counting_with_a_warning(weights: Any, caplog: Any) -> None:
    """A failing, empty or unusable weight source: a warning, then balanced-sticky's result."""
    leader = ka.LoadAwareAssignor(weights=weights)
    members = members_of(leader, ["t", "u"], 3)
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        got = assigned(leader.assign(FakeCluster({"t": 7, "u": 2}), members))
    plain = assigned(ka.BalancedStickyAssignor().assign(FakeCluster({"t": 7, "u": 2}), members))
    assert got == plain
    assert "load-aware" in caplog.text and "partition count" in caplog.text
    if weights is failing:
        assert "PermissionError" in caplog.text and "GROUP_AUTHORIZATION_FAILED" in caplog.text


def test_load_aware_missing_weights_weigh_the_mean(caplog: Any) -> None:
    """Weights for some partitions only: the others count as the mean, the result is valid."""
    leader = ka.LoadAwareAssignor(weights={ka.TopicPartition("t", 0): 100.0,
                                           ka.TopicPartition("t", 1): 0.0})
    got = assigned(leader.assign(FakeCluster({"t": 6}), members_of(leader, ["t"], 3)))
    assert sorted(p for v in got.values() for p in v["t"]) == list(range(6))


def test_load_aware_reads_a_load_profile_file(tmp_path: Any, caplog: Any) -> None:
    """A load profile path is re-read at each rebalance; a broken file means a fallback."""
    from kafka_assignors.load.profile import LoadProfile, PartitionLoad

    path = tmp_path / "profile.json"
    LoadProfile(tuple(PartitionLoad(tp.topic, tp.partition, w) for tp, w in SKEWED.items())
                ).write(path)
    leader = ka.LoadAwareAssignor(weights=str(path))
    members = members_of(leader, ["t"], 2)
    got = assigned(leader.assign(FakeCluster({"t": 10}), members))
    assert sorted(loads(got, SKEWED).values()) == [90.0, 90.0]
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING, logger="kafka_assignors"):
        assigned(leader.assign(FakeCluster({"t": 10}), members))
    assert f"load profile {path}" in caplog.text


def test_load_aware_bad_constructor_arguments_fail_early() -> None:
    """Bad weights or tolerance are rejected when the assignor is made, not at rebalance."""
    with pytest.raises(TypeError):
        ka.LoadAwareAssignor(weights=42)
    with pytest.raises(ValueError):
        ka.LoadAwareAssignor(tolerance=-0.1)


def test_cooperative_load_aware_withholds_moving_partitions() -> None:
    """The cooperative class hands moves over in two rounds like every cooperative strategy."""
    coop = ka.CooperativeLoadAwareAssignor
    a = coop(weights=SKEWED)
    a.on_assignment(ConsumerProtocolAssignment(0, [("t", list(range(10)))], b""), 3)
    members = [FakeMember("a", subscription_of(a, ["t"])),
               FakeMember("b", subscription_of(coop(weights=SKEWED), ["t"]))]
    leader = coop(weights=SKEWED)
    first = assigned(leader.assign(FakeCluster({"t": 10}), members))
    assert first["b"] == {} and leader.last_report.pending_second_round > 0


# --- rack-aware -------------------------------------------------------------------

def rack_cluster(partitions: int, broker_racks: list[str | None], replicas: int = 1
                 ) -> ClusterMetadata:
    """kafka-python's own ClusterMetadata, fed a metadata response."""
    v = 12
    broker = MetadataResponse.MetadataResponseBroker
    topic = MetadataResponse.MetadataResponseTopic
    part = topic.MetadataResponsePartition
    n = len(broker_racks)
    response = MetadataResponse(
        version=v, throttle_time_ms=0, cluster_id="c", controller_id=0,
        brokers=[broker(node_id=i, host="localhost", port=9092 + i, rack=r, version=v)
                 for i, r in enumerate(broker_racks)],
        topics=[topic(error_code=0, name="t", is_internal=False, version=v, partitions=[
            part(error_code=0, partition_index=p, leader_id=p % n, leader_epoch=0,
                 replica_nodes=[(p + k) % n for k in range(replicas)], isr_nodes=[p % n],
                 offline_replicas=[], version=v)
            for p in range(partitions)])],
    )
    cluster = ClusterMetadata()
    cluster.update_metadata(response)
    return cluster


def test_replica_racks_from_kafka_python_cluster_metadata() -> None:
    """A partition's racks are its replicas' brokers' racks; brokers without a rack add none."""
    cluster = rack_cluster(3, ["zone-a", "zone-b", None], replicas=2)
    assert replica_racks(cluster, "t", 3) == {0: {"zone-a", "zone-b"}, 1: {"zone-b"},
                                              2: {"zone-a"}}
    assert replica_racks(FakeCluster({"t": 3}), "t", 3) == {}


def test_rack_aware_puts_partitions_in_their_consumers_zone() -> None:
    """Three zones, one replica each, one consumer per zone: every partition is local."""
    cluster = rack_cluster(6, ["zone-a", "zone-b", "zone-c"])
    members = [FakeMember(f"c-{z}", subscription_of(ka.RackAwareAssignor(client_rack=f"zone-{z}"),
                                                    ["t"])) for z in "abc"]
    got = assigned(ka.RackAwareAssignor().assign(cluster, members))
    assert got == {"c-a": {"t": [0, 3]}, "c-b": {"t": [1, 4]}, "c-c": {"t": [2, 5]}}


@pytest.mark.parametrize("broker_racks", [[None, None, None], ["zone-a", "zone-b", "zone-c"]])
def test_rack_aware_without_usable_racks_is_balanced_sticky(broker_racks: list[str | None]
                                                           ) -> None:
    """No broker racks, or no member racks: exactly balanced-sticky's assignment."""
    cluster = rack_cluster(7, broker_racks)
    with_racks = broker_racks[0] is None
    members = [FakeMember(f"c{i}", subscription_of(
        ka.RackAwareAssignor(client_rack=f"zone-{i}" if with_racks else None), ["t"]))
        for i in range(3)]
    got = assigned(ka.RackAwareAssignor().assign(cluster, members))
    assert got == assigned(ka.BalancedStickyAssignor().assign(cluster, members))


# --- pinned -------------------------------------------------------------------------

def test_pins_travel_in_the_subscription_and_are_honoured() -> None:
    """A member's pins reach the leader through its own user data."""
    pinner = ka.PinnedAssignor(pinned=["t:0", ("t", 5), ka.TopicPartition("t", 6)])
    members = [FakeMember("z-pinner", subscription_of(pinner, ["t"])),
               *members_of(ka.PinnedAssignor(), ["t"], 2, prefix="a")]
    got = assigned(ka.PinnedAssignor().assign(FakeCluster({"t": 9}), members))
    assert got["z-pinner"] == {"t": [0, 5, 6]}
    assert sorted(len(v["t"]) for v in got.values()) == [3, 3, 3]


def test_conflicting_pins_are_resolved_and_logged(caplog: Any) -> None:
    """Two members pin t-0: the first in sort order wins; the leader says so."""
    members = [FakeMember(m, subscription_of(ka.PinnedAssignor(pinned=["t:0"]), ["t"]))
               for m in ("b", "a")]
    with caplog.at_level(logging.WARNING):
        got = assigned(ka.PinnedAssignor().assign(FakeCluster({"t": 4}), members))
    assert 0 in got["a"]["t"] and "pinned by more than one member" in caplog.text


@pytest.mark.parametrize("bad", [["t:x"], [("t", -1)], [3], [("", 1)], [("t", True)]])
def test_bad_pins_are_refused_at_construction(bad: list[Any]) -> None:
    """Unreadable pins raise ValueError when the assignor is made."""
    with pytest.raises(ValueError):
        ka.PinnedAssignor(pinned=bad)


def test_pin_spellings() -> None:
    """'topic' pins the whole topic, 'topic:3' one partition; duplicates collapse."""
    assert parse_pins(["a", "a:3", ("a", 3), ("b", None)]) == [("a", None), ("a", 3),
                                                                ("b", None)]


# --- broadcast and co-partitioned -----------------------------------------------------

@pytest.mark.parametrize("cls", [ka.BroadcastAssignor, ka.CooperativeBroadcastAssignor])
def test_broadcast_gives_everyone_everything_even_in_a_cooperative_round(cls: type) -> None:
    """Every member gets all partitions of its topics; nothing is withheld for a second round."""
    holder = cls()
    holder.on_assignment(ConsumerProtocolAssignment(0, [("t", [0, 1, 2])], b""), 2)
    members = [FakeMember("a", subscription_of(holder, ["t"])),
               FakeMember("b", subscription_of(cls(), ["t", "u"]))]
    leader = cls()
    got = assigned(leader.assign(FakeCluster({"t": 3, "u": 1}), members))
    assert got == {"a": {"t": [0, 1, 2]}, "b": {"t": [0, 1, 2], "u": [0]}}
    assert leader.last_report.pending_second_round == 0


def test_co_partitioned_through_the_adapter() -> None:
    """Partition i of both joined topics goes to the same member."""
    leader = ka.CoPartitionedAssignor()
    got = assigned(leader.assign(FakeCluster({"orders": 5, "payments": 5}),
                                 members_of(leader, ["orders", "payments"], 2)))
    assert all(v["orders"] == v["payments"] for v in got.values())
