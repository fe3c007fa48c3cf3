"""The kafka-python adapter: wire format, validation, cooperative rounds and bad input."""

from __future__ import annotations

import logging
import random
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from kafka_assignors import (
    BalancedStickyAssignor,
    CooperativeBalancedStickyAssignor,
    GroupSpec,
    InvalidAssignmentError,
    TopicPartition,
    make_assignor,
)

from .fakes import FakeCluster, FakeMember, assigned, subscription_of


def member_after(assignor_cls: type, topics: list[str], owned: dict[str, list[int]],
                 generation: int) -> Any:
    """A fresh assignor instance that went through one assignment, as a running member has."""
    a = assignor_cls()
    a.on_assignment(ConsumerProtocolAssignment(0, sorted(owned.items()), b""), generation)
    return subscription_of(a, topics)


def test_wire_names_and_protocols() -> None:
    """The eager class speaks only EAGER; the cooperative one prefers COOPERATIVE, allows EAGER."""
    assert BalancedStickyAssignor.name == "balanced-sticky"
    assert CooperativeBalancedStickyAssignor.name == "cooperative-balanced-sticky"
    assert BalancedStickyAssignor().supported_protocols() == [RebalanceProtocol.EAGER]
    assert CooperativeBalancedStickyAssignor().supported_protocols() == [
        RebalanceProtocol.COOPERATIVE,
        RebalanceProtocol.EAGER,
    ]
    assert issubclass(BalancedStickyAssignor, AbstractPartitionAssignor)


def test_subscription_round_trips_owned_partitions_generation_and_rack() -> None:
    """A member tells the leader what it owns, since which generation, and its rack."""
    a = BalancedStickyAssignor(client_rack="zone-a")
    a.on_assignment(ConsumerProtocolAssignment(0, [("t", [2, 0])], b""), 7)
    sub = subscription_of(a, ["t", "u"])
    assert sub.version == 3 and sub.topics == ["t", "u"]
    assert [(tp.topic, tp.partitions) for tp in sub.owned_partitions] == [("t", [0, 2])]
    assert sub.generation_id == 7 and sub.rack_id == "zone-a"


def test_eager_leader_assigns_everything_and_keeps_owners() -> None:
    """The leader returns every member an assignment and keeps partitions where they were."""
    members = [
        FakeMember("a", member_after(BalancedStickyAssignor, ["t"], {"t": [0, 1, 2]}, 3)),
        FakeMember("b", member_after(BalancedStickyAssignor, ["t"], {"t": [3]}, 3)),
        FakeMember("c", member_after(BalancedStickyAssignor, ["t"], {}, -1)),
    ]
    leader = BalancedStickyAssignor()
    result = leader.assign(FakeCluster({"t": 6}), members)
    got = assigned(result)
    assert set(got) == {"a", "b", "c"}
    assert set(got["a"]["t"]) <= {0, 1, 2} and 3 in got["b"]["t"]
    assert sorted(len(v["t"]) for v in got.values()) == [2, 2, 2]
    assert leader.last_report.moved == 1


def test_cooperative_round_one_withholds_partitions_still_held() -> None:
    """A partition moving from a cooperative member is given to nobody until it is released."""
    coop = CooperativeBalancedStickyAssignor
    members = [
        FakeMember("a", member_after(coop, ["t"], {"t": [0, 1, 2, 3]}, 3)),
        FakeMember("b", member_after(coop, ["t"], {}, -1)),
    ]
    leader = CooperativeBalancedStickyAssignor()
    first = assigned(leader.assign(FakeCluster({"t": 4}), members))
    assert len(first["a"]["t"]) == 2 and first["b"] == {}
    assert leader.last_report.pending_second_round == 2
    # round two: a released two partitions
    members[0] = FakeMember("a", member_after(coop, ["t"], first["a"], 4))
    second = assigned(leader.assign(FakeCluster({"t": 4}), members))
    assert second["a"] == first["a"] and len(second["b"]["t"]) == 2
    assert leader.last_report.pending_second_round == 0


def test_eager_members_hand_over_in_one_round_even_under_the_cooperative_strategy() -> None:
    """Members running EAGER (listed beside an eager assignor) already revoked: no withholding."""
    sub = member_after(CooperativeBalancedStickyAssignor, ["t"], {"t": [0, 1, 2, 3]}, 3)
    # what metadata() sends when the consumer's protocol is EAGER
    from kafka_assignors.protocol.user_data import encode_user_data

    sub.user_data = encode_user_data({"mode": "eager"})
    members = [FakeMember("a", sub),
               FakeMember("b", member_after(CooperativeBalancedStickyAssignor, ["t"], {}, -1))]
    got = assigned(CooperativeBalancedStickyAssignor().assign(FakeCluster({"t": 4}), members))
    assert len(got["a"]["t"]) == 2 and len(got["b"]["t"]) == 2


def test_static_member_restart_gets_its_partitions_back_from_leader_memory() -> None:
    """A static member that restarted (new member id, owns nothing) gets what it had."""
    leader = BalancedStickyAssignor()
    fresh = [FakeMember(f"m{i}", subscription_of(BalancedStickyAssignor(), ["t"]), f"inst-{i}")
             for i in range(3)]
    first = assigned(leader.assign(FakeCluster({"t": 9}), fresh))
    restarted = [
        FakeMember("m0-new", subscription_of(BalancedStickyAssignor(), ["t"]), "inst-0"),
        *[
            FakeMember(f"m{i}", member_after(BalancedStickyAssignor, ["t"], first[f"m{i}"], 1),
                       f"inst-{i}")
            for i in (1, 2)
        ],
    ]
    second = assigned(leader.assign(FakeCluster({"t": 9}), restarted))
    assert second["m0-new"] == first["m0"]


@pytest.mark.parametrize(
    "metadata",
    [
        SimpleNamespace(topics=["t"], user_data=b"\x00\xffgarbage"),  # another client's bytes
        SimpleNamespace(topics=["t"], user_data=b"kas1{not json"),  # our tag, broken body
        SimpleNamespace(topics=["t"], user_data=None, owned_partitions=[("t", [99, -1])],
                        generation_id=2),  # partitions that do not exist
        SimpleNamespace(topics=[], user_data=b""),  # no topics at all
        SimpleNamespace(topics=["vanished", "t"], user_data=b""),  # a topic that is gone
        SimpleNamespace(topics=["empty"], user_data=b""),  # a topic with 0 partitions
    ],
)
def test_bad_member_metadata_never_crashes_the_leader(metadata: Any, caplog: Any) -> None:
    """Unreadable or impossible member data: the member owns nothing and the result is valid."""
    good = member_after(BalancedStickyAssignor, ["t"], {"t": [0, 1]}, 2)
    members = [FakeMember("good", good), FakeMember("odd", metadata)]
    with caplog.at_level(logging.WARNING):
        got = assigned(BalancedStickyAssignor().assign(FakeCluster({"t": 4, "empty": 0}), members))
    assert sorted(p for v in got.values() for p in v.get("t", [])) == [0, 1, 2, 3]
    assert set(got) == {"good", "odd"}
    if isinstance(metadata.user_data, bytes) and metadata.user_data.startswith((b"\x00", b"kas1")):
        assert "odd" in caplog.text


def test_ten_thousand_members() -> None:
    """10,000 members on 1,000 partitions: 1,000 get one partition each, the rest none."""
    sub = subscription_of(BalancedStickyAssignor(), ["t"])
    members = [FakeMember(f"m{i:05d}", sub) for i in range(10_000)]
    got = assigned(BalancedStickyAssignor().assign(FakeCluster({"t": 1000}), members))
    assert len(got) == 10_000
    assert sum(len(v.get("t", [])) for v in got.values()) == 1000


def random_strategy(group: GroupSpec) -> dict[str, list[TopicPartition]]:
    """Each partition to a random subscribed member (the source documents' custom example)."""
    rnd = random.Random(0)
    out: dict[str, list[TopicPartition]] = {m.member_id: [] for m in group.members}
    for topic in group.subscribed_topics():
        subscribers = sorted(m.member_id for m in group.members if topic in m.topics)
        for p in range(group.partition_count(topic)):
            out[rnd.choice(subscribers)].append(TopicPartition(topic, p))
    return out


def test_custom_assignor_from_one_function() -> None:
    """make_assignor turns a function on the model into a working, validated assignor."""
    random_assignor = make_assignor("random", random_strategy)
    assert random_assignor.name == "random"
    members = [FakeMember(m, subscription_of(random_assignor(), ["t", "u"])) for m in "abc"]
    got = assigned(random_assignor().assign(FakeCluster({"t": 5, "u": 3}), members))
    assert sorted((t, p) for v in got.values() for t, ps in v.items() for p in ps) == sorted(
        [("t", p) for p in range(5)] + [("u", p) for p in range(3)]
    )


def test_an_assignor_that_loses_a_partition_is_stopped_at_the_leader() -> None:
    """A strategy whose result drops or duplicates partitions raises a clear error."""
    def lossy(group: GroupSpec) -> dict[str, list[TopicPartition]]:
        return {group.members[0].member_id: [TopicPartition("t", 0)]}

    members = [FakeMember("a", subscription_of(BalancedStickyAssignor(), ["t"]))]
    with pytest.raises(InvalidAssignmentError, match="not assigned"):
        make_assignor("lossy", lossy)().assign(FakeCluster({"t": 2}), members)


def test_cooperative_broadcast_is_never_withheld() -> None:
    """A cooperative broadcast hands shared partitions out at once: nobody revokes, so no
    second round would ever come for a withheld one."""
    shared = make_assignor("shared", lambda g: {m.member_id: {"t": [0, 1]} for m in g.members},
                           cooperative=True, broadcast=True)
    members = [FakeMember(m, member_after(shared, ["t"], {"t": [0, 1]}, 2)) for m in "ab"]
    members.append(FakeMember("c", member_after(shared, ["t"], {}, -1)))
    got = assigned(shared().assign(FakeCluster({"t": 2}), members))
    assert all(v == {"t": [0, 1]} for v in got.values())


def test_second_cooperative_round_reuses_the_first_rounds_weights() -> None:
    """Live weights are read once per move: the follow-up cooperative round finishes the
    first round's plan instead of re-reading weights and aiming somewhere new."""
    from kafka_assignors.core.balanced_sticky import balanced_sticky

    class Counting(CooperativeBalancedStickyAssignor):
        reads = 0

        def partition_weights(self, topics: Any, context: Any) -> Any:
            Counting.reads += 1
            return {TopicPartition("t", p): float(Counting.reads * p) for p in range(4)}

        def assign_group(self, group: GroupSpec) -> Any:
            return balanced_sticky(group)

    coop = CooperativeBalancedStickyAssignor
    members = [FakeMember("a", member_after(coop, ["t"], {"t": [0, 1, 2, 3]}, 3)),
               FakeMember("b", member_after(coop, ["t"], {}, -1))]
    leader = Counting()
    first = assigned(leader.assign(FakeCluster({"t": 4}), members))
    assert leader.last_report.pending_second_round == 2 and Counting.reads == 1
    members[0] = FakeMember("a", member_after(coop, ["t"], first["a"], 4))
    leader.assign(FakeCluster({"t": 4}), members)
    assert Counting.reads == 1 and leader.last_report.pending_second_round == 0
    leader.assign(FakeCluster({"t": 4}), members)  # a later, unrelated rebalance reads again
    assert Counting.reads == 2
