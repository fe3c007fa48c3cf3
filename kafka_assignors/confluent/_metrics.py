"""The bridge's metrics: Java's rebalance metrics and ours, for the confluent-kafka consumer.

The group's rebalances are the membership client's (a kafka-python ``KafkaConsumer``), so
its rebalance start, success and failure, and the leader's figures, are recorded by the
kafka-python integration (:mod:`kafka_assignors.kafka_python.runtime.metrics`,
beneath its join fix) in that client's registry.  What the application sees differs: its
rebalance callbacks run later, on its own thread, and its partitions pause in librdkafka,
not in the membership client.  So the bridge keeps a :class:`GroupMetrics` of its own,
the one users read: the membership client's rebalance events and leader figures are
forwarded into it, and the bridge records the callbacks and the kept-partition pause there
itself (:mod:`._rebalance`).  The membership client's own listener and pause figures (of
the bridge's internal listener) stay in its private registry, unread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..metrics import GroupMetrics, metrics_of

log = logging.getLogger("kafka_assignors.confluent")

#: The GroupMetrics methods the kafka-python integration calls for the group's events.
FORWARDED = ("rebalance_started", "rebalance_succeeded", "rebalance_failed", "record_leader")


def bridge_metrics(membership_client: Any, client_id: str,
                   clock: Callable[[], float] = time.monotonic,
                   source: GroupMetrics | None = None) -> GroupMetrics:
    """The bridged consumer's metrics, fed by ``membership_client``'s group events
    (``source``: where the runtime records them, found on the client when not given)."""
    own = GroupMetrics(tags={"client-id": client_id}, clock=clock)
    if source is None:
        source = metrics_of(membership_client)
    if source is None:
        log.warning("confluent bridge: the membership client records no rebalance events "
                    "(kafka-python's own assignors, or a kafka-python the integration is not "
                    "tested on); consumer.metrics() has the callback latencies and "
                    "kept-partition pauses only")
        return own
    for name in FORWARDED:
        setattr(source, name, _also(getattr(source, name), getattr(own, name)))
    return own


def _also(first: Callable[..., None], then: Callable[..., None]) -> Callable[..., None]:
    def both(*args: Any) -> None:
        first(*args)
        then(*args)

    return both
