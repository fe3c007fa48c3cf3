"""The aiokafka adapter: same wire format as kafka-python, full subscriptions at the leader."""

from __future__ import annotations

from typing import Any

from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)

from kafka_assignors import BalancedStickyAssignor as KafkaPythonBalancedSticky
from kafka_assignors.aiokafka import (
    BalancedStickyAssignor,
    CooperativeBalancedStickyAssignor,
    for_aiokafka,
)

from .fakes import FakeCluster


def aiokafka_member(owned: dict[str, list[int]], generation: int) -> Any:
    """An aiokafka member's assignor after one assignment in ``generation``."""
    a = BalancedStickyAssignor()
    coordinator = _Coordinator()
    coordinator.generation = generation
    a.bind(coordinator)  # as kafka_assignors.metrics.instrument(consumer) does once started
    _alive.append(coordinator)
    a.on_assignment(ConsumerProtocolMemberAssignment(0, sorted(owned.items()), b""))
    return a


class _Coordinator:
    """The aiokafka GroupCoordinator's ``generation``, which a bound wrapper reads."""

    generation = -1


_alive: list[_Coordinator] = []


def perform_assignment(leader: Any, members: list[tuple[str, str | None, bytes]]) -> Any:
    """Mimics aiokafka's ``_perform_assignment``: v0-decoded metadata."""
    decoded = {m: ConsumerProtocolMemberMetadata.decode(raw) for m, _i, raw in members}
    return leader.assign(FakeCluster({"t": 6}), decoded)


def test_aiokafka_members_send_the_kafka_python_wire_format() -> None:
    """aiokafka's own v0 decoder still reads our topics; the full v3 fields ride along."""
    raw = aiokafka_member({"t": [1, 2]}, 4).metadata({"t"})
    assert ConsumerProtocolMemberMetadata.decode(raw).subscription == ["t"]
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    full = ConsumerProtocolSubscription.decode(raw)
    assert full.generation_id == 4
    assert [(p.topic, p.partitions) for p in full.owned_partitions] == [("t", [1, 2])]


def test_aiokafka_leader_reads_owned_partitions_and_stays_sticky() -> None:
    """An aiokafka leader sees every member's owned partitions and keeps them in place."""
    members = [
        ("a", None, aiokafka_member({"t": [0, 1, 2]}, 2).metadata({"t"})),
        ("b", "static-b", aiokafka_member({"t": [3, 4, 5]}, 2).metadata({"t"})),
        ("c", None, aiokafka_member({}, -1).metadata({"t"})),
    ]
    leader = BalancedStickyAssignor()
    result = perform_assignment(leader, members)
    got = {m: [p for _t, ps in a.assigned_partitions for p in ps] for m, a in result.items()}
    assert set(got["a"]) < {0, 1, 2} and set(got["b"]) < {3, 4, 5}
    assert sorted(len(v) for v in got.values()) == [2, 2, 2]
    assert leader.last_report.moved == 2


def test_without_the_raw_members_the_leader_still_assigns_validly() -> None:
    """If aiokafka's frame cannot be read, the leader warns and assigns as if nothing was owned."""
    decoded = {m: ConsumerProtocolMemberMetadata.decode(aiokafka_member({}, -1).metadata({"t"}))
               for m in "ab"}
    result = CooperativeBalancedStickyAssignor().assign(FakeCluster({"t": 4}), decoded)
    assert sorted(p for a in result.values() for _t, ps in a.assigned_partitions for p in ps) == [
        0, 1, 2, 3]


def test_for_aiokafka_wraps_classes_and_instances() -> None:
    """Any of our kafka-python assignors (class or instance) can be wrapped for aiokafka."""
    assert for_aiokafka(KafkaPythonBalancedSticky).name == "balanced-sticky"
    assert for_aiokafka(KafkaPythonBalancedSticky()).name == "balanced-sticky"


def test_every_exported_assignor_has_an_aiokafka_twin() -> None:
    """Each assignor exported by kafka_assignors is importable from kafka_assignors.aiokafka."""
    import kafka_assignors
    import kafka_assignors.aiokafka as aio
    from kafka_assignors.kafka_python.assignor import KafkaPythonAssignor

    names = [n for n in kafka_assignors.__all__
             if isinstance(getattr(kafka_assignors, n), type)
             and issubclass(getattr(kafka_assignors, n), KafkaPythonAssignor)
             and getattr(kafka_assignors, n).name]
    assert len(names) >= 12
    for n in names:
        assert getattr(aio, n)().name == getattr(kafka_assignors, n).name
