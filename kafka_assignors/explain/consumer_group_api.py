"""ConsumerGroupDescribe (API key 69, KIP-848) over kafka-python's admin connection.

A ``group.protocol=consumer`` group is not a classic group: DescribeGroups answers
GROUP_ID_NOT_FOUND for it.  kafka-python 3.0 knows the API key but has no message class,
so the two classes here are built by its own JSON-schema framework from the schemas in
``schemas/`` (written from Kafka's protocol guide), and sent to the group's coordinator
through the admin client's connections (same security, same timeouts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka.protocol.api_message import ApiMessage

from . import schemas

#: MemberType of ConsumerGroupDescribe v1 (v0 members are reported as unknown).
MEMBER_TYPES = {0: "classic", 1: "consumer"}


class ConsumerGroupDescribeRequest(ApiMessage, load_json=schemas):  # type: ignore[misc,call-arg]
    """Describe consumer-protocol groups: GroupIds, IncludeAuthorizedOperations."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=schemas):  # type: ignore[misc,call-arg]
    """Groups with epochs, assignor and members (current and target assignment)."""


def describe_request(group_id: str) -> Any:
    """The request for one group (the version is chosen on sending, up to v1)."""
    return ConsumerGroupDescribeRequest(group_ids=[group_id], include_authorized_operations=False)


def send_describe(admin: Any, group_id: str) -> Any:
    """Send ConsumerGroupDescribe to the group's coordinator; the decoded response.

    Uses the admin client's own coordinator lookup and connection manager (kafka-python
    internals: ``_find_coordinator_id`` and ``_manager``), as its ``describe_groups`` does.
    """
    async def describe() -> Any:
        node_id = await admin._find_coordinator_id(group_id)
        return await admin._manager.send(describe_request(group_id), node_id=node_id)

    return admin._manager.run(describe)


def _assignment(value: Any) -> dict[str, list[int]]:
    """An ``Assignment`` struct as ``{topic name: sorted partitions}``."""
    out: dict[str, list[int]] = {}
    for tp in getattr(value, "topic_partitions", None) or ():
        name = str(tp.topic_name or tp.topic_id)
        out.setdefault(name, []).extend(int(p) for p in tp.partitions or ())
    return {t: sorted(set(ps)) for t, ps in sorted(out.items()) if ps}


def group_view(response: Any, group_id: str) -> dict[str, Any]:
    """One group of a decoded response as plain data (what ``explain`` reports).

    Keys: ``group_id``, ``error_code``, ``error_message``, ``group_state``, ``group_epoch``,
    ``assignment_epoch``, ``assignor``, ``members`` (each: ``member_id``, ``instance_id``,
    ``rack``, ``member_epoch``, ``client_id``, ``client_host``, ``topics``,
    ``topic_regex``, ``assignment``, ``target_assignment``, ``member_type``).
    """
    groups = [g for g in response.groups if g.group_id == group_id] or list(response.groups)
    if not groups:
        return {"group_id": group_id, "error_code": -1, "error_message": "no group in the answer"}
    g = groups[0]
    members = []
    for m in g.members or ():
        member_type = getattr(m, "member_type", -1)
        members.append({
            "member_id": str(m.member_id),
            "instance_id": m.instance_id,
            "rack": m.rack_id,
            "member_epoch": int(m.member_epoch),
            "client_id": str(m.client_id),
            "client_host": str(m.client_host),
            "topics": sorted(str(t) for t in m.subscribed_topic_names or ()),
            "topic_regex": m.subscribed_topic_regex or None,
            "assignment": _assignment(m.assignment),
            "target_assignment": _assignment(m.target_assignment),
            "member_type": MEMBER_TYPES.get(int(member_type)) if member_type is not None else None,
        })
    return {
        "group_id": str(g.group_id),
        "error_code": int(g.error_code),
        "error_message": g.error_message,
        "group_state": str(g.group_state),
        "group_epoch": int(g.group_epoch),
        "assignment_epoch": int(g.assignment_epoch),
        "assignor": str(g.assignor_name),
        "members": members,
    }


def topics_of(view: Mapping[str, Any]) -> set[str]:
    """Every topic the members subscribe to or hold (for partition counts and end offsets)."""
    topics: set[str] = set()
    for m in view.get("members") or ():
        topics.update(m["topics"])
        topics.update(m["assignment"])
        topics.update(m["target_assignment"])
    return topics
