"""The strategies are client-neutral; each binding runs the same one under the same name."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from kafka_assignors import aiokafka, strategies
from kafka_assignors.core.model import GroupSpec, MemberSpec, TopicSpec
from kafka_assignors.kafka_python.assignor import KafkaPythonAssignor
from kafka_assignors.kafka_python.assignors import ASSIGNORS

STRATEGIES = [getattr(strategies, n) for n in strategies.__all__
              if inspect.isclass(getattr(strategies, n))
              and issubclass(getattr(strategies, n), strategies.Strategy)
              and getattr(strategies, n) is not strategies.Strategy]


def _group() -> GroupSpec:
    members = tuple(MemberSpec(m, frozenset({"a", "b"})) for m in ("m1", "m2", "m3"))
    return GroupSpec(members, {"a": TopicSpec("a", 5), "b": TopicSpec("b", 4)})


def test_every_strategy_has_one_kafka_python_assignor_and_one_for_aiokafka() -> None:
    """12 strategies, 12 kafka-python classes, each derived from its strategy with the same
    wire name and protocols; aiokafka has a factory of the same name for each."""
    assert len(STRATEGIES) == len(ASSIGNORS) == 12
    for strategy in STRATEGIES:
        (binding,) = [a for a in ASSIGNORS if a.__mro__[1] is strategy]
        assert binding.__name__ == f"{strategy.__name__}Assignor"
        assert issubclass(binding, KafkaPythonAssignor)
        assert (binding.name, binding.cooperative, binding.broadcast) == (
            strategy.name, strategy.cooperative, strategy.broadcast)
        assert getattr(aiokafka, binding.__name__)()._inner.name == strategy.name


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s.name != "pinned"
                                      and s.name != "cooperative-pinned"],
                         ids=lambda s: s.name)
def test_a_strategy_assigns_without_any_client(strategy: type[strategies.Strategy]) -> None:
    """A strategy is a plain object: the model in, an assignment out; the binding's answer
    for the same group is the same."""
    kwargs: dict[str, Any] = {"weights": {}} if strategy.name.endswith("load-aware") else {}
    plain = strategy(**kwargs).assign_group(_group())
    (binding,) = [a for a in ASSIGNORS if a.__mro__[1] is strategy]
    assert binding(**kwargs).assign_group(_group()) == plain
    assert plain  # every member of the group got something


def test_a_strategy_needs_a_wire_name() -> None:
    class Nameless(strategies.Strategy):
        pass

    with pytest.raises(TypeError, match="wire name"):
        Nameless()
