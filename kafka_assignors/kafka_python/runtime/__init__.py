"""The kafka-python 3 consumer runtime: one coordinator class, applied only where asked for.

``kafka_assignors.kafka_python.KafkaConsumer`` (a drop-in ``kafka.KafkaConsumer``) calls
:func:`apply` right after kafka-python's constructor; ``patch_rejoin_hang(consumer)`` (the
join fix alone) and ``kafka_assignors.metrics.instrument(consumer)`` (the metrics alone)
use the same mechanism. Nothing else installs it, and kafka-python's classes never change.

The pattern (follow it for any new behaviour; ``docs/runtime.md``):

* **One mixin per feature** (:class:`.compose.RuntimeMixin`): its methods override
  kafka-python 3's ``ConsumerCoordinator`` methods and call ``super()``; parameters the
  override does not use are passed on as ``*args, **kwargs``, so kafka-python may grow
  parameters. Each override's docstring names the kafka-python defect it works around and
  the ``docs/upstream.md`` section (``help(type(consumer._coordinator))`` lists them).
  Features: ``join_fix`` (:class:`.join.JoinFixMixin`), ``keep_reading``
  (:class:`.cooperative.KeepReadingMixin`, cooperative consumers), ``fencing``
  (:class:`.fencing.FencedMemberMixin`), ``metrics`` (:class:`.metrics.KeptPauseMixin`,
  :class:`.metrics.RebalanceEventsMixin`).
* **One class per set of features**, composed once over the coordinator's own class in the
  fixed order of :func:`.compose.order` (cached), so the order in which features are turned
  on never matters; it is named ``RuntimeCoordinator[...]``.
* **Installed by class assignment** (``coordinator.__class__ = ...``, :func:`.compose.enable`)
  after the layouts were compared; the state each mixin keeps is created first by its
  ``kafka_assignors_setup`` classmethod, in one instance attribute ``_kafka_assignors_*``
  (never a method's name: no instance attribute shadows a method). A ``coordinator_class``
  option upstream would make the assignment unnecessary (``docs/upstream.md``).
* **Checked first**: every kafka-python name and signature a feature relies on is in
  :mod:`.manifest`; a feature whose names are missing is not turned on (:func:`apply`
  raises :class:`RuntimeUnavailableError` naming them). Releases in :data:`REFUSED_RELEASES`
  get no behaviour change (metrics alone are allowed). Each workaround of an upstream
  defect asks :mod:`.probes` whether the installed kafka-python still has it, and steps
  aside where kafka-python fixed it.

Adding a feature: a module with one ``RuntimeMixin`` subclass (``FEATURE``, ``TITLE``, its
state in ``kafka_assignors_setup``; each override with a docstring naming the defect and its
``docs/upstream.md`` section, ``*args, **kwargs`` passed on), its place in
:func:`.compose.order`, every kafka-python name it touches in :data:`.manifest.NAMES` (the unit
tests fail otherwise: an AST scan for private names, a signature check for every override), a
probe in :data:`.probes.WORKAROUNDS` if it works around an upstream defect, and the call that
turns it on in :func:`apply` (or a function like ``patch_rejoin_hang`` for it alone).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any

from ..assignor import KafkaPythonAssignor
from . import compose, join, manifest, probes
from .compose import IncompatibleCoordinatorError, coordinator_class, features_of

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
#: The features that change behaviour (refused on :data:`REFUSED_RELEASES`).
BEHAVIOUR = frozenset({"join_fix", "keep_reading", "fencing"})


@dataclass(frozen=True)
class RuntimeStatus:
    """What the runtime put on one consumer's coordinator."""

    join_fix: bool
    keep_reading: bool
    missing: tuple[str, ...] = ()
    metrics: bool = False
    fencing: bool = False

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
        if self.fencing:
            parts.append("a fenced static member's poll() raises FencedInstanceIdError")
        if self.metrics:
            parts.append("rebalance metrics in consumer.metrics()")
        if self.missing:
            parts.append("not applied: " + ", ".join(self.missing))
        return "; ".join(parts) or "nothing applied"


def runtime_status(coordinator: Any) -> RuntimeStatus | None:
    """What the runtime put on ``coordinator`` (None if it was never asked to)."""
    features = features_of(coordinator)
    refused: tuple[str, ...] = getattr(coordinator, _MARK, None) or ()
    if not features and _MARK not in getattr(coordinator, "__dict__", {}):
        return None
    return RuntimeStatus("join_fix" in features, "keep_reading" in features, refused,
                         metrics="metrics" in features, fencing="fencing" in features)


def kafka_python_version() -> str:
    try:
        from kafka.version import __version__
    except ImportError:
        return "unknown"
    return str(__version__)


def refusal() -> str | None:
    """Why the installed kafka-python gets no behaviour change (None if it may)."""
    version = kafka_python_version()
    if version not in REFUSED_RELEASES:
        return None
    return (f"kafka-python {version} can hold its heartbeats back for minutes (a timer defect "
            "fixed in kafka-python 3.0.2), and with the runtime a member then missed "
            "rebalances; upgrade kafka-python to 3.0.2 or later, or use kafka.KafkaConsumer "
            "with our assignors (kafka-python's own rebalance behaviour)")


def install(coordinator: Any, *, keep_reading: bool = True,
            fencing: bool = False) -> RuntimeStatus:
    """The join fix (and, with ``keep_reading``, the cooperative part; with ``fencing``, the
    fenced stop) on one kafka-python 3 ``ConsumerCoordinator``; idempotent, and the same
    class whatever else (the metrics) it already has. Changes nothing, and says why in the
    returned status, on a refused release or if kafka-python lacks a name a part relies on
    (the parts whose names are there are still turned on)."""
    wanted = {"join_fix"} | ({"keep_reading"} if keep_reading else set()) | (
        {"fencing"} if fencing else set())
    with _lock:
        why = refusal()
        if why is not None:
            _note_refused(coordinator, (why,))
            return runtime_status(coordinator) or RuntimeStatus(False, False, (why,))
        lacking: list[str] = []
        turn_on: set[str] = set()
        for feature in ("join_fix", "keep_reading", "fencing"):
            if feature not in wanted:
                continue
            gaps = manifest.missing(coordinator, {feature})
            if feature != "join_fix" and "join_fix" not in turn_on | features_of(coordinator):
                gaps = gaps or ("the join fix",)  # keep-reading reads the join fix's state
            lacking.extend(g for g in gaps if g not in lacking)
            if not gaps:
                turn_on.add(feature)
        if "join_fix" in turn_on:
            probes.verdicts()  # at construction, not first on kafka-python's IO thread
        try:
            compose.enable(coordinator, turn_on)
        except IncompatibleCoordinatorError as exc:
            lacking.append(str(exc))
        _note_refused(coordinator, tuple(lacking))
        status = runtime_status(coordinator)
    return status if status is not None else RuntimeStatus(False, False, tuple(lacking))


def _note_refused(coordinator: Any, lacking: tuple[str, ...]) -> None:
    with contextlib.suppress(AttributeError):  # a coordinator without a __dict__
        setattr(coordinator, _MARK, lacking)


def apply(consumer: Any) -> RuntimeStatus:
    """The whole runtime on ``consumer`` (a kafka-python 3 ``KafkaConsumer``), once.

    Checks the release and the manifest first and raises :class:`RuntimeUnavailableError`
    naming what is missing (nothing is changed then); binds each of our assignor instances to
    this consumer (``ValueError`` if one already serves another live consumer) and tells it the
    consumer's rebalance protocol; then gives the coordinator the runtime's class: metrics,
    join fix, fenced stop and, on a cooperative consumer, keep-reading. Logs one INFO line
    saying what it turned on.
    """
    from ...metrics import attach
    from . import metrics

    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:
        raise RuntimeUnavailableError(
            f"kafka-assignors runtime: {type(consumer).__name__} has no kafka-python "
            "ConsumerCoordinator (_coordinator); the runtime needs kafka-python 3")
    why = refusal()
    if why is not None:
        raise RuntimeUnavailableError(f"kafka-assignors runtime: {why}")
    with _lock:
        done = runtime_status(coordinator)
        if done is not None and done.join_fix and done.fencing:
            return done
        lacking = manifest.missing(coordinator, consumer=consumer)
        if lacking:
            raise RuntimeUnavailableError(
                f"kafka-assignors runtime: kafka-python {kafka_python_version()} lacks "
                f"{', '.join(lacking)}; the runtime cannot be applied. Use kafka.KafkaConsumer "
                "(kafka-python's own rebalance behaviour) or a kafka-python release the "
                "runtime supports (docs/runtime.md)")
        cooperative_protocol = join.is_cooperative(coordinator)
        target = coordinator_class(compose.base_class(coordinator), {"join_fix", "fencing"})
        try:
            compose.check_layout(coordinator, target)
        except IncompatibleCoordinatorError as exc:
            raise RuntimeUnavailableError(f"kafka-assignors runtime: {exc}") from exc
        ours = [a for a in coordinator._assignors.values() if isinstance(a, KafkaPythonAssignor)]
        for assignor in ours:
            assignor.bind(coordinator)  # ValueError if it serves another live consumer
        for assignor in ours:
            assignor.protocol_mode = "cooperative" if cooperative_protocol else "eager"
        group_metrics = metrics.install(coordinator)
        status = install(coordinator, keep_reading=cooperative_protocol, fencing=True)
        if group_metrics is not None:
            attach(consumer, group_metrics)
    log.info("kafka-assignors runtime on consumer group %s: %s", coordinator.group_id,
             status.describe())
    return status


__all__ = ["REFUSED_RELEASES", "IncompatibleCoordinatorError", "RuntimeStatus",
           "RuntimeUnavailableError", "apply", "coordinator_class", "features_of", "install",
           "runtime_status"]
