"""``patch_rejoin_hang``: the join and heartbeat fixes of :mod:`.runtime` for any
consumer.

``kafka_assignors.kafka_python.KafkaConsumer`` applies the whole runtime (docs/runtime.md).
This function gives the join fix alone to a ``kafka.KafkaConsumer`` already built (with any
strategies, kafka-python's own ``range``, ``sticky``, ... included): kafka-python 3.0.x can
leave a member REBALANCING after a join until the broker expels it.

Usage::

    consumer = KafkaConsumer(..., partition_assignment_strategy=[RangePartitionAssignor])
    patch_rejoin_hang(consumer)
"""

from __future__ import annotations

import logging
from typing import Any

from .compat import KAFKA_PYTHON_2

log = logging.getLogger("kafka_assignors")


def patch_rejoin_hang(consumer: Any) -> bool:
    """Make ``consumer`` never drop a join in progress; True if the fix is in place.

    Idempotent; with ``kafka_assignors.metrics.instrument`` in either order, the coordinator
    gets the same class. Returns False (and logs why) on a release the runtime refuses
    (``REFUSED_RELEASES``, as ``kafka_assignors.kafka_python.KafkaConsumer`` refuses it) and
    for a consumer whose coordinator does not look like kafka-python 3's, so upgrading
    kafka-python cannot break a consumer that calls this.
    """
    if KAFKA_PYTHON_2:  # the hang is kafka-python 3's (one IO thread runs the join)
        log.info("patch_rejoin_hang: not needed on kafka-python 2.x; not patched")
        return False
    from .runtime import install  # built on kafka-python 3's internals

    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:
        log.warning("patch_rejoin_hang: %s has no kafka-python 3 coordinator; not patched",
                    type(consumer).__name__)
        return False
    status = install(coordinator, keep_reading=False)
    if not status.join_fix:
        log.warning("patch_rejoin_hang: %s not patched: %s", type(consumer).__name__,
                    "; ".join(status.missing))
    return status.join_fix
