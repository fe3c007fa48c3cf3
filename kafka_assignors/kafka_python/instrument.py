"""``kafka_assignors.metrics.instrument`` for kafka-python consumers (registered on import of
:mod:`kafka_assignors.kafka_python`): the runtime's metrics feature alone
(:mod:`.runtime.metrics`), on kafka-python 3."""

from __future__ import annotations

from typing import Any

from kafka import KafkaConsumer as _KafkaConsumer

from ..metrics import Binding, GroupMetrics, attach, metrics_of, register
from .compat import KAFKA_PYTHON_2


def instrument(consumer: Any) -> GroupMetrics | None:
    """The rebalance metrics on a kafka-python ``KafkaConsumer`` (see
    ``kafka_assignors.metrics.instrument``)."""
    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:
        raise TypeError(f"instrument(): {type(consumer).__name__} has no group coordinator")
    if KAFKA_PYTHON_2:
        raise RuntimeError("kafka_assignors.metrics.instrument needs kafka-python 3")
    from .runtime import manifest
    from .runtime import metrics as runtime_metrics

    done = metrics_of(consumer)
    if done is not None:
        return done
    missing = manifest.missing(coordinator, {"metrics"})
    if missing:
        raise RuntimeError("kafka_assignors.metrics.instrument: this kafka-python lacks "
                           f"{', '.join(missing)}")
    found = runtime_metrics.install(coordinator)
    if found is not None:
        attach(consumer, found)
    return found


register(_KafkaConsumer, Binding("a kafka-python KafkaConsumer", instrument))
