"""One assignor instance shared by several consumers keeps each consumer's state apart.

kafka-python (and aiokafka) use an instance from ``partition_assignment_strategy``
as is; consumers of one process sharing it must not report each other's owned
partitions, or a cooperative leader could hand over a partition still held.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Coroutine, Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.base import Generation
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.adapters.user_data import decode_user_data
from kafka_assignors.aiokafka import AIOKafkaAssignor, for_aiokafka

from .fakes import assigned

PARTITIONS = 4


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Drive a kafka-python coroutine that never waits (no listener, no network)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise AssertionError("the coroutine waited for something")


@pytest.fixture
def consumers() -> Iterator[tuple[CooperativeBalancedStickyAssignor, KafkaConsumer,
                                  KafkaConsumer]]:
    """Two real kafka-python consumers (nothing connects) sharing one assignor instance."""
    shared = CooperativeBalancedStickyAssignor()
    made = []
    for _ in range(2):
        c = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(2, 5), group_id="g",
                          enable_auto_commit=False, partition_assignment_strategy=[shared])
        c.subscribe(["t"])
        made.append(c)
    try:
        yield shared, made[0], made[1]
    finally:
        for c in made:
            c.close()


def receive(consumer: KafkaConsumer, name: str, partitions: list[int], generation: int) -> None:
    """The end of a rebalance as kafka-python runs it: SyncGroup's assignment arrives."""
    raw = ConsumerProtocolAssignment(0, [("t", partitions)], b"").encode()
    run(consumer._coordinator._on_join_complete_async(generation, "id", name, raw))


def join_metadata(consumer: KafkaConsumer) -> Any:
    """What the consumer's JoinGroup request carries (kafka-python's group_protocols())."""
    [(_name, subscription)] = consumer._coordinator.group_protocols()
    return subscription


def test_consumers_sharing_an_instance_report_only_their_own_partitions(
    consumers: tuple[Any, KafkaConsumer, KafkaConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared, a, b = consumers
    receive(a, shared.name, [0, 1], 5)
    receive(b, shared.name, [2, 3], 5)

    sub_a, sub_b = join_metadata(a), join_metadata(b)
    assert [(tp.topic, tp.partitions) for tp in sub_a.owned_partitions] == [("t", [0, 1])]
    assert [(tp.topic, tp.partitions) for tp in sub_b.owned_partitions] == [("t", [2, 3])]

    # a leads the next generation through kafka-python's own _perform_assignment
    coordinator = a._coordinator
    monkeypatch.setattr(coordinator._cluster, "partitions_for_topic",
                        lambda topic: set(range(PARTITIONS)) if topic == "t" else None)
    coordinator._generation = Generation(6, "a-id", shared.name)
    members = [
        SimpleNamespace(member_id="a-id", group_instance_id=None, metadata=sub_a.encode()),
        SimpleNamespace(member_id="b-id", group_instance_id=None, metadata=sub_b.encode()),
    ]
    result = coordinator._perform_assignment("a-id", shared.name, members)
    # nothing moves and nothing waits: each keeps exactly what it holds
    assert assigned(result) == {"a-id": {"t": [0, 1]}, "b-id": {"t": [2, 3]}}
    assert shared.last_report.moved == 0 and shared.last_report.pending_second_round == 0
    # no user data: the broker refuses to convert a classic group to a KIP-848 consumer
    # group (an online upgrade) while any assignment carries some
    assert all(bytes(a.user_data or b"") == b"" for a in result.values())


def subscriber(topic: str, owned: list[int], generation: int = 5) -> bytes:
    """A member's encoded subscription (built on its own instance, as another process would)."""
    other = CooperativeBalancedStickyAssignor()
    if owned:
        other.on_assignment(ConsumerProtocolAssignment(0, [(topic, owned)], b""), generation)
    return bytes(other.metadata({topic}).encode())


def static(member_id: str, instance_id: str, metadata: bytes) -> Any:
    return SimpleNamespace(member_id=member_id, group_instance_id=instance_id, metadata=metadata)


def test_each_consumer_has_its_own_leader_memory(
    consumers: tuple[Any, KafkaConsumer, KafkaConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two leaders in one process, of two groups whose static members have the same
    instance ids (say, pod names): each remembers its own group's partitions."""
    shared, a, b = consumers
    for c in (a, b):
        monkeypatch.setattr(c._coordinator._cluster, "partitions_for_topic",
                            lambda topic: set(range(6)) if topic in ("t", "u") else None)
    receive(a, shared.name, [0, 1], 5)
    a_first = a._coordinator._perform_assignment("a-id", shared.name, [
        SimpleNamespace(member_id="a-id", group_instance_id=None,
                        metadata=join_metadata(a).encode()),
        static("p1", "pod-1", subscriber("t", [4, 5])),
        static("p2", "pod-2", subscriber("t", [2, 3])),
    ])
    assert assigned(a_first)["p1"] == {"t": [4, 5]}
    # b leads another group, on topic u, with static members of the same instance ids
    b._coordinator._perform_assignment("b-id", shared.name, [
        static("q1", "pod-1", subscriber("u", [])),
        static("q2", "pod-2", subscriber("u", [])),
    ])
    # both pods of a's group restart: new member ids, owning nothing
    a_second = a._coordinator._perform_assignment("a-id", shared.name, [
        SimpleNamespace(member_id="a-id", group_instance_id=None,
                        metadata=join_metadata(a).encode()),
        static("p1-new", "pod-1", subscriber("t", [])),
        static("p2-new", "pod-2", subscriber("t", [])),
    ])
    got = assigned(a_second)
    assert got["p1-new"] == {"t": [4, 5]} and got["p2-new"] == {"t": [2, 3]}


def test_a_closed_consumer_leaves_no_state_behind() -> None:
    """State is keyed weakly by the coordinator: it goes when the consumer goes."""
    shared = CooperativeBalancedStickyAssignor()
    c = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(2, 5), group_id="g",
                      enable_auto_commit=False, partition_assignment_strategy=[shared])
    c.subscribe(["t"])
    receive(c, shared.name, [0], 3)
    assert len(shared._states) == 1
    c.close()
    del c
    gc.collect()
    assert len(shared._states) == 0


# --- aiokafka: the same instance behind the wrapper, found through aiokafka's frames ---


class AioCoordinator:
    """The shape of aiokafka's GroupCoordinator where it calls the assignor."""

    def __init__(self, assignors: tuple[AIOKafkaAssignor, ...]) -> None:
        self._assignors = assignors

    def _on_join_complete(self, generation: int, owned: list[int]) -> None:
        for assignor in self._assignors:
            assignor.on_assignment(SimpleNamespace(assignment=[("t", owned)]))


class AioRebalance:
    """aiokafka's per-rebalance helper: calls metadata(), holds the coordinator."""

    def __init__(self, coordinator: AioCoordinator) -> None:
        self._coordinator = coordinator
        self._assignors = coordinator._assignors

    def perform_group_join(self) -> list[bytes]:
        return [assignor.metadata({"t"}) for assignor in self._assignors]


def test_aiokafka_consumers_sharing_a_wrapped_instance_stay_apart(caplog: Any) -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    inner = CooperativeBalancedStickyAssignor()
    wrapper = for_aiokafka(inner)
    first, second = AioCoordinator((wrapper,)), AioCoordinator((wrapper,))
    first._on_join_complete(4, [0, 1])
    second._on_join_complete(4, [2])
    with caplog.at_level(logging.WARNING):
        subs = [ConsumerProtocolSubscription.decode(AioRebalance(c).perform_group_join()[0])
                for c in (first, second)]
    assert [[tp.partitions for tp in s.owned_partitions] for s in subs] == [[[0, 1]], [[2]]]
    assert all(s.generation_id == 4 for s in subs)
    fields = [decode_user_data(s.user_data) or {} for s in subs]
    assert [f["mode"] for f in fields] == ["eager", "eager"]
    # the same ownership in the user data, for leaders that read only version-0 fields
    owned = [cast("dict[str, list[int]]", f["owned"]) for f in fields]
    assert [sorted(p for ps in o.values() for p in ps) for o in owned] == [[0, 1], [2]]
    assert [f["generation"] for f in fields] == [4, 4]
    # the wrapped instance itself is left as it was: a kafka-python consumer may use it too
    assert inner.protocol_mode is None


def test_a_copy_is_a_new_assignor_with_the_same_configuration() -> None:
    """deepcopy and pickle (the simulator copies instances per member) keep the configuration
    and the instance's own memory, not the consumers the original serves."""
    import copy
    import pickle

    shared = CooperativeBalancedStickyAssignor(client_rack="zone-a")
    c = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(2, 5), group_id="g",
                      enable_auto_commit=False, partition_assignment_strategy=[shared])
    try:
        c.subscribe(["t"])
        receive(c, shared.name, [0], 3)
        assert len(shared._states) == 1
        for clone in (copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
            assert clone.client_rack == "zone-a" and len(clone._states) == 0
            assert clone.metadata({"t"}).owned_partitions == []
    finally:
        c.close()
