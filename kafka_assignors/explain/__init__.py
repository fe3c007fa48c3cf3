"""``kafka-assignors explain``: who owns what in a live consumer group, right now.

Works for any client (kafka-python, Java, librdkafka, ...): it reads the
group's description, committed offsets and log end offsets with an admin
client.  Our assignors' user data is decoded; other clients' is shown raw.
Consumer-protocol groups (``group.protocol=consumer``, KIP-848) are described
with ConsumerGroupDescribe: the broker's assignor, the group and target
assignment epochs, and each member's epoch, assignment and target assignment.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict
from typing import Any, TextIO

from .connection import ConnectionConfigError, add_connection_options, connection_kwargs
from .consumer_group import consumer_group_report, render_consumer_group_text
from .fetch import ExplainError, fetch_group
from .model import GroupReport, group_report
from .quality import LastRebalance, last_rebalance, render_last_rebalance
from .text import write_balance, write_holdings

__all__ = ["ExplainError", "GroupReport", "add_parser", "explain_group", "render_text", "run"]

log = logging.getLogger(__name__)


def add_parser(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "explain",
        help="show a live group: strategy, members, assignment, lag, imbalance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--group", required=True, help="consumer group id")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_connection_options(parser)
    parser.set_defaults(func=run)


def explain_group(kwargs: dict[str, Any], group_id: str) -> GroupReport:
    """Fetch and build the report (raises ExplainError)."""
    description, committed, end_offsets = fetch_group(kwargs, group_id)
    if description.get("group_type") == "consumer":
        return consumer_group_report(description, committed, end_offsets)
    return with_last_rebalance(group_report(group_id, description, committed, end_offsets),
                               description)


def with_last_rebalance(report: GroupReport, description: dict[str, Any]) -> GroupReport:
    """``report`` with the last rebalance's figures (classic groups; see ``quality``)."""
    figures = last_rebalance(description.get("members") or (), report.members)
    report.last_rebalance = asdict(figures) if figures is not None else None
    return report


def _user_data(view: dict[str, Any] | None) -> str:
    if view is None:
        return "-"
    if "decoded" in view:
        return json.dumps(view["decoded"], sort_keys=True, separators=(",", ":"))
    return f"raw {view['raw']}"


def render_text(report: GroupReport, out: TextIO) -> None:
    """The human-readable form."""
    if report.group_type == "consumer":
        render_consumer_group_text(report, out)
        return
    w = out.write
    w(f"group      {report.group}\n")
    w(f"state      {report.state}\n")
    w(f"protocol   {report.protocol_type or '-'} / strategy {report.strategy or '-'}\n")
    gen = report.generation if report.generation is not None else "unknown"
    if report.generation_source == "subscriptions":
        # a subscription carries the generation of what the member held when it joined
        w(f"generation after {gen} (members joined holding generation {gen}'s assignment)\n")
    else:
        source = " (as the leader wrote it in the assignment)" if report.generation else ""
        w(f"generation {gen}{source}\n")
    if report.leader is not None:
        client = next(
            (m.client_id for m in report.members if m.member_id == report.leader), None
        )
        named = f" ({client})" if client else ""
        w(f"leader     {report.leader}{named} (from the assignment user data)\n")
    else:
        w("leader     not reported by the broker (DescribeGroups)\n")
    w(f"members    {len(report.members)}\n")
    for m in report.members:
        w(f"\n  {m.client_id or '-'}  {m.member_id}\n")
        extras = [f"host {m.host or '-'}"]
        if m.instance_id:
            extras.append(f"static {m.instance_id}")
        if m.rack:
            extras.append(f"rack {m.rack}")
        w(f"    {', '.join(extras)}\n")
        w(f"    subscribed: {', '.join(m.topics) or '-'}\n")
        w(f"    subscription user data: {_user_data(m.subscription_user_data)}\n")
        w(f"    assignment user data:   {_user_data(m.assignment_user_data)}\n")
        write_holdings(m, w)
    if report.last_rebalance is not None:
        render_last_rebalance(LastRebalance(**report.last_rebalance), w)
    write_balance(report, w)


def run(args: argparse.Namespace) -> int:
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("kafka").setLevel(logging.CRITICAL)  # explain reports errors itself
    try:
        kwargs, ignored = connection_kwargs(args)
        if ignored:
            log.warning("ignored client properties (not connection settings): %s", ignored)
        report = explain_group(kwargs, args.group)
    except (ExplainError, ConnectionConfigError) as exc:
        print(f"kafka-assignors explain: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(report.to_dict(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        render_text(report, sys.stdout)
    return 0
