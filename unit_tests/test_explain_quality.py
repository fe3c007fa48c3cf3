"""explain's last-rebalance figures: members' claims at the join against what they hold."""

from __future__ import annotations

import io
from typing import Any

from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from kafka_assignors.explain import render_text, with_last_rebalance
from kafka_assignors.explain.model import group_report
from kafka_assignors.explain.quality import claims_at_join
from kafka_assignors.protocol.user_data import encode_user_data, ownership_fields


def _member(
    mid: str,
    topics: list[str],
    now: dict[str, list[int]],
    *,
    owned_field: dict[str, list[int]] | None = None,
    owned_user_data: dict[str, list[int]] | None = None,
    version: int = 3,
) -> dict[str, Any]:
    fields: dict[str, object] = {"mode": "cooperative"}
    if owned_user_data is not None:
        fields.update(ownership_fields(owned_user_data, 6))
    sub = ConsumerProtocolSubscription.decode(
        ConsumerProtocolSubscription(
            version=version, topics=topics, user_data=encode_user_data(fields),
            owned_partitions=[(t, ps) for t, ps in (owned_field or {}).items()],
            generation_id=6, rack_id=None,
        ).encode()
    )
    assignment = ConsumerProtocolAssignment(0, list(now.items()), b"")
    return {"member_id": mid, "client_id": mid, "client_host": "/127.0.0.1",
            "group_instance_id": None, "member_metadata": sub, "member_assignment": assignment}


def _report(members: list[dict[str, Any]]) -> Any:
    description = {"group_state": "Stable", "protocol_type": "consumer",
                   "protocol_data": "cooperative-balanced-sticky", "members": members}
    ends = {("a", p): 0 for p in range(6)} | {("b", p): 0 for p in range(2)}
    return with_last_rebalance(group_report("g", description, {}, ends), description)


def test_moves_newly_owned_and_spreads_come_from_claims_and_assignments() -> None:
    """m1 owned a0-a3 at the join and keeps a0-a1 (a2 went to m2, a3 to m3); b0-b1 and
    a4-a5 were claimed by nobody (a member that left): 2 moved, 4 newly owned."""
    report = _report([
        _member("m1", ["a", "b"], {"a": [0, 1], "b": [0]},
                owned_user_data={"a": [0, 1, 2, 3]}),
        _member("m2", ["a", "b"], {"a": [2, 4], "b": [1]}, owned_field={}),
        _member("m3", ["a"], {"a": [3, 5]}, owned_field={}),
    ])
    assert report.last_rebalance == {
        "moved": 2, "newly_owned": 4, "count_spread": 1, "topic_spread": 0,
        "members_with_claims": 1, "members": 3,
    }
    out = io.StringIO()
    render_text(report, out)
    text = out.getvalue()
    assert "partitions moved 2" in text and "newly owned 4" in text
    assert "2 of 3 members claimed no partitions at the join" in text
    assert report.to_dict()["last_rebalance"]["moved"] == 2


def test_claims_come_from_our_user_data_first_then_the_subscription_field() -> None:
    """Our user data's owned partitions (what kafka-python 2.x and aiokafka members carry)
    win; a v1+ subscription's own field serves other clients; version 0 says nothing."""
    ours = _member("x", ["a"], {}, owned_user_data={"a": [1]}, owned_field={"a": [2]})
    assert claims_at_join(ours) == {"a": [1]}
    theirs = _member("y", ["a"], {}, owned_field={"a": [2, 3]})
    theirs["member_metadata"].user_data = b""
    assert claims_at_join(theirs) == {"a": [2, 3]}
    old = _member("z", ["a"], {}, version=0)
    old["member_metadata"].user_data = b""
    assert claims_at_join(old) is None
    assert claims_at_join({"member_metadata": b"\x00\x01"}) is None


def test_a_group_without_members_has_no_last_rebalance() -> None:
    """An empty group reports no figures, and its JSON says null."""
    report = _report([])
    assert report.last_rebalance is None and report.to_dict()["last_rebalance"] is None
