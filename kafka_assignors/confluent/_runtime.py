"""The membership client's kafka-python runtime, installed explicitly, and its commit guard.

The bridge asks for what it needs by name instead of relying on an assignor to install
anything as a side effect:

* :func:`install_membership_runtime`: the kafka-python consumer runtime
  (:func:`kafka_assignors.adapters.kafka_python_runtime.install`) on the membership
  client's coordinator: the join fix for every strategy (kafka-python 3.0.x can leave a
  member REBALANCING after a join), the cooperative part too when the group runs our
  cooperative assignors; and the rebalance-event metrics the bridge forwards
  (:mod:`._metrics`).
* :func:`guard_consumed_offsets`: the membership client never fetches; its listener gives
  every assigned partition the position 0 so that kafka-python looks nothing up
  (:mod:`._rebalance`).  kafka-python's "consumed offsets" (``all_consumed_offsets()``,
  what its ``commit()`` without offsets, its auto-commit, its close and the runtime's
  revoke commit would send) are therefore 0 for every partition, offsets the application
  never consumed.  The guard makes that record empty on this client, so no path of
  kafka-python's can commit it; the bridge commits only offsets it computed from what the
  application consumed or named (:class:`._offsets.Progress`, ``commit(offsets=...)``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..adapters.kafka_python import KafkaPythonAssignor

log = logging.getLogger("kafka_assignors.confluent")


def install_membership_runtime(client: Any, assignors: Sequence[Any], cooperative: bool) -> Any:
    """Install the runtime on ``client``'s coordinator; returns its rebalance-event metrics.

    Idempotent (a runtime already installed is left as it is).  Returns the
    :class:`~kafka_assignors.metrics.GroupMetrics` the kafka-python integration records the
    group's rebalances in, or None where it records none.
    """
    from ..adapters import kafka_python_runtime as runtime
    from ..adapters.kafka_python_runtime import metrics as runtime_metrics

    coordinator = getattr(client, "_coordinator", None)
    if coordinator is None:
        return None
    events = None
    if runtime.runtime_status(coordinator) is None:
        # the metrics' round-trip wrapper goes under the join fix's (installed first)
        if not runtime.opted_out() and runtime.kafka_python_version() in runtime.TESTED_VERSIONS:
            events = runtime_metrics.install_events(coordinator)
        ours = bool(assignors) and all(isinstance(a, KafkaPythonAssignor) for a in assignors)
        status = runtime.install(coordinator, keep_reading=ours and cooperative)
        if not status.join_fix and not status.opted_out:
            log.warning("confluent bridge: the kafka-python runtime is not active on the "
                        "membership client: %s", status.describe())
    return events if events is not None else runtime_metrics.metrics_for(coordinator)


def guard_consumed_offsets(client: Any) -> bool:
    """Make ``client``'s record of consumed offsets always empty; True if in place."""
    subscription = getattr(client, "_subscription", None)
    if subscription is None or not callable(getattr(subscription, "all_consumed_offsets", None)):
        log.warning("confluent bridge: kafka-python's SubscriptionState has no "
                    "all_consumed_offsets(); the consumed-offsets guard is not installed")
        return False

    def all_consumed_offsets() -> dict[Any, Any]:
        # the positions are the listener's placeholders (0), never the application's progress
        return {}

    subscription.all_consumed_offsets = all_consumed_offsets
    return True
