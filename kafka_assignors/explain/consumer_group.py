"""``explain`` for a consumer-protocol group (KIP-848): the broker's assignor, epochs and
each member's current and target assignment (plain data in, no I/O).

In such a group the broker computes a *target* assignment for each group epoch and the
members move to it one heartbeat at a time: a member whose assignment differs from its
target, or whose epoch is behind, is still reconciling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from .model import GroupReport, MemberReport, Partition, members_and_balance, with_lag
from .text import write_balance, write_holdings


def _member(m: Mapping[str, Any], lag_of: Mapping[Partition, int | None]) -> MemberReport:
    return with_lag(MemberReport(
        member_id=str(m["member_id"]),
        client_id=str(m["client_id"]),
        host=str(m["client_host"]).lstrip("/"),
        instance_id=m.get("instance_id"),
        rack=m.get("rack") or None,
        topics=list(m["topics"]),
        assignment=dict(m["assignment"]),
        subscription_user_data=None,
        assignment_user_data=None,
        member_epoch=int(m["member_epoch"]),
        target_assignment=dict(m["target_assignment"]),
        topic_regex=m.get("topic_regex"),
        member_type=m.get("member_type"),
    ), lag_of)


def _difference(have: Mapping[str, list[int]], want: Mapping[str, list[int]]) -> list[str]:
    held = {f"{t}-{p}" for t, ps in have.items() for p in ps}
    target = {f"{t}-{p}" for t, ps in want.items() for p in ps}
    out = []
    if held - target:
        out.append(f"to revoke {', '.join(sorted(held - target))}")
    if target - held:
        out.append(f"to receive {', '.join(sorted(target - held))}")
    return out


def consumer_group_report(
    view: Mapping[str, Any],
    committed: Mapping[Partition, int],
    end_offsets: Mapping[Partition, int],
) -> GroupReport:
    """The report of a ConsumerGroupDescribe view (see ``consumer_group_api.group_view``)."""
    members, balance = members_and_balance(view.get("members"), _member, committed, end_offsets)
    group_epoch = int(view["group_epoch"])
    target_epoch = int(view["assignment_epoch"])
    notes: list[str] = []
    if target_epoch < group_epoch:
        notes.append(
            f"target assignment epoch {target_epoch} < group epoch {group_epoch}: the broker "
            "has not yet computed the target for the latest change (it does on a member's "
            "heartbeat, at most every group.consumer.assignment.interval.ms)"
        )
    for m in members:
        name = m.client_id or m.member_id
        moves = _difference(m.assignment, m.target_assignment or {})
        if moves:
            notes.append(f"{name} ({m.member_id}) is reconciling: {'; '.join(moves)}")
        if m.member_epoch is not None and m.member_epoch < group_epoch:
            notes.append(
                f"{name} ({m.member_id}) is at member epoch {m.member_epoch}, behind group "
                f"epoch {group_epoch}"
            )
        if m.member_type == "classic":
            notes.append(f"{name} ({m.member_id}) is a classic-protocol member of this group")
    if not members:
        notes.append("the group has no active members (offsets only)")
    return GroupReport(
        group=str(view["group_id"]),
        state=str(view.get("group_state") or "Unknown"),
        protocol_type="consumer",
        strategy=str(view.get("assignor") or "") or None,
        generation=None,
        leader=None,
        members=members,
        notes=notes,
        **balance._asdict(),
        group_type="consumer",
        group_epoch=group_epoch,
        assignment_epoch=target_epoch,
    )


def _partitions(by_topic: Mapping[str, list[int]]) -> str:
    return "; ".join(f"{t} {' '.join(map(str, ps))}" for t, ps in by_topic.items()) or "-"


def render_consumer_group_text(report: GroupReport, out: TextIO) -> None:
    """The human-readable form of a consumer-protocol group."""
    w = out.write
    w(f"group      {report.group}\n")
    w("type       consumer (group.protocol=consumer, KIP-848: the broker assigns)\n")
    w(f"state      {report.state}\n")
    w(f"assignor   {report.strategy or '-'} (on the broker)\n")
    w(f"epochs     group {report.group_epoch}, target assignment {report.assignment_epoch}\n")
    w(f"members    {len(report.members)}\n")
    for m in report.members:
        w(f"\n  {m.client_id or '-'}  {m.member_id}\n")
        extras = [f"host {m.host or '-'}", f"member epoch {m.member_epoch}"]
        if m.instance_id:
            extras.append(f"static {m.instance_id}")
        if m.rack:
            extras.append(f"rack {m.rack}")
        if m.member_type:
            extras.append(f"{m.member_type} member")
        w(f"    {', '.join(extras)}\n")
        regex = f" (regex {m.topic_regex})" if m.topic_regex else ""
        w(f"    subscribed: {', '.join(m.topics) or '-'}{regex}\n")
        write_holdings(m, w)
        if m.target_assignment == m.assignment:
            w("    target: the same (reconciled)\n")
        else:
            w(f"    target: {_partitions(m.target_assignment or {})}\n")
    write_balance(report, w)
