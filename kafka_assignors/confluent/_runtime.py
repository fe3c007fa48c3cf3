"""The membership client's kafka-python runtime, installed explicitly, and its commit guard.

The bridge asks for what it needs by name instead of relying on an assignor to install
anything as a side effect:

* the membership client is :class:`kafka_assignors.kafka_python.KafkaConsumer`, whose
  constructor applies the kafka-python consumer runtime (the join fix for every strategy,
  the cooperative part too when the group runs our cooperative assignors, and the
  rebalance-event metrics the bridge forwards: :func:`membership_metrics`, :mod:`._metrics`).
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
from typing import Any

log = logging.getLogger("kafka_assignors.confluent")


def membership_metrics(client: Any) -> Any:
    """The rebalance-event metrics the runtime's ``KafkaConsumer`` records on ``client``.

    The membership client is :class:`kafka_assignors.kafka_python.KafkaConsumer`: the runtime
    (join fix; keep-reading when the group runs our cooperative assignors; rebalance metrics)
    is applied by its constructor, explicitly.  Returns its
    :class:`~kafka_assignors.metrics.GroupMetrics`, or None where it records none.
    """
    from ..kafka_python.runtime import metrics as runtime_metrics

    coordinator = getattr(client, "_coordinator", None)
    return None if coordinator is None else runtime_metrics.metrics_for(coordinator)


def guard_consumed_offsets(client: Any) -> bool:
    """Make ``client``'s record of consumed offsets always empty; True if in place.

    The client's ``SubscriptionState`` takes :class:`NoConsumedOffsets`, a subclass whose
    ``all_consumed_offsets()`` is empty (kafka-python's own class is otherwise unchanged;
    the layouts are the same, so the instance can take the subclass)."""
    subscription = getattr(client, "_subscription", None)
    own = type(subscription)
    if subscription is None or not callable(getattr(own, "all_consumed_offsets", None)):
        log.warning("confluent bridge: kafka-python's SubscriptionState has no "
                    "all_consumed_offsets(); the consumed-offsets guard is not installed")
        return False
    if not isinstance(subscription, NoConsumedOffsets):
        subscription.__class__ = _guarded(own)
    return True


class NoConsumedOffsets:
    """A membership client's ``SubscriptionState``: its positions are the listener's
    placeholders (0), never the application's progress, so it reports none consumed."""

    def all_consumed_offsets(self) -> dict[Any, Any]:
        """Nothing consumed (kafka-python's commit without offsets then commits nothing)."""
        return {}


_guarded_classes: dict[type, type] = {}


def _guarded(own: type) -> type:
    """``own`` (kafka-python's ``SubscriptionState``) with :class:`NoConsumedOffsets` first."""
    cls = _guarded_classes.get(own)
    if cls is None:
        cls = type(f"Bridged{own.__name__}", (NoConsumedOffsets, own), {})
        _guarded_classes[own] = cls
    return cls
