"""Every kafka-python name the consumer runtime touches, with the signature it expects.

One table (:data:`NAMES`): where the name lives, the name, for a callable the parameters
the runtime passes or receives, and the features that need it. :func:`missing` checks a
consumer's coordinator (``kafka_assignors.kafka_python.KafkaConsumer``, ``patch_rejoin_hang``
and ``kafka_assignors.metrics.instrument`` do, before changing anything): a name that is
gone, or a callable whose signature no longer takes what the runtime passes, is reported
and the feature that needs it is not turned on. A unit test scans the runtime's modules and
fails if they touch a kafka-python private name this table lacks.

Parameters: ``"name"`` is passed (or received) by position, ``"name="`` by keyword (the
name must match); kafka-python may add parameters after them as long as they have defaults
(the overrides pass on ``*args, **kwargs``). Names the behavioural probes (:mod:`.probes`)
read are listed under the feature ``probes``: a missing one makes that probe inconclusive
(the workaround stays on), it does not refuse the runtime.

``python -m kafka_assignors.kafka_python.runtime.manifest`` prints the count and what the
installed kafka-python lacks; ``scripts/test-kafka-python-versions.sh`` runs it against every
kafka-python 3.x release on the package index.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

JOIN = frozenset({"join_fix"})
COOP = frozenset({"keep_reading"})
METRICS = frozenset({"metrics"})
FENCING = frozenset({"fencing"})
NOTICE = frozenset({"rejoin_notice"})
PROBES = frozenset({"probes"})
#: read outside the runtime, by any consumer with our assignors: the connection settings a
#: weight source reuses (``kafka_assignors/load/connection.py``) and the replicas' racks
#: (``kafka_assignors/kafka_python/racks.py``, which falls back to public calls)
CONNECTION = frozenset({"connection"})
RACKS = frozenset({"racks"})
ANY = frozenset({"join_fix", "keep_reading", "metrics", "fencing"})


@dataclass(frozen=True)
class Name:
    """One kafka-python name the runtime relies on."""

    where: str  # ConsumerCoordinator, Generation, ..., config, or a module (kafka.errors)
    name: str  # dotted below a module: ConsumerProtocolAssignment.decode
    params: tuple[str, ...] | None  # a callable's parameters (after self); None: an attribute
    features: frozenset[str]

    @property
    def qualified(self) -> str:
        sep = ":" if self.where.startswith("kafka") else "."
        return f"{self.where}{sep}{self.name}"


def _cc(name: str, params: tuple[str, ...] | None, features: frozenset[str]) -> Name:
    return Name("ConsumerCoordinator", name, params, features)


#: Everything, grouped by where it lives.
NAMES: tuple[Name, ...] = (
    # methods the mixins override (kafka-python calls them with these) or call
    _cc("need_rejoin", (), JOIN | COOP),
    _cc("join_group_async", ("timeout_ms",), JOIN | COOP),
    _cc("_do_join_and_sync_async", (), JOIN | METRICS),
    _cc("_process_join_group_response", ("response", "send_time"), JOIN),
    _cc("stable", (), JOIN),
    _cc("request_rejoin", (), JOIN | COOP | NOTICE),
    _cc("reset_generation", (), NOTICE),
    _cc("_on_join_prepare_async", ("generation", "member_id", "timeout_ms="),
        JOIN | COOP | METRICS),
    _cc("_on_join_complete_async", ("generation", "member_id", "protocol", "assignment"),
        JOIN | COOP | METRICS),
    _cc("_handle_heartbeat_response", ("response", "send_time"), JOIN | FENCING),
    _cc("_enable_heartbeat", (), JOIN),
    _cc("poll", ("timeout_ms",), COOP | METRICS | FENCING),
    _cc("time_to_next_poll", (), COOP),
    _cc("_invoke_rebalance_listener_async", ("method_name", "arg"), COOP | METRICS),
    _cc("generation_if_stable", (), COOP),
    _cc("_do_commit_offsets_async", ("offsets", "callback"), COOP),
    _cc("_send_offset_commit_request", ("offsets",), COOP),
    _cc("_commit_offsets_sync_async", ("offsets", "timeout_ms"), COOP),
    _cc("close", (), COOP),
    _cc("_perform_assignment", ("leader_id", "protocol", "members"), METRICS),
    _cc("_lookup_assignor", ("name",), METRICS),
    # attributes read or written
    _cc("rejoining", None, JOIN | COOP), _cc("_join_task", None, JOIN | COOP),
    _cc("_generation", None, ANY), _cc("state", None, JOIN | COOP),
    _cc("config", None, ANY), _cc("group_id", None, ANY),
    _cc("group_instance_id", None, FENCING), _cc("_lock", None, JOIN | COOP),
    _cc("_subscription", None, ANY), _cc("_assignors", None, JOIN),
    _cc("_rebalance_protocol", None, JOIN), _cc("_net", None, COOP),
    Name("Generation", "is_lost", (), ANY),
    Name("Future", "is_done", None, JOIN | COOP), Name("Future", "__await__", (), JOIN),
    Name("SubscriptionState", "assigned_partitions", (), ANY),
    Name("SubscriptionState", "assign_from_subscribed", ("assignments",), JOIN | COOP),
    Name("SubscriptionState", "all_consumed_offsets", (), COOP),
    Name("SubscriptionState", "rebalance_listener", None, COOP),
    Name("SubscriptionState", "subscription", None, COOP),
    Name("KafkaNet", "sleep", ("delay",), COOP),
    Name("KafkaConsumer", "_coordinator", None, ANY),
    Name("KafkaConsumer", "close", ("autocommit=",), ANY),
    # the consumer configuration keys read (kafka-python's documented options)
    Name("config", "session_timeout_ms", None, JOIN),
    Name("config", "enable_auto_commit", None, COOP),
    Name("config", "retry_backoff_ms", None, COOP),
    Name("config", "metrics", None, METRICS),
    Name("config", "metric_group_prefix", None, METRICS),
    Name("config", "group_instance_id", None, FENCING),
    # kafka-python's public names
    Name("kafka.errors", "RebalanceInProgressError", None, JOIN | COOP),
    Name("kafka.errors", "RetriableError", None, COOP),
    Name("kafka.errors", "NodeNotReadyError", None, COOP),
    Name("kafka.errors", "KafkaTimeoutError", None, COOP),
    Name("kafka.errors", "KafkaError", None, COOP),
    Name("kafka.errors", "FencedInstanceIdError", None, FENCING),
    Name("kafka.coordinator.base", "MemberState.REBALANCING", None, JOIN | COOP),
    Name("kafka.coordinator.base", "MemberState.UNJOINED", None, JOIN),
    Name("kafka.coordinator.assignors.abstract", "RebalanceProtocol.COOPERATIVE", None, ANY),
    Name("kafka.future", "Future", (), JOIN),
    Name("kafka.protocol.consumer.metadata", "ConsumerProtocolAssignment.decode", ("data",),
         COOP),
    Name("kafka.protocol.consumer.metadata", "ConsumerProtocolAssignment.partitions", (), COOP),
    Name("kafka.metrics", "Metrics.metrics", None, METRICS),
    # what the behavioural probes run and read (kafka-python's code, on a bare coordinator)
    _cc("rejoin_needed", None, PROBES), _cc("_auto_assign_all_partitions", (), PROBES),
    _cc("_assignment_snapshot", None, PROBES), _cc("_metadata_snapshot", None, PROBES),
    _cc("_joined_subscription", None, PROBES), _cc("_manager", None, PROBES | CONNECTION),
    _cc("ensure_coordinator_ready_async", ("timeout_ms=",), PROBES),
    _cc("_disable_heartbeat", (), PROBES), _cc("_heartbeat_enabled", None, PROBES),
    _cc("_sensors", None, PROBES), _cc("coordinator_unknown", (), PROBES),
    _cc("coordinator_id", None, PROBES), _cc("_failed_request", ("node_id", "request", "error"),
                                             PROBES),
    _cc("_send_heartbeat_request", (), PROBES),
    Name("SubscriptionState", "partitions_auto_assigned", (), PROBES),
    Name("kafka.future", "Future.success", ("value",), PROBES),
    Name("kafka.future", "Future.value", None, PROBES),
    Name("kafka.coordinator.base", "Generation", ("generation_id", "member_id", "protocol"),
         PROBES),
    # the section 3 and 7 probes: kafka-python's KafkaConsumer._poll_once and
    # ConsumerCoordinator.poll / _do_heartbeat on bare objects
    Name("KafkaConsumer", "_poll_once", ("timer", "max_records"), PROBES),
    Name("KafkaConsumer", "_refresh_committed_offsets", ("timeout_ms=",), PROBES),
    Name("KafkaConsumer", "_fetcher", None, PROBES),
    Name("Fetcher", "fetch_records", ("max_records", "update_offsets=", "timeout_ms="), PROBES),
    Name("Fetcher", "reset_offsets_if_needed", (), PROBES),
    Name("Fetcher", "maybe_validate_positions", (), PROBES),
    Name("Fetcher", "validate_offsets_if_needed", (), PROBES),
    _cc("completed_offset_commits", None, PROBES), _cc("_async_commit_fenced", None, PROBES),
    _cc("ensure_coordinator_ready", ("timeout_ms=",), PROBES),
    _cc("ensure_active_group", ("timeout_ms=",), PROBES),
    _cc("poll_heartbeat", (), PROBES), _cc("_maybe_auto_commit_offsets_async", (), PROBES),
    _cc("_invoke_completed_offset_commit_callbacks", (), PROBES),
    _cc("_do_heartbeat", (), PROBES), _cc("heartbeat", None, PROBES),
    Name("kafka.util", "Timer", ("timeout_ms",), PROBES),
    Name("kafka.coordinator.base", "MemberState.STABLE", None, PROBES),
    # outside the runtime: load/connection.py reads the consumer's connection settings from
    # the coordinator's connection manager (``_manager``, else ``_client._manager``)
    _cc("_client", None, CONNECTION),
    Name("KafkaConnectionManager", "config", None, CONNECTION),
    # kafka_python/racks.py: each partition's replicas (no public accessor)
    _cc("_cluster", None, RACKS),
    Name("ClusterMetadata", "_partitions", None, RACKS),
)


def names() -> tuple[str, ...]:
    """Every name, qualified by where it lives (``Generation.is_lost``), sorted."""
    return tuple(sorted({n.qualified for n in NAMES}))


def private_names() -> frozenset[str]:
    """The bare names of the table that are private (leading underscore, not dunder)."""
    return frozenset(part for n in NAMES for part in n.name.split(".")
                     if part.startswith("_") and not part.startswith("__"))


def count() -> int:
    """How many kafka-python names the runtime relies on."""
    return len(names())


def _objects(coordinator: Any, consumer: Any) -> dict[str, Any]:
    """The kafka-python object each ``where`` is checked on (None where it cannot be found)."""
    from .compose import base_class

    try:
        from kafka.future import Future

        future: Any = Future()
    except ImportError:
        future = None
    return {
        "ConsumerCoordinator": coordinator,
        "ConsumerCoordinator class": base_class(coordinator),
        "Generation": getattr(coordinator, "_generation", None),
        "Future": future,
        "SubscriptionState": getattr(coordinator, "_subscription", None),
        "KafkaNet": getattr(coordinator, "_net", None),
        "KafkaConsumer": consumer,
        "Fetcher": getattr(consumer, "_fetcher", None),
        "KafkaConnectionManager": getattr(coordinator, "_manager", None),
        "ClusterMetadata": getattr(coordinator, "_cluster", None),
        "config": getattr(coordinator, "config", None),
    }


def _resolve(name: Name, objects: dict[str, Any]) -> Any:
    """The object ``name`` names (AttributeError / ImportError if it is gone)."""
    if name.where.startswith("kafka"):
        obj: Any = importlib.import_module(name.where)
        for part in name.name.split("."):
            obj = getattr(obj, part)
        return obj
    if name.where == "config":
        config = objects["config"]
        if not isinstance(config, dict) or name.name not in config:
            raise AttributeError(name.name)
        return config[name.name]
    owner = objects[name.where]
    if name.params is not None and name.where == "ConsumerCoordinator":
        owner = objects["ConsumerCoordinator class"]  # kafka-python's, not our override
    if owner is None:
        raise AttributeError(name.where)
    return getattr(owner, name.name)


def signature_mismatch(obj: Any, params: tuple[str, ...], *, method: bool) -> str | None:
    """Why ``obj`` does not take ``params`` (None if it does)."""
    try:
        found = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None  # a builtin without a signature: existence is all we can check
    if method and found and found[0].name == "self":
        found = found[1:]
    shown = "(" + ", ".join(str(p) for p in found) + ")"
    variadic = {p.kind for p in found} & {inspect.Parameter.VAR_POSITIONAL,
                                          inspect.Parameter.VAR_KEYWORD}
    positional = [p for p in found if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                 inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    by_name = {p.name: p for p in found}
    for index, wanted in enumerate(params):
        if wanted.endswith("="):
            if wanted[:-1] not in by_name and inspect.Parameter.VAR_KEYWORD not in variadic:
                return f"takes {shown}, not keyword {wanted[:-1]}"
        elif index >= len(positional) and inspect.Parameter.VAR_POSITIONAL not in variadic:
            return f"takes {shown}, not {len(params)} arguments"
    used = {p.name for p in positional[:len(params)]} | {w[:-1] for w in params
                                                         if w.endswith("=")}
    required = [p.name for p in found if p.name not in used and p.default is p.empty
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                   inspect.Parameter.VAR_KEYWORD)]
    if required:
        return f"takes {shown}: also requires {', '.join(required)}"
    return None


def missing(coordinator: Any, features: Iterable[str] | None = None, *,
            consumer: Any = None) -> tuple[str, ...]:
    """The names (of the given features; all but the probes' by default) that
    ``coordinator`` (a kafka-python ``ConsumerCoordinator``), the objects it holds and
    kafka-python lack, or whose signature changed: empty when the runtime can be applied."""
    wanted = ANY if features is None else frozenset(features)
    objects = _objects(coordinator, consumer)
    out: list[str] = []
    for name in NAMES:
        if not name.features & wanted or (name.where in ("KafkaConsumer", "Fetcher")
                                          and consumer is None):
            continue
        try:
            obj = _resolve(name, objects)
        except (AttributeError, ImportError, KeyError):
            out.append(name.qualified)
            continue
        if name.params is not None:
            is_method = not name.where.startswith("kafka") or "." in name.name
            why = signature_mismatch(obj, name.params, method=is_method)
            if why is not None:
                out.append(f"{name.qualified} ({why})")
    return tuple(out)


def missing_in_installed(features: Iterable[str] | None = None) -> tuple[str, ...]:
    """:func:`missing` on a consumer of the installed kafka-python (no broker needed)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9),
                             group_id="kafka-assignors-manifest-check")
    try:
        return missing(consumer._coordinator, features, consumer=consumer)
    finally:
        consumer.close(autocommit=False)


def main() -> int:
    """Print the count, what the installed kafka-python lacks and the probes' verdicts;
    non-zero if a name the runtime needs is missing."""
    from kafka.version import __version__

    from . import probes

    lacking = missing_in_installed()
    probe_lacking = missing_in_installed(PROBES)
    outside_lacking = missing_in_installed(CONNECTION | RACKS)
    print(f"kafka-python {__version__}: the runtime relies on {count()} kafka-python names; "
          + (f"missing: {', '.join(lacking)}" if lacking else "all present"))
    if probe_lacking:
        print(f"  (the probes lack {', '.join(probe_lacking)}: their workarounds stay on)")
    if outside_lacking:
        print(f"  (outside the runtime, missing: {', '.join(outside_lacking)}: weight sources "
              "need the connection settings passed explicitly; racks come from public calls)")
    for key, needed in probes.verdicts().items():
        print(f"  workaround {key}: {'on' if needed else 'off (kafka-python fixed it)'}")
    return 1 if lacking else 0


if __name__ == "__main__":
    raise SystemExit(main())
