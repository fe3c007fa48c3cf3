"""Every aiokafka internal the cooperative runtime relies on, with the signatures it calls.

:class:`~.consumer.AIOKafkaConsumer` checks them when it is built (before anything is
changed) and refuses, naming what is missing, an aiokafka release that lacks one: the
refusal is by feature, never by a list of versions. Tested on aiokafka 0.12.0 and 0.14.0
(unit tests on both, live tests on 0.14.0).

Kinds of requirement:

* ``METHODS``: ``(class, method, parameters after self)``; the parameter names must match,
  since the runtime overrides or calls them with exactly those;
* ``PROPERTIES``: names read on the class (properties and methods whose signature does not
  matter);
* ``INSTANCE``: attributes an object gets in its ``__init__`` (checked on the objects
  themselves: the consumer when built, the coordinator when its class is put in place).
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

#: ``(class, method, parameters after self)``.
METHODS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("GroupCoordinator", "_on_join_prepare", ("previous_assignment",)),
    ("GroupCoordinator", "_on_join_complete",
     ("generation", "member_id", "protocol", "member_assignment_bytes")),
    ("GroupCoordinator", "reset_generation", ()),
    ("GroupCoordinator", "_maybe_leave_group", ()),
    ("GroupCoordinator", "_do_rejoin_group", ("subscription",)),
    ("GroupCoordinator", "request_rejoin", ()),
    ("GroupCoordinator", "commit_offsets", ("assignment", "offsets")),
    ("GroupCoordinator", "_do_commit_offsets", ("assignment", "offsets")),
    ("GroupCoordinator", "_lookup_assignor", ("name",)),
    ("GroupCoordinator", "_start_heartbeat_task", ()),
    ("GroupCoordinator", "start_commit_offsets_refresh_task", ("assignment",)),
    ("SubscriptionState", "begin_reassignment", ()),
    ("SubscriptionState", "assign_from_subscribed", ("assignment",)),
    ("SubscriptionState", "pause", ("tp",)),
    ("SubscriptionState", "assigned_partitions", ()),
    ("Assignment", "state_value", ("tp",)),
    ("Assignment", "all_consumed_offsets", ()),
    ("TopicPartitionState", "seek", ("position",)),
    ("TopicPartitionState", "await_reset", ("strategy",)),
    ("TopicPartitionState", "pause", ()),
    ("AIOKafkaConsumer", "start", ()),
)
#: ``(class, names)`` read on the class.
PROPERTIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SubscriptionState", ("subscription", "listener", "reassignment_in_progress")),
    ("Subscription", ("assignment", "active")),
    ("Assignment", ("tps", "active")),
    ("TopicPartitionState", ("has_valid_position", "position", "awaiting_reset",
                             "reset_strategy", "paused")),
)
#: ``(object, attributes)`` set by that object's ``__init__``.
INSTANCE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("AIOKafkaConsumer", ("_coordinator", "_subscription", "_partition_assignment_strategy")),
    ("GroupCoordinator", ("_subscription", "_assignors", "_enable_auto_commit",
                          "_group_subscription", "_closing", "_rebalance_timeout_ms",
                          "generation", "member_id", "group_id")),
)
#: What the rebalance metrics (:mod:`kafka_assignors.aiokafka.rebalance_metrics`) override or
#: read besides the above, checked by ``instrument()`` before it changes a class (a plain
#: aiokafka consumer gets the metrics alone: :func:`metrics_missing` checks only these).
METRICS_METHODS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("GroupCoordinator", "_send_req", ("request",)),
    ("GroupCoordinator", "_perform_assignment", ("response",)),
    ("GroupCoordinator", "_on_join_prepare", ("previous_assignment",)),
    ("GroupCoordinator", "_on_join_complete",
     ("generation", "member_id", "protocol", "member_assignment_bytes")),
    ("GroupCoordinator", "_maybe_leave_group", ()),
    ("GroupCoordinator", "reset_generation", ()),
    ("GroupCoordinator", "_lookup_assignor", ("name",)),
    ("SubscriptionState", "assigned_partitions", ()),
    ("AIOKafkaConsumer", "start", ()),
)
METRICS_PROPERTIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SubscriptionState", ("listener", "reassignment_in_progress")),
    ("Assignment", ("tps",)),
)
#: ``(object, attributes)``: the listener is put behind a timing proxy while a coordinator
#: step runs (then put back); the client id tags the metrics.
METRICS_INSTANCE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("AIOKafkaConsumer", ("_coordinator", "_subscription", "_client")),
    ("GroupCoordinator", ("_subscription", "_assignors", "group_id")),
    ("SubscriptionState", ("_listener",)),
)
#: Public aiokafka names used ("module:attribute.attribute").
PUBLIC: tuple[str, ...] = (
    "aiokafka.consumer.group_coordinator:GroupCoordinator",
    "aiokafka.consumer.subscription_state:SubscriptionState",
    "aiokafka.consumer.subscription_state:Subscription",
    "aiokafka.consumer.subscription_state:Assignment",
    "aiokafka.consumer.subscription_state:TopicPartitionState",
    "aiokafka.coordinator.protocol:ConsumerProtocol.ASSIGNMENT.decode",
    "aiokafka.structs:OffsetAndMetadata",
    "aiokafka.errors:KafkaError",
)


def _resolve(path: str) -> Any:
    """The object ``module:attr.attr`` names; raises ImportError or AttributeError."""
    import importlib

    module, _, attrs = path.partition(":")
    found: Any = importlib.import_module(module)
    for attr in attrs.split("."):
        found = getattr(found, attr)
    return found


def public_missing() -> tuple[str, ...]:
    """The :data:`PUBLIC` names the installed aiokafka lacks."""
    out = []
    for path in PUBLIC:
        try:
            _resolve(path)
        except (ImportError, AttributeError):
            out.append(path)
    return tuple(out)


def _classes() -> dict[str, Any]:
    """The aiokafka classes the requirements name (absent ones left out)."""
    found: dict[str, Any] = {}
    for where, path in (
        ("GroupCoordinator", "aiokafka.consumer.group_coordinator:GroupCoordinator"),
        ("SubscriptionState", "aiokafka.consumer.subscription_state:SubscriptionState"),
        ("Subscription", "aiokafka.consumer.subscription_state:Subscription"),
        ("Assignment", "aiokafka.consumer.subscription_state:Assignment"),
        ("TopicPartitionState", "aiokafka.consumer.subscription_state:TopicPartitionState"),
        ("AIOKafkaConsumer", "aiokafka:AIOKafkaConsumer"),
    ):
        with contextlib.suppress(ImportError, AttributeError):
            found[where] = _resolve(path)
    return found


def _parameters(func: Any) -> tuple[str, ...] | None:
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return None
    return tuple(params[1:] if params and params[0] == "self" else params)


def class_missing(classes: dict[str, Any] | None = None) -> tuple[str, ...]:
    """What the aiokafka classes lack of :data:`METHODS` and :data:`PROPERTIES`: names
    (``GroupCoordinator._on_join_complete``), or a name and the parameters expected."""
    classes = _classes() if classes is None else classes
    return _class_missing(classes, METHODS, PROPERTIES)


def _class_missing(classes: dict[str, Any],
                   methods: tuple[tuple[str, str, tuple[str, ...]], ...],
                   properties: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    out: list[str] = []
    for where, name, params in methods:
        cls = classes.get(where)
        func = getattr(cls, name, None) if cls is not None else None
        if func is None:
            out.append(f"{where}.{name}")
        elif _parameters(func) != params:
            out.append(f"{where}.{name}({', '.join(params)})")
    for where, names in properties:
        cls = classes.get(where)
        out.extend(f"{where}.{n}" for n in names if cls is None or not hasattr(cls, n))
    return tuple(out)


def instance_missing(where: str, obj: object,
                     required: tuple[tuple[str, tuple[str, ...]], ...] = INSTANCE,
                     ) -> tuple[str, ...]:
    """What ``obj`` (aiokafka's ``where``) lacks of :data:`INSTANCE` (or ``required``)."""
    names = dict(required)[where]
    return tuple(f"{where}.{n}" for n in names if not hasattr(obj, n))


def metrics_missing(coordinator: object | None = None) -> tuple[str, ...]:
    """What the installed aiokafka lacks of the rebalance metrics' requirements; with
    ``coordinator`` (a built ``GroupCoordinator``), its own attributes and its
    ``SubscriptionState``'s too."""
    classes = _classes()
    out = list(_class_missing(classes, METRICS_METHODS, METRICS_PROPERTIES))
    if coordinator is not None:
        out.extend(instance_missing("GroupCoordinator", coordinator, METRICS_INSTANCE))
        subscription = getattr(coordinator, "_subscription", None)
        if subscription is not None:
            out.extend(instance_missing("SubscriptionState", subscription, METRICS_INSTANCE))
    return tuple(out)


def missing_for_consumer(consumer: object) -> tuple[str, ...]:
    """Everything checkable once an aiokafka consumer is built (the coordinator's own
    attributes wait for its construction in ``start()``)."""
    return public_missing() + class_missing() + instance_missing("AIOKafkaConsumer", consumer)


def names() -> tuple[str, ...]:
    """Every internal name, qualified by where it lives, sorted."""
    found = {f"{w}.{n}" for w, n, _ in METHODS + METRICS_METHODS}
    found.update(f"{w}.{n}" for w, group in
                 PROPERTIES + INSTANCE + METRICS_PROPERTIES + METRICS_INSTANCE for n in group)
    return tuple(sorted(found))


class MissingInternals(RuntimeError):
    """The installed aiokafka lacks something the cooperative runtime needs."""

    def __init__(self, lacking: tuple[str, ...]) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("aiokafka")
        except PackageNotFoundError:
            installed = "unknown"
        super().__init__(
            f"kafka_assignors.aiokafka.AIOKafkaConsumer cannot run on aiokafka {installed}: "
            f"it lacks {', '.join(lacking)} (the cooperative runtime overrides or calls these; "
            "tested on aiokafka 0.12.0 and 0.14.0). Use aiokafka's own AIOKafkaConsumer "
            "(our assignors then run eager), or an aiokafka release that has them.")
        self.lacking = lacking
