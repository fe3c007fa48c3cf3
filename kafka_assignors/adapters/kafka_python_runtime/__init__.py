"""The kafka-python consumer runtime our assignors need, installed without being asked.

A plain ``kafka.KafkaConsumer(..., partition_assignment_strategy=[<one of ours>])`` gets,
on that consumer only (kafka-python's classes are never changed, and consumers without
our assignors are left exactly as they are):

* joins that are never dropped and heartbeats that go on from the JoinGroup response, as
  in Java (:mod:`.join`): kafka-python 3.0.x can leave a member REBALANCING after a join
  until the broker expels it, and stops heartbeats until a poll takes up the result;
* with the cooperative protocol, members that keep reading the partitions they keep
  while the group rebalances, revoke-first hand-overs and commits that survive the
  rebalance (:mod:`.cooperative`);
* the Java consumer's rebalance metrics and our assignment-quality metrics in the
  consumer's own registry, so ``consumer.metrics()`` and ``metric_reporters`` show them
  (:mod:`.metrics`; ``kafka_assignors.metrics.metrics_of(consumer)`` returns them; none
  with ``metrics_enabled=False``).

Every change wraps one of kafka-python's own coordinator methods on the instance. It is
installed when kafka-python's coordinator first asks our assignor which rebalance
protocols it supports (inside ``KafkaConsumer(...)``), only on the kafka-python releases
in :data:`TESTED_VERSIONS`, after checking every private name it relies on (otherwise it
logs one warning and changes nothing), and logs one line per consumer saying what it did,
or that it is not active there and why. Opt out for a process with the environment
variable ``KAFKA_ASSIGNORS_KAFKA_PYTHON_RUNTIME=off`` (no metrics then either: nothing of
kafka-python's is wrapped).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any

from . import cooperative, join, metrics

log = logging.getLogger("kafka_assignors")

#: The kafka-python releases the runtime is tested on (``scripts/test-kafka-python-versions.sh``
#: runs its unit tests against each); on any other it stays off and says so once.
TESTED_VERSIONS = ("3.0.0", "3.0.1", "3.0.2", "3.0.4", "3.0.5", "3.0.6", "3.0.7", "3.0.8", "3.0.9",
                   "3.0.10", "3.0.11", "3.0.12")
#: Set to ``off`` (or 0/false/no) to leave kafka-python's consumer runtime untouched.
OPT_OUT_ENV = "KAFKA_ASSIGNORS_KAFKA_PYTHON_RUNTIME"
_MARK = "_kafka_assignors_runtime"
_NOT_FOUND_MARK = "_kafka_assignors_runtime_not_found"
_lock = threading.RLock()
_warned: set[str] = set()


@dataclass(frozen=True)
class RuntimeStatus:
    """What was installed on one consumer's coordinator."""

    join_fix: bool
    keep_reading: bool
    missing: tuple[str, ...] = ()
    opted_out: bool = False
    #: the installed kafka-python, when it is not one the runtime is tested on
    untested_version: str | None = None

    def describe(self) -> str:
        if self.opted_out:
            return f"not installed ({OPT_OUT_ENV}=off)"
        if self.untested_version is not None:
            return (f"not installed: kafka-python {self.untested_version} is not a version it "
                    f"is tested on ({', '.join(TESTED_VERSIONS)})")
        parts = []
        if self.join_fix:
            parts.append("join results are never dropped, heartbeats go on from the "
                         "JoinGroup response")
        if self.keep_reading:
            parts.append("cooperative rebalances keep reading kept partitions, revoke and "
                         "commit first, and retry commits that meet the rebalance")
        elif self.join_fix and not self.missing:
            parts.append("eager protocol: no records during a rebalance, as kafka-python")
        return "; ".join(parts) or "nothing installed"


def opted_out() -> bool:
    return os.environ.get(OPT_OUT_ENV, "").strip().lower() in {"off", "0", "false", "no"}


def runtime_status(coordinator: Any) -> RuntimeStatus | None:
    """What :func:`install` did on ``coordinator`` (None if it never ran there)."""
    status: RuntimeStatus | None = getattr(coordinator, _MARK, None)
    return status


def install(coordinator: Any, *, keep_reading: bool = True) -> RuntimeStatus:
    """Install the runtime on one kafka-python 3 ``ConsumerCoordinator``; idempotent.

    ``keep_reading=False`` installs only the join fix: eager consumers (kafka-python keeps
    their assignment but returns no records while they rebalance, as eager requires) and
    :func:`patch_rejoin_hang` on consumers that do not use our assignors.
    """
    with _lock:
        done = runtime_status(coordinator)
        if done is not None and (done.keep_reading or not keep_reading or done.opted_out):
            return done
        if opted_out():
            status = RuntimeStatus(False, False, opted_out=True)
        else:
            status = _install(coordinator, keep_reading, done)
        with contextlib.suppress(AttributeError):  # a coordinator without a __dict__
            setattr(coordinator, _MARK, status)
    _log_once(coordinator, status)
    return status


def _install(coordinator: Any, keep_reading: bool, done: RuntimeStatus | None) -> RuntimeStatus:
    version = kafka_python_version()
    if version not in TESTED_VERSIONS:
        return RuntimeStatus(False, False, untested_version=version)
    missing = _join_missing(coordinator)
    if missing:
        return RuntimeStatus(False, False, missing)
    if done is None or not done.join_fix:
        join.install_join_fix(coordinator)
    if not keep_reading:
        return RuntimeStatus(True, False)
    missing = _cooperative_missing(coordinator)
    if missing:
        return RuntimeStatus(True, False, missing)
    cooperative.install_cooperative(coordinator)
    return RuntimeStatus(True, True)


def kafka_python_version() -> str:
    try:
        from kafka.version import __version__
    except ImportError:
        return "unknown"
    return str(__version__)


def _join_missing(coordinator: Any) -> tuple[str, ...]:
    return join.missing(coordinator)


def _cooperative_missing(coordinator: Any) -> tuple[str, ...]:
    return cooperative.missing(coordinator)


def _new_future() -> Any:
    try:
        from kafka.future import Future
    except ImportError:
        return None
    return Future()


def _missing(obj: Any, names: tuple[str, ...], prefix: str = "") -> tuple[str, ...]:
    return tuple(prefix + name for name in names if not hasattr(obj, name))


def _log_once(coordinator: Any, status: RuntimeStatus) -> None:
    group = getattr(coordinator, "group_id", None)
    if status.untested_version is not None:
        if "version" not in _warned:
            _warned.add("version")
            log.warning("kafka-assignors runtime on consumer group %s: %s; the assignors "
                        "still assign, with kafka-python's own rebalance behaviour", group,
                        status.describe())
        return
    if status.missing:
        key = ",".join(status.missing)
        if key in _warned:
            return
        _warned.add(key)
        what = ("join results may be dropped (a member can stay REBALANCING) and "
                "cooperative rebalances pause every partition" if not status.join_fix
                else "cooperative rebalances pause every partition, as in plain kafka-python")
        log.warning("kafka-assignors runtime: this kafka-python has no %s; %s",
                    ", ".join(status.missing), what)
        return
    if status.opted_out:
        log.info("kafka-assignors runtime on consumer group %s: not installed (%s=off)",
                 group, OPT_OUT_ENV)
        return
    log.info("kafka-assignors runtime on consumer group %s: %s (opt out: %s=off)",
             group, status.describe(), OPT_OUT_ENV)


def install_for_caller(assignor: object) -> RuntimeStatus | None:
    """Install on the kafka-python coordinator whose call reached ``assignor``, if any."""
    from .._callers import calling_coordinator

    coordinator = calling_coordinator(assignor)
    if coordinator is None:
        _say_not_found(assignor)
        return None
    if not _is_kafka_python(coordinator):
        return None
    done = runtime_status(coordinator)
    if done is not None:
        return done
    # the metrics' round-trip wrapper goes under the join fix's, their pause hooks over
    # the runtime's (they measure what the consumer sees)
    group_metrics = _install_metrics_events(coordinator)
    status = install(coordinator, keep_reading=_all_cooperative(coordinator))
    if group_metrics is not None:
        metrics.install_pause(coordinator, group_metrics)
        _attach_to_consumer(group_metrics)
    return status


def _install_metrics_events(coordinator: Any) -> Any:
    """The consumer's metrics, where the runtime installs (tested kafka-python releases, not
    opted out: an opted-out consumer keeps every kafka-python method as it is)."""
    if opted_out() or kafka_python_version() not in TESTED_VERSIONS:
        return None
    return metrics.install_events(coordinator)


def _attach_to_consumer(group_metrics: Any) -> None:
    """Attach to the ``KafkaConsumer`` being built, found among the callers (its
    ``__init__`` is building the coordinator); ``metrics_of`` also finds it through
    ``consumer._coordinator`` once it is built."""
    from kafka import KafkaConsumer

    from ...metrics import attach
    from .._callers import caller_value

    consumer = caller_value(
        lambda f: f.get("self") if isinstance(f.get("self"), KafkaConsumer) else None,
        depth=12)
    if consumer is not None:
        attach(consumer, group_metrics)


def _say_not_found(assignor: object) -> None:
    """One line per assignor instance whose caller the frame walk could not place."""
    with _lock:
        if getattr(assignor, _NOT_FOUND_MARK, False):
            return
        with contextlib.suppress(AttributeError):
            setattr(assignor, _NOT_FOUND_MARK, True)
    log.warning("kafka-assignors runtime: not active on the consumer using %s: no kafka-python "
                "coordinator was found among the callers of %s (a coordinator of another shape, "
                "or the assignor called outside a consumer); kafka-python's own rebalance "
                "behaviour applies", getattr(assignor, "name", type(assignor).__name__),
                type(assignor).__name__)


def _all_cooperative(coordinator: Any) -> bool:
    """True if the consumer will run the cooperative protocol (every assignor speaks it).

    Asked while kafka-python is still deciding (its ``_rebalance_protocol`` is not set
    yet), without calling back into our own assignors.
    """
    from kafka.coordinator.assignors.abstract import RebalanceProtocol

    from ..kafka_python import KafkaPythonAssignor

    assignors = getattr(coordinator, "_assignors", {}).values()
    return bool(assignors) and all(
        a.cooperative if isinstance(a, KafkaPythonAssignor)
        else RebalanceProtocol.COOPERATIVE in a.supported_protocols()
        for a in assignors)


def _is_kafka_python(coordinator: object) -> bool:
    try:
        from kafka.coordinator.consumer import ConsumerCoordinator
    except ImportError:
        return False
    return isinstance(coordinator, ConsumerCoordinator)


__all__ = ["OPT_OUT_ENV", "RuntimeStatus", "install", "install_for_caller", "opted_out",
           "runtime_status"]
