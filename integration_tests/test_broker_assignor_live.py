"""balanced-sticky on the broker: a KIP-848 group (``group.protocol=consumer``) of
confluent-kafka members with unequal subscriptions, against the Python core, with Kafka's
``uniform`` on the same shape beside it.

The broker image installs ``broker-assignor/``'s jar and lists it first in
``group.consumer.assignors``; the members (``kip848_member.py`` processes) pick it with
``group.remote.assignor``. The group forms, a member joins, one leaves cleanly and one
crashes (SIGKILL; the group's ``consumer.session.timeout.ms`` is 6 s, heartbeats every 1 s).
Every stable assignment must be complete, disjoint and as good as the core's (same sum of
squared loads, same sum of squared per-topic shares, same spread), and each change must move
exactly as many partitions as the core moves from the same assignment.

A change is one assignment only if no other member leaves meanwhile. With Kafka's default
5 s heartbeat interval against the 6 s session, a loaded machine made the broker expire live
members' sessions too (Kafka 4.0.2, the crash step: two live members fenced and rejoined
empty, three target assignments; 7 moved where the core moves 1 in one). Heartbeats every
1 s leave a stall of 5 s before that happens; if it happens still (a member reports its
partitions lost), that step's moves are not compared: the balance still is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from kafka_assignors.core import GroupSpec, MemberSpec, balanced_sticky
from kafka_assignors.core.metrics import count_spread, moved_partitions, topic_spread

from .broker_view import describe
from .child_members import ChildMembers
from .conftest import BrokerHandle
from .consumer_protocol_group import by_topic_set, require_balanced_sticky, set_group_timing

log = logging.getLogger(__name__)

MEMBER = Path(__file__).with_name("kip848_member.py")
SESSION_MS = 6_000
HEARTBEAT_MS = 1_000  # Kafka's default (5 s) leaves a live member 1 s of slack in 6 s
Assigned = dict[str, dict[str, list[int]]]


def _squares(a: Mapping[str, Mapping[str, list[int]]]) -> tuple[int, int]:
    loads = sum(sum(map(len, by_topic.values())) ** 2 for by_topic in a.values())
    shares = sum(len(ps) ** 2 for by_topic in a.values() for ps in by_topic.values())
    return loads, shares


class _Group(ChildMembers):
    """KIP-848 member processes of one group."""

    def __init__(self, bootstrap: str, group: str, assignor: str) -> None:
        super().__init__(MEMBER, {"bootstrap": bootstrap, "group": group,
                                  "assignor": assignor})
        self.group_id = group
        _short_sessions(bootstrap, group)

    def own(self, name: str) -> frozenset[tuple[str, int]]:
        held: set[tuple[str, int]] = set()
        for event in self.events(name):
            if event["event"] == "assigned":
                held |= {(t, p) for t, p in event["partitions"]}
            elif event["event"] in ("revoked", "lost"):
                held -= {(t, p) for t, p in event["partitions"]}
        return frozenset(held)

    def lost(self, name: str) -> int:
        """How often the member reported its partitions lost (fenced: its session expired)."""
        return sum(1 for event in self.events(name) if event["event"] == "lost")

    def stable(self, total: int, timeout: float = 90.0) -> Assigned:
        """Until the broker calls the group Stable, each live member's own view matches the
        broker's, and every partition is held once (see broker_view for why not a quiet
        period)."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.base["bootstrap"]})
        deadline = time.monotonic() + timeout
        problem = "not described yet"
        while time.monotonic() < deadline:
            for name, m in self.members.items():
                if not m.gone and m.proc.poll() is not None:
                    pytest.fail(f"{name} exited on its own\n{self.log_tail(name)}")
            view = describe(admin, self.group_id)
            own = {name: self.own(name) for name in self.live()}
            held = [tp for tps in own.values() for tp in tps]
            if isinstance(view, str):
                problem = view
            elif not view.stable or view.members != own:
                problem = f"state {view.state}, broker {view.members}, members {own}"
            elif len(held) != total or len(set(held)) != total:
                problem = f"not every partition held once: {own}"
            else:
                return {name: by_topic_set(tps) for name, tps in own.items()}
            time.sleep(0.2)
        pytest.fail(f"no stable complete assignment in {timeout} s: {problem}")


def _short_sessions(bootstrap: str, group: str) -> None:
    """Sessions short enough that a crash is noticed in 6 s, and heartbeats often enough
    that live members do not expire too."""
    set_group_timing(bootstrap, group, session_ms=SESSION_MS, heartbeat_ms=HEARTBEAT_MS)


def _core(subs: Mapping[str, list[str]], counts: Mapping[str, int],
          owned: Assigned | None = None) -> Assigned:
    members = [MemberSpec(m, frozenset(ts), (owned or {}).get(m, {})) for m, ts in subs.items()]
    return balanced_sticky(GroupSpec.build(members, counts))


def test_balanced_sticky_on_the_broker_matches_the_core(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """Unequal subscriptions; a fresh group, a join, a clean leave and a crash: the broker's
    balanced-sticky is as balanced (in total and per topic) as the core and moves as few
    partitions; ``uniform`` on the same shape is printed beside it."""
    require_balanced_sticky(kafka_broker.bootstrap)
    a, b, c = make_topic(7), make_topic(3), make_topic(5)
    counts = {a: 7, b: 3, c: 5}
    total = sum(counts.values())
    first_subs = {"m1": [a, b], "m2": [a], "m3": [a, b, c], "m4": [c], "m5": [a, c]}
    steps = [("joins", "m6", [b, c]), ("leaves", "m3", []), ("crashes", "m2", [])]
    rows: list[str] = []
    for assignor in ("balanced-sticky", "uniform"):
        subs = {m: list(ts) for m, ts in first_subs.items()}
        group = _Group(kafka_broker.bootstrap, unique_name("group"), assignor)
        try:
            for name, topics in subs.items():
                group.add(name, topics=topics)
            now = group.stable(total)
            cells = [f"fresh: spread {count_spread(now)}, topic spread "
                     f"{topic_spread(now, subs)}"]
            if assignor == "balanced-sticky":
                want = _core(subs, counts)
                assert (_squares(now), count_spread(now)) == (_squares(want), count_spread(want))
            for kind, member, topics in steps:
                before, what = now, f"{member} {kind}"
                lost_before = {m: group.lost(m) for m in subs}
                if kind == "joins":
                    subs[member] = topics
                    group.add(member, topics=topics)
                else:
                    del subs[member]
                    (group.stop if kind == "leaves" else group.kill)(member)
                now = group.stable(total)
                kept = {m: before[m] for m in subs if m in before}
                moved = moved_partitions(kept, now, counts)
                # live members the broker expired too: the change was several assignments
                fenced = sorted(m for m in kept if m != member
                                and group.lost(m) > lost_before.get(m, 0))
                cells.append(f"{what}: spread {count_spread(now)}, topic spread "
                             f"{topic_spread(now, subs)}, moved {moved}"
                             + (f" (also fenced: {', '.join(fenced)})" if fenced else ""))
                if assignor != "balanced-sticky":
                    continue
                want = _core(subs, counts, kept)
                assert (_squares(now), count_spread(now)) == (_squares(want),
                                                              count_spread(want)), what
                if not fenced:
                    assert moved == moved_partitions(kept, want, counts), what
        finally:
            group.close()
        rows.append(f"{assignor:16} " + "; ".join(cells))
        log.info("%s", rows[-1])
    print("\n" + "\n".join(rows))
