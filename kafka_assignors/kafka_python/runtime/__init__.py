"""The kafka-python 3 consumer runtime, applied only where a user asks for it.

``kafka_assignors.kafka_python.KafkaConsumer`` (a drop-in ``kafka.KafkaConsumer``) calls
:func:`apply` on itself right after kafka-python's constructor; nothing else installs it
(``docs/runtime.md``). On that consumer only (kafka-python's classes are never changed):

* joins that are never dropped and heartbeats that go on from the JoinGroup response, as
  in Java (:mod:`.join`): kafka-python 3.0.x can leave a member REBALANCING after a join
  until the broker expels it, and stops heartbeats until a poll takes up the result;
* with the cooperative protocol, members that keep reading the partitions they keep
  while the group rebalances, revoke-first hand-overs and commits that survive the
  rebalance (:mod:`.cooperative`);
* the Java consumer's rebalance metrics and our assignment-quality metrics in the
  consumer's own registry (:mod:`.metrics`; ``kafka_assignors.metrics.instrument`` gives
  these alone to a plain ``kafka.KafkaConsumer``).

Before changing anything, every kafka-python name it relies on is checked
(:mod:`.manifest`); a missing one raises :class:`RuntimeUnavailableError` naming it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any

from ..assignor import KafkaPythonAssignor
from . import cooperative, join, metrics

log = logging.getLogger("kafka_assignors")

_MARK = "_kafka_assignors_runtime"
_lock = threading.RLock()


class RuntimeUnavailableError(RuntimeError):
    """The runtime was asked for on a consumer it cannot be applied to (names what is missing)."""


#: kafka-python releases the runtime refuses: their event loop can hold a timer back for
#: minutes (removing a scheduled timer breaks the timer heap; kafka-python 3.0.2 restores it),
#: and the runtime's extra rebalance traffic made that likely enough that a member's
#: heartbeats stopped and the group waited for it until ``max_poll_interval_ms``
#: (docs/upstream.md, section 6). Later releases are not listed: they are supported.
REFUSED_RELEASES = ("3.0.0", "3.0.1")


@dataclass(frozen=True)
class RuntimeStatus:
    """What was applied to one consumer's coordinator."""

    join_fix: bool
    keep_reading: bool
    missing: tuple[str, ...] = ()
    metrics: bool = False

    def describe(self) -> str:
        parts = []
        if self.join_fix:
            parts.append("join results are never dropped, heartbeats go on from the "
                         "JoinGroup response")
        if self.keep_reading:
            parts.append("cooperative rebalances keep reading kept partitions, revoke and "
                         "commit first, and retry commits that meet the rebalance")
        elif self.join_fix and not self.missing:
            parts.append("eager protocol: no records during a rebalance, as kafka-python")
        if self.metrics:
            parts.append("rebalance metrics in consumer.metrics()")
        if self.missing:
            parts.append("not applied: kafka-python lacks " + ", ".join(self.missing))
        return "; ".join(parts) or "nothing applied"


def runtime_status(coordinator: Any) -> RuntimeStatus | None:
    """What :func:`install` or :func:`apply` did on ``coordinator`` (None if neither ran)."""
    status: RuntimeStatus | None = getattr(coordinator, _MARK, None)
    return status


def install(coordinator: Any, *, keep_reading: bool = True) -> RuntimeStatus:
    """The join fix (and, with ``keep_reading``, the cooperative part) on one kafka-python 3
    ``ConsumerCoordinator``; idempotent. Changes nothing, and says what is missing in the
    returned status, if kafka-python lacks a name the part relies on."""
    with _lock:
        done = runtime_status(coordinator)
        if done is not None and (done.keep_reading or not keep_reading):
            return done
        status = _install(coordinator, keep_reading, done)
        with contextlib.suppress(AttributeError):  # a coordinator without a __dict__
            setattr(coordinator, _MARK, status)
    return status


def _install(coordinator: Any, keep_reading: bool, done: RuntimeStatus | None) -> RuntimeStatus:
    from . import manifest  # (not at the top: ``python -m`` runs it as a script)

    lacking = manifest.missing(coordinator)
    join_lacking = tuple(n for n in lacking if _join_name(n))
    if join_lacking:
        return RuntimeStatus(False, False, join_lacking)
    if done is None or not done.join_fix:
        join.install_join_fix(coordinator)
    if not keep_reading:
        return RuntimeStatus(True, False)
    if lacking:
        return RuntimeStatus(True, False, lacking)
    cooperative.install_cooperative(coordinator)
    return RuntimeStatus(True, True)


def _join_name(qualified: str) -> bool:
    where, _, name = qualified.partition(".")
    return ((where == "ConsumerCoordinator" and name in join.NEEDS)
            or (where == "Generation" and name in join.GENERATION_NEEDS)
            or (where == "Future" and name in join.TASK_NEEDS)
            or (where == "SubscriptionState" and name in join.SUBSCRIPTION_NEEDS)
            or qualified in join.PUBLIC_NEEDS)


def kafka_python_version() -> str:
    try:
        from kafka.version import __version__
    except ImportError:
        return "unknown"
    return str(__version__)


def apply(consumer: Any) -> RuntimeStatus:
    """The whole runtime on ``consumer`` (a kafka-python 3 ``KafkaConsumer``), once.

    Checks the manifest first and raises :class:`RuntimeUnavailableError` naming what is
    missing (nothing is changed then); binds each of our assignor instances to this consumer
    (``ValueError`` if one already serves another live consumer) and tells it the consumer's
    rebalance protocol; then the metrics, the join fix and, on a cooperative consumer, the
    cooperative part. Logs one INFO line saying what it turned on.
    """
    from kafka.coordinator.assignors.abstract import RebalanceProtocol

    from ...metrics import attach
    from . import manifest

    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:
        raise RuntimeUnavailableError(
            f"kafka-assignors runtime: {type(consumer).__name__} has no kafka-python "
            "ConsumerCoordinator (_coordinator); the runtime needs kafka-python 3")
    version = kafka_python_version()
    if version in REFUSED_RELEASES:
        raise RuntimeUnavailableError(
            f"kafka-assignors runtime: kafka-python {version} can hold its heartbeats back for "
            "minutes (a timer defect fixed in kafka-python 3.0.2), and with the runtime a "
            "member then missed rebalances; upgrade kafka-python to 3.0.2 or later, or use "
            "kafka.KafkaConsumer with our assignors (kafka-python's own rebalance behaviour)")
    with _lock:
        done = runtime_status(coordinator)
        if done is not None and done.metrics:
            return done
        lacking = manifest.missing(coordinator)
        if lacking:
            raise RuntimeUnavailableError(
                f"kafka-assignors runtime: kafka-python {kafka_python_version()} lacks "
                f"{', '.join(lacking)}; the runtime cannot be applied. Use kafka.KafkaConsumer "
                "(kafka-python's own rebalance behaviour) or a kafka-python release the "
                "runtime supports (docs/runtime.md)")
        cooperative_protocol = coordinator._rebalance_protocol == RebalanceProtocol.COOPERATIVE
        ours = [a for a in coordinator._assignors.values() if isinstance(a, KafkaPythonAssignor)]
        for assignor in ours:
            assignor.bind(coordinator)  # ValueError if it serves another live consumer
        for assignor in ours:
            assignor.protocol_mode = "cooperative" if cooperative_protocol else "eager"
        # the metrics' round-trip wrapper goes under the join fix's, their pause hooks over
        # the runtime's (they measure what the consumer sees)
        group_metrics = metrics.install_events(coordinator)
        status = install(coordinator, keep_reading=cooperative_protocol)
        if group_metrics is not None:
            metrics.install_pause(coordinator, group_metrics)
            attach(consumer, group_metrics)
        status = RuntimeStatus(status.join_fix, status.keep_reading, status.missing,
                               metrics=group_metrics is not None)
        with contextlib.suppress(AttributeError):
            setattr(coordinator, _MARK, status)
    log.info("kafka-assignors runtime on consumer group %s: %s", coordinator.group_id,
             status.describe())
    return status


__all__ = ["REFUSED_RELEASES", "RuntimeStatus", "RuntimeUnavailableError", "apply", "install",
           "runtime_status"]
