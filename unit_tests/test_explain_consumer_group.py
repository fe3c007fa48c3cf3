"""``explain`` for consumer-protocol (KIP-848) groups: the ConsumerGroupDescribe wire format,
the view of its answer, and the report with its reconciling notes (no broker)."""

from __future__ import annotations

import io
import struct
import uuid
from typing import Any

from kafka_assignors.explain import render_text
from kafka_assignors.explain.consumer_group import consumer_group_report
from kafka_assignors.explain.consumer_group_api import (
    ConsumerGroupDescribeResponse,
    describe_request,
    group_view,
    topics_of,
)
from kafka_assignors.explain.model import group_report

TOPIC_ID = uuid.UUID("77a5a74c-9549-4749-b82b-35b07e903502")


# --- compact (flexible-version) encodings, written out by hand from the protocol guide ---

def _uvarint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _str(s: str | None) -> bytes:
    if s is None:
        return b"\x00"
    data = s.encode()
    return _uvarint(len(data) + 1) + data


def _array(items: list[bytes]) -> bytes:
    return _uvarint(len(items) + 1) + b"".join(items)


NO_TAGS = b"\x00"


def _assignment(topic: str, partitions: list[int]) -> bytes:
    tp = (TOPIC_ID.bytes + _str(topic)
          + _array([struct.pack(">i", p) for p in partitions]) + NO_TAGS)
    return _array([tp]) + NO_TAGS


def _member(version: int, member_id: str, epoch: int, client: str, topics: list[str],
            held: list[int], target: list[int]) -> bytes:
    out = (_str(member_id) + _str("i-1") + _str("r1") + struct.pack(">i", epoch)
           + _str(client) + _str("/10.0.0.7") + _array([_str(t) for t in topics])
           + _str(None) + _assignment("orders", held) + _assignment("orders", target))
    if version >= 1:
        out += struct.pack(">b", 1)  # MemberType: consumer
    return out + NO_TAGS


def _response(version: int) -> bytes:
    members = [
        _member(version, "m-a", 7, "app-a", ["orders"], [0, 1], [0, 1]),
        _member(version, "m-b", 6, "app-b", ["orders"], [2, 3], [2]),
    ]
    group = (struct.pack(">h", 0) + _str(None) + _str("billing") + _str("Reconciling")
             + struct.pack(">ii", 7, 7) + _str("balanced-sticky") + _array(members)
             + struct.pack(">i", -(2**31)) + NO_TAGS)
    return struct.pack(">i", 0) + _array([group]) + NO_TAGS


def test_the_request_is_encoded_as_the_protocol_guide_says() -> None:
    """Flexible from v0: compact array of compact strings, a bool, no tagged fields; v1 is
    the same body (v1 only adds MemberType to the answer)."""
    body = _array([_str("billing")]) + b"\x00" + NO_TAGS
    for version in (0, 1):
        request = describe_request("billing")
        request.API_VERSION = version
        assert bytes(request.encode(version=version)) == body
    assert request.API_KEY == 69


def test_a_v1_answer_written_by_hand_decodes_into_the_view() -> None:
    """Every field in the guide's order: epochs, assignor, each member's identity, epoch,
    subscription, current and target assignment, member type."""
    response = ConsumerGroupDescribeResponse.decode(_response(1), version=1)
    view = group_view(response, "billing")
    assert view["group_state"] == "Reconciling" and view["assignor"] == "balanced-sticky"
    assert (view["group_epoch"], view["assignment_epoch"], view["error_code"]) == (7, 7, 0)
    a, b = view["members"]
    assert a == {
        "member_id": "m-a", "instance_id": "i-1", "rack": "r1", "member_epoch": 7,
        "client_id": "app-a", "client_host": "/10.0.0.7", "topics": ["orders"],
        "topic_regex": None, "assignment": {"orders": [0, 1]},
        "target_assignment": {"orders": [0, 1]}, "member_type": "consumer",
    }
    assert b["assignment"] == {"orders": [2, 3]} and b["target_assignment"] == {"orders": [2]}
    assert topics_of(view) == {"orders"}


def test_a_v0_answer_has_no_member_type() -> None:
    """v0 has no MemberType: the view says unknown (None), everything else as in v1."""
    view = group_view(ConsumerGroupDescribeResponse.decode(_response(0), version=0), "billing")
    assert [m["member_type"] for m in view["members"]] == [None, None]
    assert [m["member_epoch"] for m in view["members"]] == [7, 6]


def _view(**overrides: Any) -> dict[str, Any]:
    view = group_view(ConsumerGroupDescribeResponse.decode(_response(1), version=1), "billing")
    view.update(overrides)
    return view


def test_the_report_notes_a_member_still_reconciling() -> None:
    """A member whose assignment differs from its target, or whose epoch is behind the
    group's, is named with what it still has to move."""
    report = consumer_group_report(_view(), {("orders", p): 10 for p in range(4)},
                                   {("orders", p): 15 for p in range(4)})
    assert report.group_type == "consumer" and report.strategy == "balanced-sticky"
    assert (report.group_epoch, report.assignment_epoch) == (7, 7)
    assert [m.total_lag for m in report.members] == [10, 10]
    notes = " | ".join(report.notes)
    assert "app-b (m-b) is reconciling: to revoke orders-3" in notes
    assert "app-b (m-b) is at member epoch 6, behind group epoch 7" in notes
    assert "app-a" not in notes


def test_the_report_notes_a_target_not_yet_computed() -> None:
    """A target assignment epoch behind the group epoch means the broker has not yet
    assigned for the latest change."""
    report = consumer_group_report(_view(group_epoch=8), {}, {})
    assert any("target assignment epoch 7 < group epoch 8" in n for n in report.notes)


def test_text_and_json_show_epochs_and_targets() -> None:
    """The text names the assignor, epochs and each member's target; the JSON carries them."""
    report = consumer_group_report(_view(), {}, {("orders", p): 5 for p in range(4)})
    out = io.StringIO()
    render_text(report, out)
    text = out.getvalue()
    assert "assignor   balanced-sticky (on the broker)" in text
    assert "epochs     group 7, target assignment 7" in text
    assert "member epoch 6" in text and "target: orders 2" in text
    assert "target: the same (reconciled)" in text
    data = report.to_dict()
    assert data["group_type"] == "consumer" and data["assignment_epoch"] == 7
    assert data["members"][1]["target_assignment"] == {"orders": [2]}


def test_the_classic_report_keeps_its_shape() -> None:
    """Classic groups' JSON has none of the consumer-protocol keys (unchanged output)."""
    report = group_report("g", {"group_state": "Empty", "members": []}, {}, {})
    data = report.to_dict()
    for key in ("group_type", "group_epoch", "assignment_epoch"):
        assert key not in data
