"""One assignor instance keeps one consumer's state: pass the class, or one instance per consumer.

kafka-python (and aiokafka) use an instance from ``partition_assignment_strategy`` as is;
consumers of one process sharing it would report each other's owned partitions, so a
cooperative leader could hand over a partition still held. Without reading the caller's
stack frames an instance cannot tell its callers apart: the runtime's ``KafkaConsumer``
refuses a shared instance, a plain consumer's sharing is reported as soon as it shows.
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
from kafka_assignors.aiokafka import AIOKafkaAssignor, for_aiokafka
from kafka_assignors.kafka_python import KafkaConsumer as RuntimeConsumer
from kafka_assignors.protocol.user_data import decode_user_data

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


def _consumer(strategy: Any, cls: Any = KafkaConsumer) -> Any:
    """A real kafka-python consumer (nothing connects)."""
    c = cls(bootstrap_servers="127.0.0.1:1", api_version=(2, 5), group_id="g",
            enable_auto_commit=False, partition_assignment_strategy=[strategy])
    c.subscribe(["t"])
    return c


@pytest.fixture
def consumers() -> Iterator[tuple[KafkaConsumer, KafkaConsumer]]:
    """Two real kafka-python consumers given the class: one instance each."""
    made = [_consumer(CooperativeBalancedStickyAssignor) for _ in range(2)]
    try:
        yield made[0], made[1]
    finally:
        for c in made:
            c.close()


def ours(consumer: KafkaConsumer) -> Any:
    return next(iter(consumer._coordinator._assignors.values()))


def receive(consumer: KafkaConsumer, name: str, partitions: list[int], generation: int) -> None:
    """The end of a rebalance as kafka-python runs it: SyncGroup's assignment arrives."""
    raw = ConsumerProtocolAssignment(0, [("t", partitions)], b"").encode()
    run(consumer._coordinator._on_join_complete_async(generation, "id", name, raw))


def join_metadata(consumer: KafkaConsumer) -> Any:
    """What the consumer's JoinGroup request carries (kafka-python's group_protocols())."""
    [(_name, subscription)] = consumer._coordinator.group_protocols()
    return subscription


def test_consumers_given_the_class_report_only_their_own_partitions(
    consumers: tuple[KafkaConsumer, KafkaConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = consumers
    name = CooperativeBalancedStickyAssignor.name
    assert ours(a) is not ours(b)
    receive(a, name, [0, 1], 5)
    receive(b, name, [2, 3], 5)

    sub_a, sub_b = join_metadata(a), join_metadata(b)
    assert [(tp.topic, tp.partitions) for tp in sub_a.owned_partitions] == [("t", [0, 1])]
    assert [(tp.topic, tp.partitions) for tp in sub_b.owned_partitions] == [("t", [2, 3])]

    # a leads the next generation through kafka-python's own _perform_assignment
    coordinator = a._coordinator
    monkeypatch.setattr(coordinator._cluster, "partitions_for_topic",
                        lambda topic: set(range(PARTITIONS)) if topic == "t" else None)
    coordinator._generation = Generation(6, "a-id", name)
    members = [
        SimpleNamespace(member_id="a-id", group_instance_id=None, metadata=sub_a.encode()),
        SimpleNamespace(member_id="b-id", group_instance_id=None, metadata=sub_b.encode()),
    ]
    result = coordinator._perform_assignment("a-id", name, members)
    # nothing moves and nothing waits: each keeps exactly what it holds
    assert assigned(result) == {"a-id": {"t": [0, 1]}, "b-id": {"t": [2, 3]}}
    assert ours(a).last_report.moved == 0 and ours(a).last_report.pending_second_round == 0
    # no user data: the broker refuses to convert a classic group to a KIP-848 consumer
    # group (an online upgrade) while any assignment carries some
    assert all(bytes(a.user_data or b"") == b"" for a in result.values())


class _CoordinatorLike:
    """Something whose method calls the assignor with locals named like a coordinator's
    (``self`` holding ``_assignors``, ``generation``): the old frame walk keyed state on it."""

    def __init__(self, assignor: Any) -> None:
        self._assignors = {assignor.name: assignor}

    def complete(self, generation: int, partitions: list[int]) -> None:
        for assignor in self._assignors.values():
            assignor.on_assignment(ConsumerProtocolAssignment(0, [("t", partitions)], b""),
                                   generation)


def test_an_instance_keeps_its_state_whoever_calls_it() -> None:
    """State is the instance's own, not looked up from the caller: an assignment taken up
    inside one caller is announced from any other."""
    assignor = CooperativeBalancedStickyAssignor()
    _CoordinatorLike(assignor).complete(7, [1, 3])
    sub = assignor.metadata({"t"})
    assert [(tp.topic, tp.partitions) for tp in sub.owned_partitions] == [("t", [1, 3])]
    assert sub.generation_id == 7


def test_the_runtime_refuses_an_instance_serving_another_live_consumer() -> None:
    """kafka_assignors.kafka_python.KafkaConsumer binds each instance to its consumer: a second
    live consumer given the same instance gets a ValueError naming the fix."""
    shared = CooperativeBalancedStickyAssignor()
    first = _consumer(shared, RuntimeConsumer)
    try:
        with pytest.raises(ValueError, match="Pass the class"):
            _consumer(shared, RuntimeConsumer)
    finally:
        first.close()
    del first
    gc.collect()
    again = _consumer(shared, RuntimeConsumer)  # the first consumer is gone: free again
    again.close()


def test_a_plain_shared_instance_is_reported_as_soon_as_it_shows(caplog: Any) -> None:
    """Without the runtime an instance cannot tell its consumers apart; two different
    assignments for one generation say it serves several: one ERROR naming the fix."""
    shared = CooperativeBalancedStickyAssignor()
    a, b = _consumer(shared), _consumer(shared)
    try:
        with caplog.at_level(logging.ERROR, logger="kafka_assignors"):
            receive(a, shared.name, [0, 1], 5)
            receive(b, shared.name, [2, 3], 5)
            receive(a, shared.name, [0, 1], 6)
            receive(b, shared.name, [2, 3], 6)
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR
                  and r.name == "kafka_assignors"]
        assert len(errors) == 1 and "one instance per consumer" in errors[0]
    finally:
        a.close()
        b.close()


def test_one_consumer_taking_up_its_assignments_logs_no_error(caplog: Any) -> None:
    c = _consumer(CooperativeBalancedStickyAssignor)
    try:
        with caplog.at_level(logging.ERROR, logger="kafka_assignors"):
            receive(c, CooperativeBalancedStickyAssignor.name, [0, 1], 5)
            receive(c, CooperativeBalancedStickyAssignor.name, [0, 1, 2], 6)
        assert not [r for r in caplog.records
                    if r.levelno >= logging.ERROR and r.name == "kafka_assignors"]
    finally:
        c.close()


def subscriber(topic: str, owned: list[int], generation: int = 5) -> bytes:
    """A member's encoded subscription (built on its own instance, as another process would)."""
    other = CooperativeBalancedStickyAssignor()
    if owned:
        other.on_assignment(ConsumerProtocolAssignment(0, [(topic, owned)], b""), generation)
    return bytes(other.metadata({topic}).encode())


def static(member_id: str, instance_id: str, metadata: bytes) -> Any:
    return SimpleNamespace(member_id=member_id, group_instance_id=instance_id, metadata=metadata)


def test_each_consumer_has_its_own_leader_memory(
    consumers: tuple[KafkaConsumer, KafkaConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two leaders in one process, of two groups whose static members have the same
    instance ids (say, pod names): each remembers its own group's partitions."""
    a, b = consumers
    name = CooperativeBalancedStickyAssignor.name
    for c in (a, b):
        monkeypatch.setattr(c._coordinator._cluster, "partitions_for_topic",
                            lambda topic: set(range(6)) if topic in ("t", "u") else None)
    receive(a, name, [0, 1], 5)
    a_first = a._coordinator._perform_assignment("a-id", name, [
        SimpleNamespace(member_id="a-id", group_instance_id=None,
                        metadata=join_metadata(a).encode()),
        static("p1", "pod-1", subscriber("t", [4, 5])),
        static("p2", "pod-2", subscriber("t", [2, 3])),
    ])
    assert assigned(a_first)["p1"] == {"t": [4, 5]}
    # b leads another group, on topic u, with static members of the same instance ids
    b._coordinator._perform_assignment("b-id", name, [
        static("q1", "pod-1", subscriber("u", [])),
        static("q2", "pod-2", subscriber("u", [])),
    ])
    # both pods of a's group restart: new member ids, owning nothing
    a_second = a._coordinator._perform_assignment("a-id", name, [
        SimpleNamespace(member_id="a-id", group_instance_id=None,
                        metadata=join_metadata(a).encode()),
        static("p1-new", "pod-1", subscriber("t", [])),
        static("p2-new", "pod-2", subscriber("t", [])),
    ])
    got = assigned(a_second)
    assert got["p1-new"] == {"t": [4, 5]} and got["p2-new"] == {"t": [2, 3]}


# --- aiokafka: one wrapper per consumer; instrument() binds it to read the generation ---


class AioCoordinator:
    """The shape of aiokafka's GroupCoordinator where it calls the assignor."""

    def __init__(self, assignors: tuple[AIOKafkaAssignor, ...]) -> None:
        self._assignors = assignors
        self.generation = -1

    def _on_join_complete(self, generation: int, owned: list[int]) -> None:
        self.generation = generation  # aiokafka sets it from the JoinGroup response
        for assignor in self._assignors:
            assignor.on_assignment(SimpleNamespace(assignment=[("t", owned)]))


def test_aiokafka_wrappers_announce_their_own_partitions_and_generation() -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    wrappers = [for_aiokafka(CooperativeBalancedStickyAssignor) for _ in range(2)]
    first, second = AioCoordinator((wrappers[0],)), AioCoordinator((wrappers[1],))
    for w, c in zip(wrappers, (first, second), strict=True):
        w.bind(c)  # as kafka_assignors.metrics.instrument(consumer) does once started
    first._on_join_complete(4, [0, 1])
    second._on_join_complete(4, [2])
    subs = [ConsumerProtocolSubscription.decode(w.metadata({"t"})) for w in wrappers]
    assert [[tp.partitions for tp in s.owned_partitions] for s in subs] == [[[0, 1]], [[2]]]
    assert all(s.generation_id == 4 for s in subs)
    fields = [decode_user_data(s.user_data) or {} for s in subs]
    assert [f["mode"] for f in fields] == ["eager", "eager"]
    # the same ownership in the user data, for leaders that read only version-0 fields
    owned = [cast("dict[str, list[int]]", f["owned"]) for f in fields]
    assert [sorted(p for ps in o.values() for p in ps) for o in owned] == [[0, 1], [2]]
    assert [f["generation"] for f in fields] == [4, 4]


def test_an_aiokafka_wrapper_bound_twice_is_refused() -> None:
    wrapper = for_aiokafka(CooperativeBalancedStickyAssignor())
    first, second = AioCoordinator((wrapper,)), AioCoordinator((wrapper,))
    wrapper.bind(first)
    with pytest.raises(ValueError, match=r"one .* per consumer"):
        wrapper.bind(second)


def test_a_copy_is_a_new_assignor_with_the_same_configuration() -> None:
    """deepcopy and pickle (the simulator copies instances per member) keep the configuration
    and the instance's own memory, not the consumer the original serves."""
    import copy
    import pickle

    shared = CooperativeBalancedStickyAssignor(client_rack="zone-a")
    c = _consumer(shared, RuntimeConsumer)
    try:
        receive(c, shared.name, [0], 3)
        for clone in (copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
            assert clone.client_rack == "zone-a" and clone._bound is None
            assert [tp.partitions for tp in clone.metadata({"t"}).owned_partitions] == [[0]]
            clone.bind(object.__new__(_CoordinatorLike))  # free to serve another consumer
    finally:
        c.close()
