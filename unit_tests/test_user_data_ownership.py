"""Owned partitions and generation in the subscription's user data: encoded and decoded both
ways, and the stickiness they give on whichever kafka-python is installed (``make test`` runs
this file in kafka-python 2.2 and 2.3 venvs too), including a group where a kafka-python 3
member meets a kafka-python 2.x leader."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_assignors import (
    BalancedStickyAssignor,
    CooperativeBalancedStickyAssignor,
    GroupSpec,
    make_assignor,
)
from kafka_assignors.core.model import UNKNOWN_GENERATION, TopicSpec
from kafka_assignors.kafka_python.compat import KAFKA_PYTHON_2
from kafka_assignors.protocol.leader import Leader, WireMember
from kafka_assignors.protocol.user_data import (
    decode_user_data,
    encode_user_data,
    ownership_fields,
    read_ownership,
)

from .fakes import FakeCluster
from .kafka_python_wire import (
    Coordinator,
    assignment_of,
    decode_subscription,
    partitions_of,
    round_trip,
)

#: What a kafka-python 3.0.12 member running cooperative-balanced-sticky sends after
#: generation 7 gave it orders-0..2 (a version-3 subscription: topics, user data, owned
#: partitions, generation, rack); ``test_the_kafka_python_3_sample_is_what_we_send`` keeps it
#: honest on kafka-python 3.
V3_SAMPLE = bytes.fromhex(
    "00030000000100066f7264657273000000446b6173317b2267656e65726174696f6e223a372c226d6f64"
    "65223a22636f6f7065726174697665222c226f776e6564223a7b226f7264657273223a5b302c312c325d"
    "7d7d0000000100066f72646572730000000300000000000000010000000200000007ffff"
)


def test_ownership_round_trips_through_user_data() -> None:
    """Owned partitions (sorted, empty topics dropped) and the generation come back as sent."""
    raw = encode_user_data({"mode": "eager",
                            **ownership_fields({"b": [3, 1], "a": [0], "c": []}, 12)})
    fields = decode_user_data(raw)
    assert fields is not None
    assert read_ownership(fields) == ({"a": [0], "b": [1, 3]}, 12)


@pytest.mark.parametrize("fields", [
    {},
    {"owned": {"a": [0]}},
    {"generation": 3},
    {"owned": ["a", 0], "generation": 3},
    {"owned": {"a": [-1]}, "generation": 3},
    {"owned": {"a": ["0"]}, "generation": 3},
    {"owned": {"a": [True]}, "generation": 3},
    {"owned": {"a": [0]}, "generation": "3"},
])
def test_absent_or_malformed_ownership_reads_as_none(fields: dict[str, Any]) -> None:
    """User data without both fields, or with fields of the wrong shape, claims nothing."""
    assert read_ownership(fields) is None


def test_strategies_never_see_the_ownership_fields() -> None:
    """The leader takes owned and generation out of the fields a strategy reads."""
    seen: list[dict[str, object]] = []

    def strategy(group: GroupSpec) -> dict[str, list[tuple[str, int]]]:
        seen.extend(dict(m.user_data) for m in group.members)
        return {"m": [("t", 0)]}

    raw = encode_user_data({"mode": "eager", "pin": 1, **ownership_fields({"t": [0]}, 4)})
    member = WireMember("m", None, ["t"], {}, user_data=raw, version=0)
    Leader("x").assign(strategy, [member], {"t": TopicSpec("t", 1)}, cooperative=False)
    assert seen == [{"mode": "eager", "pin": 1}]


def test_a_version_0_member_keeps_its_partitions_and_its_claims_are_dated() -> None:
    """A version-0 subscription's owned partitions and generation come from its user data:
    the leader keeps them with it, and of two claims on one partition the newer wins."""
    def v0(member: str, owned: dict[str, list[int]], generation: int) -> WireMember:
        raw = encode_user_data({"mode": "eager", **ownership_fields(owned, generation)})
        return WireMember(member, None, ["t"], {}, user_data=raw, version=0)

    def keep(group: GroupSpec) -> dict[str, dict[str, list[int]]]:
        # a strategy that returns what each member owns: shows what the leader resolved
        return {m.member_id: {t: list(ps) for t, ps in m.owned.items()} for m in group.members}

    members = [v0("a", {"t": [0, 1]}, 5), v0("b", {"t": [2, 3]}, 5)]
    leader = Leader("x")
    sent = leader.assign(keep, members, {"t": TopicSpec("t", 4)}, cooperative=False)
    assert sent == {"a": {"t": [0, 1]}, "b": {"t": [2, 3]}}


def test_every_member_says_what_it_owns_in_its_user_data() -> None:
    """After an assignment a member's next subscription carries its partitions and generation
    in the user data (not for broadcast, where there is nothing to stick to)."""
    c = Coordinator(BalancedStickyAssignor())
    result = round_trip({"m0": c}, ["orders"], FakeCluster({"orders": 3}), generation=9)
    assert partitions_of(assignment_of(result, "m0")) == {"orders": [0, 1, 2]}
    fields = decode_user_data(decode_subscription(c.join(["orders"])).user_data)
    # (kafka-python 2.x passes an assignor no generation: its claims are undated there)
    generation = UNKNOWN_GENERATION if KAFKA_PYTHON_2 else 9
    assert fields is not None and read_ownership(fields) == ({"orders": [0, 1, 2]}, generation)
    broadcast = Coordinator(make_assignor("bc", lambda g: {}, broadcast=True)())
    assert b"owned" not in broadcast.join(["orders"])


@pytest.mark.parametrize("cls", [BalancedStickyAssignor, CooperativeBalancedStickyAssignor])
def test_stickiness_holds_across_generations_whoever_leads(
    cls: type[BalancedStickyAssignor],
) -> None:
    """Three members, then a fourth joins, then the first leaves, each round led by another
    member: every round moves only what balance requires (the installed kafka-python's
    wire: on 2.x everything a leader knows of owners came through user data)."""
    cluster = FakeCluster({"orders": 12})
    group = {f"m{i}": Coordinator(cls()) for i in range(3)}
    first = round_trip(group, ["orders"], cluster, generation=1)
    before = {m: set(partitions_of(assignment_of(first, m))["orders"]) for m in group}
    assert sorted(len(v) for v in before.values()) == [4, 4, 4]

    group["m3"] = Coordinator(cls())
    second = round_trip(group, ["orders"], cluster, generation=2, leader="m2")
    after = {m: set(partitions_of(assignment_of(second, m)).get("orders", [])) for m in group}
    if not cls.cooperative or KAFKA_PYTHON_2:  # eager: the newcomer gets its 3 at once
        assert sorted(len(v) for v in after.values()) == [3, 3, 3, 3]
    kept = sum(len(before[m] & after[m]) for m in before)
    assert kept == 9  # each old member gave up exactly one
    for m in before:  # (undated on kafka-python 2.x, which passes no generation)
        assert group[m].owned()[1] == (UNKNOWN_GENERATION if KAFKA_PYTHON_2 else 2)

    del group["m0"]
    if cls.cooperative and not KAFKA_PYTHON_2:  # cooperative: the second round completes
        round_trip(group, ["orders"], cluster, generation=3, leader="m3")
    current = {m: set(group[m].owned()[0].get("orders", [])) for m in group}
    third = round_trip(group, ["orders"], cluster, generation=4, leader="m3")
    final = {m: set(partitions_of(assignment_of(third, m)).get("orders", [])) for m in group}
    assert sorted(len(v) for v in final.values()) == [4, 4, 4]
    assert all(current[m] <= final[m] for m in group)  # survivors only gained


def test_a_kafka_python_3_member_is_read_in_full_by_any_leader() -> None:
    """A kafka-python 3 member's subscription (the committed sample) tells a leader on the
    installed kafka-python what it owns and since when: a 2.x leader reads only the
    version-0 fields, which is enough because the user data carries them too."""
    leader = Coordinator(CooperativeBalancedStickyAssignor())
    newcomer = leader.join(["orders"])
    result = leader.lead(FakeCluster({"orders": 6}),
                         [("k3", V3_SAMPLE, None), ("new", newcomer, None)])
    got = {m: partitions_of(assignment_of(result, m)).get("orders", []) for m in result}
    # balanced-sticky keeps 0..2 with the kafka-python 3 member; it still holds them
    # (cooperative), so nothing it owns is handed to another member in this round
    assert set(got["k3"]) <= {0, 1, 2} and not set(got["new"]) & {0, 1, 2}
    assert sorted(got["k3"] + got["new"]) == sorted(set(got["k3"] + got["new"]))


@pytest.mark.skipif(KAFKA_PYTHON_2, reason="needs kafka-python 3's encoder")
def test_the_kafka_python_3_sample_is_what_we_send() -> None:
    """V3_SAMPLE is exactly what our kafka-python 3 adapter sends in that state."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    a = CooperativeBalancedStickyAssignor()
    a.on_assignment(ConsumerProtocolAssignment(0, [("orders", [0, 1, 2])], b""), 7)
    assert bytes(a.metadata({"orders"}).encode()) == V3_SAMPLE
