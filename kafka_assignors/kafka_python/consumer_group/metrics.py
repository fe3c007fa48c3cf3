"""The rebalance metrics of a KIP-848 member, with the Java consumer's names.

The same ``consumer-coordinator-metrics`` as the classic runtime (:mod:`kafka_assignors.metrics`)
in the consumer's own registry (``consumer.metrics()``, ``metric_reporters``), fed as the
Java consumer feeds them for this protocol: a rebalance starts when the member joins or gets
a new target (JOINING, RECONCILING), succeeds when it is STABLE again, and fails when it is
fenced, leaves on a poll timeout or meets a fatal error; the listener calls are timed.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from ...metrics import GroupMetrics
from ...metrics.rebalance import ListenerKind
from .membership import MemberState

STARTS = frozenset({MemberState.JOINING, MemberState.RECONCILING})
FAILS = frozenset({MemberState.FENCED, MemberState.STALE, MemberState.FATAL})


class MemberMetrics:
    """Feeds a :class:`GroupMetrics` from the member's transitions."""

    def __init__(self, metrics: GroupMetrics) -> None:
        self.metrics = metrics

    def transition(self, old: MemberState, new: MemberState) -> None:
        if new in STARTS:
            self.metrics.rebalance_started()  # a no-op while one is in progress
        elif new is MemberState.STABLE and self.metrics.rebalance_in_progress:
            self.metrics.rebalance_succeeded()
        elif new in FAILS:
            self.metrics.rebalance_failed()

    def listener(self, kind: str) -> AbstractContextManager[None]:
        known: dict[str, ListenerKind] = {"revoked": "revoked", "assigned": "assigned",
                                          "lost": "lost"}
        return self.metrics.listener(known[kind])


def rebalance_metrics(coordinator: Any) -> MemberMetrics | None:
    """The metrics in the coordinator's registry (None with ``metrics_enabled=False``)."""
    registry = coordinator.config.get("metrics")
    if registry is None:
        return None
    prefix = coordinator.config.get("metric_group_prefix", "consumer")
    return MemberMetrics(GroupMetrics(registry, coordinator_group=f"{prefix}-coordinator-metrics"))
