"""An opt-in workaround for a kafka-python 3.0.x rebalance hang (README, Known limits).

``ConsumerCoordinator.need_rejoin()`` turns False as soon as the JoinGroup
request is built (after a subscription change) or as soon as the leader has
computed its assignment (after a partition-count change).  If the
JoinGroup/SyncGroup round trip then spans more than one ``poll()``, the next
poll never waits for the join in flight again: heartbeats stay disabled and
the coordinator expels the member, which stays in REBALANCING.  The fix is for
a join in progress (the coordinator's ``rejoining`` flag) to count as "needs
rejoin", so every poll keeps driving it to the end.

Usage::

    consumer = KafkaConsumer(..., partition_assignment_strategy=[...])
    patch_rejoin_hang(consumer)
    consumer.subscribe([...])
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("kafka_assignors")

_MARK = "_kafka_assignors_rejoin_patch"


def patch_rejoin_hang(consumer: Any) -> bool:
    """Make ``consumer`` keep driving a join in progress; True if the patch is in place.

    Idempotent.  Returns False (and logs why) for a consumer whose coordinator
    does not look like kafka-python 3's, so upgrading kafka-python cannot break
    a consumer that calls this.
    """
    coordinator = getattr(consumer, "_coordinator", None)
    original = getattr(coordinator, "need_rejoin", None)
    if coordinator is None or original is None or not hasattr(coordinator, "rejoining"):
        log.warning("patch_rejoin_hang: %s has no kafka-python 3 coordinator with a "
                    "'rejoining' flag; not patched", type(consumer).__name__)
        return False
    if getattr(original, _MARK, False):
        return True

    def need_rejoin() -> bool:
        return bool(original() or coordinator.rejoining)

    setattr(need_rejoin, _MARK, True)
    coordinator.need_rejoin = need_rejoin
    log.debug("patch_rejoin_hang: a join in progress now counts as needing a rejoin")
    return True
