"""Our assignors for aiokafka consumers: same algorithms, same wire names, same wire format.

Usage (every assignor of ``kafka_assignors`` is here under the same name)::

    from kafka_assignors.aiokafka import BalancedStickyAssignor
    AIOKafkaConsumer(..., partition_assignment_strategy=(BalancedStickyAssignor(),))

aiokafka members send the same version-3 subscription as kafka-python members,
so both can share a group and either can be the leader.  aiokafka has no
cooperative protocol, so a plain ``aiokafka.AIOKafkaConsumer`` always runs eager
(the cooperative strategies still work in a group with them: the leader knows
which members still hold partitions).  Cooperative rebalancing is one line away:
build the consumer with :class:`AIOKafkaConsumer` from this module (aiokafka's
constructor) and our ``Cooperative...`` assignors (:mod:`.runtime`).  Requires
the ``aiokafka`` extra.

The strategies are :mod:`kafka_assignors.strategies`; an :class:`AIOKafkaAssignor` runs
one through the kafka-python binding's member code (:mod:`kafka_assignors.kafka_python`:
the version-3 subscription, owned partitions, the leader's wire path), which speaks the
same classic-protocol wire format, over aiokafka's coordinator. Its rebalance metrics glue
is :mod:`.rebalance_metrics`.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any, cast

from aiokafka import AIOKafkaConsumer as _AIOKafkaConsumer
from aiokafka.coordinator.assignors.abstract import (
    AbstractPartitionAssignor as _AIOAbstractAssignor,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from ..kafka_python.assignor import KafkaPythonAssignor
from ..kafka_python.assignors import ASSIGNORS
from ..kafka_python.assignors import BalancedStickyAssignor as _BalancedSticky
from ..kafka_python.assignors import (
    CooperativeBalancedStickyAssignor as _CooperativeBalancedSticky,
)
from ..metrics import Binding, register
from ..protocol.leader import MODE_EAGER
from . import rebalance_metrics
from .runtime import AIOKafkaConsumer

log = logging.getLogger("kafka_assignors")

# kafka_assignors.metrics.instrument / the exporters, for aiokafka consumers (ours included)
register(_AIOKafkaConsumer, Binding("an aiokafka AIOKafkaConsumer", rebalance_metrics.instrument,
                                    rebalance_metrics.consumer_metrics))

__all__ = [
    "AIOKafkaAssignor",
    "AIOKafkaConsumer",
    "BalancedStickyAssignor",
    "CooperativeBalancedStickyAssignor",
    "for_aiokafka",
    "metrics",
]


class AIOKafkaAssignor(_AIOAbstractAssignor):  # type: ignore[misc]
    """Runs one of our kafka-python assignors inside an aiokafka consumer."""

    def __init__(self, inner: KafkaPythonAssignor) -> None:
        # ``inner`` keeps one consumer's state: one wrapper (and inner instance) per consumer
        self._inner = inner
        #: the aiokafka ``GroupCoordinator`` this wrapper serves, once bound to it (its
        #: ``generation`` dates the partitions this member announces)
        self._coordinator: weakref.ReferenceType[Any] | None = None

    def bind(self, coordinator: Any) -> None:
        """Read the generation from ``coordinator`` (our ``AIOKafkaConsumer`` and
        ``kafka_assignors.metrics.instrument`` call this once the coordinator is built)."""
        self._inner.bind(coordinator)
        self._coordinator = weakref.ref(coordinator)

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def cooperative(self) -> bool:
        """Whether the strategy speaks the cooperative protocol (Java's
        ``supportedProtocols`` includes COOPERATIVE)."""
        return bool(self._inner.cooperative)

    #: The protocol this member announces: eager on a plain aiokafka consumer;
    #: :class:`~.runtime.AIOKafkaConsumer` sets it from the protocol it runs.
    protocol_mode: str = MODE_EAGER

    @property
    def last_report(self) -> Any:
        return self._inner.last_report

    def metadata(self, topics: Any) -> bytes:
        # a plain aiokafka consumer has no cooperative protocol: it runs eager
        sub: ConsumerProtocolSubscription = self._inner.subscription(topics, self.protocol_mode)
        return bytes(sub.encode())

    def on_assignment(self, assignment: Any) -> None:
        # aiokafka does not pass the generation; a bound coordinator holds it
        coordinator = self._coordinator() if self._coordinator is not None else None
        generation = getattr(coordinator, "generation", None)
        parts = [(topic, list(partitions)) for topic, partitions in assignment.assignment]
        self._inner.on_assignment(
            ConsumerProtocolAssignment(0, parts, b""),
            generation if isinstance(generation, int) else -1,
        )

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._inner.assign(cluster, _full_members(members))
        return result


def _full_members(decoded: Mapping[str, Any]) -> list[Any]:
    """Members as aiokafka's leader decoded them: version-0 fields (topics, user data).

    Our members carry their owned partitions, generation and rack in the user data too,
    so nothing of ours is lost; another client's member counts as owning nothing.
    """
    return [SimpleNamespace(member_id=m, group_instance_id=None, metadata=_v0(md))
            for m, md in decoded.items()]


def _v0(md: Any) -> Any:
    return SimpleNamespace(topics=list(md.subscription), user_data=md.user_data)


def metrics(consumer: Any) -> dict[str, dict[str, float]]:
    """The consumer's rebalance and assignment metrics: ``{group: {name: value}}``.

    The shape of kafka-python's ``KafkaConsumer.metrics()``: Java's names in
    ``consumer-coordinator-metrics`` and ours in ``kafka-assignors-assignment-metrics``
    (see the README).  Recorded once ``kafka_assignors.metrics.instrument(consumer)`` was
    called (before or after ``start()``); callable at any time (values empty or -1 until
    the first rebalance is recorded).  It also attaches the metrics to ``consumer`` as
    ``_kafka_assignors_metrics``, where the Prometheus and OpenTelemetry exporters find them.
    """
    return rebalance_metrics.consumer_metrics(consumer).values()


def for_aiokafka(assignor: type[KafkaPythonAssignor] | KafkaPythonAssignor) -> AIOKafkaAssignor:
    """Wrap any of our (or your own ``make_assignor``) kafka-python assignors for aiokafka."""
    if isinstance(assignor, type):
        return AIOKafkaAssignor(assignor())
    # KafkaPythonAssignor derives from an untyped class, which defeats narrowing
    return AIOKafkaAssignor(cast(KafkaPythonAssignor, assignor))


def BalancedStickyAssignor(**kwargs: Any) -> AIOKafkaAssignor:
    """``balanced-sticky`` for aiokafka."""
    return AIOKafkaAssignor(_BalancedSticky(**kwargs))


def CooperativeBalancedStickyAssignor(**kwargs: Any) -> AIOKafkaAssignor:
    """``cooperative-balanced-sticky`` for aiokafka (cooperative with our
    :class:`AIOKafkaConsumer`; eager with aiokafka's own)."""
    return AIOKafkaAssignor(_CooperativeBalancedSticky(**kwargs))


def __getattr__(name: str) -> Any:
    """Every other assignor exported by ``kafka_assignors`` under the same name, for aiokafka.

    ``from kafka_assignors.aiokafka import LoadAwareAssignor`` gives a factory that
    takes the same arguments as the kafka-python class.
    """
    cls = next((c for c in ASSIGNORS if c.__name__ == name), None)
    if cls is not None:

        def factory(*args: Any, **kwargs: Any) -> AIOKafkaAssignor:
            return AIOKafkaAssignor(cls(*args, **kwargs))

        factory.__name__ = name
        factory.__doc__ = f"``{cls.name}`` for aiokafka."
        return factory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
