"""Cells, clients and the timelines (plans) a cell's members follow; client-agnostic.

A plan starts, stops and commands members through :class:`~.workload.Side` and measures each
change with ``Side.settle``. Members get generic config keys (``topics``, ``pattern``,
``partitions``, ``static_id``, plus the cell's ``usage``, ``options`` and ``extra``); the
client's member script turns them into its own API calls.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_assignors.embedded.admin import admin_client

from .workload import Host, Side

HOLD_S = 2.0  # steady reading between two changes


@dataclass(frozen=True)
class Cell:
    """One way of using a consumer, with the timeline its members follow."""

    key: str
    title: str
    usage: str  # what the client's member script does (its loop and calls)
    plan: str = "join-leave"
    options: Mapping[str, Any] = field(default_factory=dict)  # consumer configuration
    extra: Mapping[str, Any] = field(default_factory=dict)  # member config (batch_s...)
    clean: bool = True  # every rebalance is clean: records read twice count against a side
    slack_s: float = 3.0  # see judge.py: heartbeat interval + batch time
    bound_s: float = 45.0  # longest wait for a change to settle
    topics: int = 1
    partitions: int = 6
    slow: bool = False  # long-running: scheduled first
    #: why the cell is recorded but not judged: the client alone cannot do it at all, so
    #: both sides end in errors whose counts are a draw
    not_judged: str = ""


@dataclass(frozen=True)
class Client:
    """A client's side of the matrix: its member script, strategies and cells."""

    name: str
    version: str
    script: Path
    #: protocol -> ((our label, our strategy spec), (alone label, alone strategy spec))
    strategies: Mapping[str, tuple[tuple[str, str], tuple[str, str]]]
    cells: tuple[Cell, ...]
    base_options: Mapping[str, Any] = field(default_factory=dict)
    describe: Callable[[], dict[str, Any]] = dict  # runtime facts for the results file
    #: the interpreter that runs the member script (None: this one); another venv's
    #: (another version of the client) imports this checkout through PYTHONPATH
    python: str | None = None
    #: also run ours as the plain one line (member config ``runtime: False``: the client's
    #: own consumer class with our assignor, no runtime), judged against alone as ours is
    plain: bool = False
    #: ours is the client's own consumer with our assignor only (no runtime: kafka-python
    #: 2.x), so the client's own witnessed defects on ours are noted, as on the plain side
    ours_plain: bool = False
    #: called with (bootstrap, group id, the cell's consumer options) before ours' members
    #: start: where ours speaks a protocol whose session and heartbeat the broker sets, this
    #: gives its group what alone's members set themselves (the same cadence on both sides)
    prepare_ours: Callable[[str, str, Mapping[str, Any]], None] | None = None
    #: runs the alone side's members instead of ``script`` (one made per side, given the
    #: bootstrap), where alone is another client: Kafka's Java consumer (java_consumer.py)
    alone_host: Callable[[str], Host] | None = None


def _since(side: Side, name: str, event: str, bound: float) -> float | None:
    return side.first(name, event, bound)


def _settle(side: Side, label: str, since: float | None, want: set[tuple[str, int]],
            bound: float) -> None:
    if since is None:  # the member never got that far (it failed): the change never settled
        side.changes.append({"label": label, "start": time.monotonic(), "bound": bound,
                             "settled": None})
        return
    side.settle(label, since, want, bound)


def _form(side: Side, cell: Cell, names: list[str], **config: Any) -> None:
    for name in names:
        static: dict[str, Any] = {"static_id": name} if cell.plan == "static" else {}
        side.start(name, **config, **static)
    want = {tp for tp in side.partitions if tp[0] in config.get("topics", side.topics)}
    # from when the last of them has built its consumer (process start-up is not a rebalance)
    since = [_since(side, name, "subscribed", 60) for name in names]
    _settle(side, "formation", None if None in since else max(s for s in since if s),
            want, cell.bound_s)
    time.sleep(HOLD_S)


def _join(side: Side, cell: Cell, name: str, want: set[tuple[str, int]], **config: Any) -> None:
    static: dict[str, Any] = {"static_id": name} if cell.plan == "static" else {}
    side.start(name, **config, **static)
    _settle(side, "join", _since(side, name, "subscribed", 60), want, cell.bound_s)
    time.sleep(HOLD_S)


def _leave(side: Side, cell: Cell, name: str, want: set[tuple[str, int]],
           label: str = "leave") -> None:
    side.command(name, do="stop")
    _settle(side, label, _since(side, name, "closing", cell.bound_s), want, cell.bound_s)
    time.sleep(HOLD_S)


def join_leave(side: Side, cell: Cell) -> None:
    """Two members form the group, a third joins, the first leaves cleanly."""
    config: dict[str, Any] = {"topics": side.topics}
    if cell.usage == "pattern":
        config = {"pattern": f"^{re.escape(side.prefix)}-.*"}
    want = set(side.partitions)
    _form(side, cell, ["m1", "m2"], **config)
    _join(side, cell, "m3", want, **config)
    _leave(side, cell, "m1", want)


def subscription_change(side: Side, cell: Cell) -> None:
    """Members read topic a; after a join every member subscribes to a and b; then a leave."""
    a = [side.topics[0]]
    want_a = {tp for tp in side.partitions if tp[0] == a[0]}
    _form(side, cell, ["m1", "m2"], topics=a)
    _join(side, cell, "m3", want_a, topics=a)
    since = time.monotonic()
    for name in ("m1", "m2", "m3"):
        side.command(name, do="subscribe", topics=side.topics)
    _settle(side, "subscription change", since, set(side.partitions), cell.bound_s)
    time.sleep(HOLD_S)
    _leave(side, cell, "m1", set(side.partitions))


def static_restart(side: Side, cell: Cell) -> None:
    """Static members (group_instance_id) form, a third joins, one restarts with its id."""
    want = set(side.partitions)
    _form(side, cell, ["m1", "m2"], topics=side.topics)
    _join(side, cell, "m3", want, topics=side.topics)
    before = side.events()["m1"]
    held: list[list[Any]] = next(  # [topic, partition] pairs (JSON)
        (e["held"] for e in reversed(before) if e["event"] == "assignment"), [])
    # the new process is up (Python started, libraries loaded) before the old one stops: the
    # restart's gap is the consumers', not a loaded machine's process start-up, which alone
    # took longer than the session timeout now and then and got the member expelled
    side.start("m1-restarted", hold=True, topics=side.topics, static_id="m1")
    side.first("m1-restarted", "ready", 60)
    side.stop("m1", timeout=30)
    side.go("m1-restarted")
    _settle(side, "restart", _since(side, "m1-restarted", "subscribed", 60), want, cell.bound_s)
    after = side.events()["m1-restarted"]
    again: list[list[Any]] = next(
        (e["held"] for e in reversed(after) if e["event"] == "assignment"), [])
    side.changes[-1]["kept its partitions"] = sorted(map(tuple, held)) == sorted(map(tuple, again))
    time.sleep(HOLD_S)


def _rebalancing(bootstrap: str, group_id: str, bound: float) -> bool:
    """Wait (bounded) until the broker reports the group rebalancing: a classic group
    preparing or completing a rebalance, a consumer-protocol (KIP-848) group assigning or
    reconciling (DescribeGroups answers only for classic groups: those ask
    ConsumerGroupDescribe)."""
    from confluent_kafka.admin import AdminClient

    from ..broker_view import describe

    deadline = time.monotonic() + bound
    consumer_admin = AdminClient({"bootstrap.servers": bootstrap})
    with admin_client(bootstrap) as admin:
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):  # not known yet / coordinator loading
                state = admin.describe_groups([group_id])[group_id]["group_state"]
                if state in ("PreparingRebalance", "CompletingRebalance"):
                    return True
            view = describe(consumer_admin, group_id, timeout=5.0)
            # a consumer-protocol group between a new target assignment and every member
            # having reconciled to it: Assigning or Reconciling (neither Stable nor Empty)
            if (not isinstance(view, str) and view.group_type == "CONSUMER"
                    and view.state not in ("STABLE", "EMPTY", "DEAD")):
                return True
            time.sleep(0.05)
    return False


def close_during_rebalance(side: Side, cell: Cell) -> None:
    """A third member joins and, while the group rebalances, the first closes."""
    want = set(side.partitions)
    _form(side, cell, ["m1", "m2"], topics=side.topics)
    side.start("m3", topics=side.topics)
    since = _since(side, "m3", "subscribed", 60)
    during = _rebalancing(side.bootstrap, side.group_id, 20)
    side.command("m1", do="stop")
    _settle(side, "join + close", since, want, cell.bound_s)
    side.changes[-1]["closed while rebalancing"] = during
    time.sleep(HOLD_S)


def unsubscribe_resubscribe(side: Side, cell: Cell) -> None:
    """After a join, one member unsubscribes, waits 2 s and subscribes again; then a leave."""
    want = set(side.partitions)
    _form(side, cell, ["m1", "m2"], topics=side.topics)
    _join(side, cell, "m3", want, topics=side.topics)
    side.command("m1", do="unsubscribe", seconds=2)
    _settle(side, "resubscribe", _since(side, "m1", "resubscribed", cell.bound_s), want,
            cell.bound_s)
    time.sleep(HOLD_S)
    _leave(side, cell, "m2", want)


def manual_assign(side: Side, cell: Cell) -> None:
    """Two members assign() half the partitions each; one hands its half to a new member."""
    want = set(side.partitions)
    half = len(side.partitions) // 2
    first, second = side.partitions[:half], side.partitions[half:]
    side.start("m1", partitions=first)
    side.start("m2", partitions=second)
    since = [_since(side, name, "subscribed", 60) for name in ("m1", "m2")]
    _settle(side, "formation", None if None in since else max(s for s in since if s),
            want, cell.bound_s)
    # m3 is up before the hand-over (process start-up is not part of it, as for a join)
    side.start("m3", hold=True, partitions=first)
    side.first("m3", "ready", 60)
    time.sleep(HOLD_S)
    side.command("m1", do="stop")
    closing = _since(side, "m1", "closing", cell.bound_s)
    # the new owner starts once the old one has closed, so after its last commit (started
    # at "closing", m3 raced that commit for the committed offsets and could re-read a half)
    _since(side, "m1", "closed", cell.bound_s)
    side.go("m3")
    _settle(side, "handover", closing, want, cell.bound_s)
    time.sleep(HOLD_S)


def slow_batch(side: Side, cell: Cell) -> None:
    """After a join, one member takes longer than max_poll_interval_ms over one batch; later a
    clean leave."""
    want = set(side.partitions)
    _form(side, cell, ["m1", "m2"], topics=side.topics)
    _join(side, cell, "m3", want, topics=side.topics)
    side.command("m1", do="slow", seconds=cell.extra["slow_s"])
    done = _since(side, "m1", "slow-done", cell.bound_s + cell.extra["slow_s"])
    _settle(side, "after the slow batch", done, want, cell.bound_s)
    time.sleep(HOLD_S)
    _leave(side, cell, "m2", want)


PLANS: dict[str, Callable[[Side, Cell], None]] = {
    "join-leave": join_leave,
    "subscription-change": subscription_change,
    "static": static_restart,
    "close-during-rebalance": close_during_rebalance,
    "unsubscribe": unsubscribe_resubscribe,
    "assign": manual_assign,
    "slow-batch": slow_batch,
}
