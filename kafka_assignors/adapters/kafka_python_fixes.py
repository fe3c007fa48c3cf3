"""``patch_rejoin_hang``: the join and heartbeat fixes of :mod:`.kafka_python_runtime` for any
consumer.

Consumers whose ``partition_assignment_strategy`` holds one of our assignors get the
whole runtime without calling anything. This function gives the join fix alone to a
consumer that does not (kafka-python's own ``range``, ``sticky``, ...): kafka-python
3.0.x can leave such a member REBALANCING after a join until the broker expels it
(README, Known limits).

Usage::

    consumer = KafkaConsumer(..., partition_assignment_strategy=[RangePartitionAssignor])
    patch_rejoin_hang(consumer)
"""

from __future__ import annotations

import logging
from typing import Any

from .kafka_python_runtime import install

log = logging.getLogger("kafka_assignors")


def patch_rejoin_hang(consumer: Any) -> bool:
    """Make ``consumer`` never drop a join in progress; True if the fix is in place.

    Idempotent. Returns False (and logs why) for a consumer whose coordinator does not
    look like kafka-python 3's, so upgrading kafka-python cannot break a consumer that
    calls this.
    """
    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:
        log.warning("patch_rejoin_hang: %s has no kafka-python 3 coordinator; not patched",
                    type(consumer).__name__)
        return False
    status = install(coordinator, keep_reading=False)
    if status.untested_version is not None:
        log.warning("patch_rejoin_hang: %s", status.describe())
    elif not status.join_fix and not status.opted_out:
        log.warning("patch_rejoin_hang: %s's coordinator lacks %s; not patched",
                    type(consumer).__name__, ", ".join(status.missing))
    return status.join_fix
