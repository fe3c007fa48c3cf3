"""The metrics layer's registry: each client binding registers the consumer class it serves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafka_assignors.metrics import Binding, GroupMetrics, _registry, instrument, register


@pytest.fixture
def registry() -> Iterator[None]:
    saved = dict(_registry._bindings)
    try:
        yield
    finally:
        _registry._bindings.clear()
        _registry._bindings.update(saved)


class Client:
    pass


class Ours(Client):
    pass


def test_a_binding_serves_subclasses_and_the_nearest_class_wins(registry: None) -> None:
    """A subclass of a client's consumer is served by that client's binding, unless one is
    registered for a class nearer in its MRO."""
    made: list[str] = []

    def recording(name: str) -> Any:
        def instrument_(consumer: Any) -> GroupMetrics:
            made.append(name)
            return GroupMetrics()
        return instrument_

    register(Client, Binding("a test Client", recording("client")))
    instrument(Ours())
    register(Ours, Binding("a test Ours", recording("ours")))
    instrument(Ours())
    instrument(Client())
    assert made == ["client", "ours", "client"]


def test_an_object_of_no_client_is_refused_naming_what_is_taken() -> None:
    """The error lists every registered binding's consumer."""
    with pytest.raises(TypeError, match=r"kafka-python KafkaConsumer.*not object"):
        instrument(object())


def test_the_bindings_register_themselves_on_import() -> None:
    """kafka-python's (imported with kafka_assignors) and aiokafka's (its package) are there."""
    import aiokafka
    import kafka

    import kafka_assignors.aiokafka  # noqa: F401

    assert _registry.binding_for(kafka.KafkaConsumer.__new__(kafka.KafkaConsumer)) is not None
    consumer = aiokafka.AIOKafkaConsumer.__new__(aiokafka.AIOKafkaConsumer)
    assert _registry.binding_for(consumer) is not None


def test_a_clients_binding_package_is_found_by_the_clients_import_name() -> None:
    """A consumer class from package ``aiokafka`` leads to ``kafka_assignors.aiokafka``; one
    from a package we have no binding for leads nowhere (nothing imported)."""
    aio = type("Consumer", (), {"__module__": "aiokafka.consumer.consumer"})
    other = type("Consumer", (), {"__module__": "nosuchclient.consumer"})
    assert _registry._import_bindings(aio)
    assert not _registry._import_bindings(other)
