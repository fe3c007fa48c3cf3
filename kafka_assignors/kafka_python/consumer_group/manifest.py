"""Every kafka-python name the consumer-protocol member relies on, with its signature.

:func:`missing` checks them on a real coordinator before the class is put in place, so an
installed kafka-python that renamed one fails at construction with the name, never in the
middle of a rebalance.  Tested with kafka-python 3.0.12.
"""

from __future__ import annotations

import inspect
from typing import Any

#: methods of kafka-python's ConsumerCoordinator / BaseCoordinator, with the leading
#: parameter names (after self) the member calls or overrides them with
METHODS: dict[str, tuple[str, ...]] = {
    "poll": ("timeout_ms",),
    "need_rejoin": (),
    "time_to_next_poll": (),
    "reset_generation": ("member_id",),
    "close": ("autocommit", "timeout_ms"),
    "maybe_leave_group_async": ("reason", "timeout_ms"),
    "_heartbeat_loop": (),
    "_maybe_start_heartbeat_loop": (),
    "poll_heartbeat": (),
    "ensure_coordinator_ready": ("timeout_ms",),
    "coordinator_unknown": (),
    "coordinator": (),
    "coordinator_dead": ("error",),
    "lookup_coordinator": (),
    "_failed_request": ("node_id", "request", "error"),
    "commit_offsets_sync": ("offsets", "timeout_ms"),
    "_invoke_completed_offset_commit_callbacks": (),
    "_maybe_auto_commit_offsets_async": (),
    "_send_offset_commit_request": ("offsets",),
    "_handle_offset_commit_response": ("offsets", "send_time", "response"),
    "_send_offset_fetch_request": ("partitions",),
    "_handle_offset_fetch_response": ("response",),
}
#: attributes of the coordinator
ATTRIBUTES = ("config", "group_id", "group_instance_id", "state", "_generation", "_lock",
              "_manager", "_cluster", "_net", "_subscription", "heartbeat",
              "_heartbeat_wakeup", "_heartbeat_closed", "coordinator_id", "_isolation_level")
#: names on the objects the coordinator holds
HELD: dict[str, tuple[str, ...]] = {
    "heartbeat": ("config", "heartbeat_failed", "sent_heartbeat", "received_heartbeat",
                  "fail_heartbeat", "should_heartbeat", "time_to_next_heartbeat",
                  "session_timeout_expired", "poll_timeout_expired", "reset_timeouts"),
    "_subscription": ("subscription", "subscribed_pattern", "rebalance_listener",
                      "partitions_auto_assigned", "assigned_partitions",
                      "assign_from_subscribed", "mark_pending_revocation",
                      "all_consumed_offsets", "change_subscription", "group_subscription"),
    "_cluster": ("topic_name_for_id", "request_update", "set_topics"),
    "_manager": ("send", "wait_for", "broker_version_data"),
    "_heartbeat_wakeup": ("notify",),
    "_net": ("run",),
}
#: nested request classes (OffsetCommit / OffsetFetch v9 with the member epoch)
REQUEST_CLASSES = ("OffsetCommitRequest.OffsetCommitRequestTopic."
                   "OffsetCommitRequestPartition",
                   "OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics")


def _signature_problem(method: Any, expected: tuple[str, ...]) -> str | None:
    try:
        params = [p for p in inspect.signature(method).parameters if p != "self"]
    except (TypeError, ValueError):
        return "no signature"
    if tuple(params[:len(expected)]) != expected:
        return f"parameters {params}, expected {list(expected)} first"
    return None


def missing(coordinator: Any) -> tuple[str, ...]:
    """What ``coordinator`` (a kafka-python ``ConsumerCoordinator``) lacks, each as
    ``ConsumerCoordinator.name`` (with the signature found where it differs); empty: fine."""
    import kafka.protocol.consumer as requests

    out: list[str] = []
    # kafka-python's own class (the member may already be in place on this coordinator)
    cls = next((c for c in type(coordinator).__mro__ if c.__module__.startswith("kafka.")),
               object)
    for name, expected in METHODS.items():
        method = getattr(cls, name, None)
        if method is None:
            out.append(f"ConsumerCoordinator.{name}")
        elif (problem := _signature_problem(method, expected)) is not None:
            out.append(f"ConsumerCoordinator.{name} ({problem})")
    out.extend(f"ConsumerCoordinator.{name}" for name in ATTRIBUTES
               if not hasattr(coordinator, name))
    for holder, names in HELD.items():
        obj = getattr(coordinator, holder, None)
        out.extend(f"ConsumerCoordinator.{holder}.{name}" for name in names
                   if obj is None or not hasattr(obj, name))
    for path in REQUEST_CLASSES:
        found: Any = requests
        for part in path.split("."):
            found = getattr(found, part, None)
        if found is None:
            out.append(f"kafka.protocol.consumer.{path}")
    return tuple(out)
