"""Where partition weights come from: a fixed mapping, a function, a load profile file, live lag.

A weight source is anything with a ``description`` (for logs) and a
``weights(partitions, context)`` method returning ``{TopicPartition: float}``.
The leader calls it once per rebalance; whatever it raises, the leader logs a
warning and assigns by partition count instead, so a rebalance never fails
because of weights.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..core.model import TopicPartition
from .profile import LoadProfile, read_profile


@dataclass(frozen=True, slots=True)
class WeightContext:
    """What the leader knows when it asks for weights."""

    #: The client library's cluster metadata object.
    cluster: Any = None
    #: The consumer's own connection settings and group, when the client binding found them.
    consumer: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class WeightSource(Protocol):
    @property
    def description(self) -> str: ...

    def weights(
        self, partitions: Collection[TopicPartition], context: WeightContext
    ) -> Mapping[TopicPartition, float]: ...


class FixedWeights:
    """Weights given up front: ``{TopicPartition or (topic, partition): weight}``."""

    description = "fixed weights"

    def __init__(self, weights: Mapping[Any, float]) -> None:
        self._weights = {TopicPartition(*tp): w for tp, w in weights.items()}

    def weights(
        self, partitions: Collection[TopicPartition], context: WeightContext
    ) -> Mapping[TopicPartition, float]:
        return self._weights


class FunctionWeights:
    """Weights from a function called at each rebalance with the partitions to weigh."""

    def __init__(
        self, function: Callable[[Collection[TopicPartition]], Mapping[Any, float]]
    ) -> None:
        self._function = function
        self.description = f"weight function {getattr(function, '__qualname__', function)!r}"

    def weights(
        self, partitions: Collection[TopicPartition], context: WeightContext
    ) -> Mapping[TopicPartition, float]:
        return {TopicPartition(*tp): w for tp, w in self._function(partitions).items()}


class ProfileFile:
    """Weights from a load profile file (:mod:`.profile`), re-read at every rebalance.

    The pipeline can rewrite the file at any time; the next rebalance uses it.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.description = f"load profile {self.path}"

    def weights(
        self, partitions: Collection[TopicPartition], context: WeightContext
    ) -> Mapping[TopicPartition, float]:
        return read_profile(self.path).weights()


def as_weight_source(weights: object) -> WeightSource:
    """Turn what a user passes as ``weights=`` into a weight source."""
    if isinstance(weights, WeightSource):
        return weights
    if isinstance(weights, Mapping):
        return FixedWeights(weights)
    if isinstance(weights, LoadProfile):
        return FixedWeights(weights.weights())
    if isinstance(weights, str | Path):
        return ProfileFile(weights)
    if callable(weights):
        return FunctionWeights(weights)
    raise TypeError(
        "weights must be a mapping {TopicPartition: float}, a function of the partitions, "
        f"a load profile path or a weight source; got {type(weights).__name__}"
    )
