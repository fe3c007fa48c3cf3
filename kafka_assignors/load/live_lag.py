"""Live lag as partition weights: log end offset minus the group's committed offset.

The leader reads both at assignment time with a short-lived admin client built
from the consumer's own connection settings - the same bootstrap servers,
security protocol, SASL and SSL settings (every ``ssl_*`` and ``sasl_*`` key the
consumer's connections use), never a weaker connection: if a security setting
cannot be carried over, the source fails and the leader falls back.

kafka-python does not hand an assignor the consumer's configuration; the
``ConsumerCoordinator`` that calls the assignor holds it, so it is read from
the coordinator its assignor is bound to (``kafka_assignors.kafka_python.KafkaConsumer``
binds them), or passed explicitly with ``consumer=``.  The lookup runs in
a worker thread bounded by ``timeout_s``: the consumer's own network loop is
waiting on the assignment and must not be blocked for long.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..core.model import TopicPartition
from .connection import (
    CONNECTION_KEYS,
    WeightSourceError,
    bounded,
    client_config,
    consumer_settings,
    helper_client,
    resolve_settings,
)
from .sources import WeightContext

__all__ = ["CONNECTION_KEYS", "LiveLag", "WeightSourceError", "admin_config",
           "consumer_settings"]


def admin_config(connection: Mapping[str, Any], accepted: Mapping[str, Any],
                 timeout_ms: int) -> dict[str, Any]:
    """Admin client settings: the consumer's connection settings, and only those."""
    return client_config(connection, accepted, timeout_ms, "load-aware")


class LiveLag:
    """Weights = the group's lag per partition, read by the leader at assignment time.

    Partitions the group never committed weigh the mean of the others.
    ``consumer`` may give ``{"connection": {...}, "group_id": ...}`` explicitly
    (for clients whose coordinator cannot be found); ``admin_factory`` replaces
    ``kafka.admin.KafkaAdminClient`` (tests).
    """

    description = "live group lag"

    def __init__(
        self,
        timeout_s: float = 5.0,
        *,
        consumer: Mapping[str, Any] | None = None,
        admin_factory: Callable[..., Any] | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.timeout_s = timeout_s
        self._consumer = dict(consumer) if consumer is not None else None
        self._admin_factory = admin_factory

    def weights(
        self, partitions: Collection[TopicPartition], context: WeightContext
    ) -> Mapping[TopicPartition, float]:
        settings = resolve_settings(self._consumer, context)
        if not settings.get("group_id") or not settings.get("connection"):
            raise WeightSourceError("the consumer's connection settings and group id are unknown")
        factory, accepted = helper_client(self._admin_factory, _admin_class)
        config = admin_config(settings["connection"], accepted, int(self.timeout_s * 1000))
        return bounded(self.timeout_s,
                       lambda: _read_lag(factory, config, settings, list(partitions)),
                       "kafka-assignors-live-lag")


def _admin_class() -> Any:
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient


def _retrying(deadline: float, call: Callable[[], Any]) -> Any:
    """``call()``, again after retriable errors (coordinator moving, leader elections)."""
    while True:
        try:
            return call()
        except Exception as exc:
            if not getattr(exc, "retriable", False) or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def _read_lag(
    factory: Callable[..., Any],
    config: Mapping[str, Any],
    settings: Mapping[str, Any],
    partitions: list[TopicPartition],
) -> dict[TopicPartition, float]:
    from kafka.admin import OffsetSpec
    from kafka.protocol.consumer import IsolationLevel
    from kafka.structs import TopicPartition as KafkaTopicPartition

    tps = [KafkaTopicPartition(t, p) for t, p in partitions]
    group_id = settings["group_id"]
    isolation = IsolationLevel.build_from(settings.get("isolation_level", "read_uncommitted"))
    deadline = time.monotonic() + config["request_timeout_ms"] / 1000
    admin = factory(**config)
    try:
        committed = _retrying(deadline, lambda: admin.list_group_offsets({group_id: tps}))
        ends = _retrying(deadline, lambda: admin.list_partition_offsets(
            dict.fromkeys(tps, OffsetSpec.LATEST), isolation_level=isolation,
            timeout_ms=config["request_timeout_ms"]))
    finally:
        admin.close()
    committed = committed.get(group_id, {})
    lag: dict[TopicPartition, float] = {}
    for tp in tps:
        done, end = committed.get(tp), ends.get(tp)
        if done is None or end is None or done.offset < 0:
            continue  # never committed: weighs the mean of the others
        lag[TopicPartition(tp.topic, tp.partition)] = float(max(0, end.offset - done.offset))
    return lag
