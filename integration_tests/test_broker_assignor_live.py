"""balanced-sticky on the broker: a KIP-848 group (``group.protocol=consumer``) of
confluent-kafka members with unequal subscriptions, against the Python core, with Kafka's
``uniform`` on the same shape beside it.

The broker image installs ``broker-assignor/``'s jar and lists it first in
``group.consumer.assignors``; the members pick it with ``group.remote.assignor``. Every
stable assignment must be complete, disjoint and as good as the core's (same sum of squared
loads, same sum of squared per-topic shares), and a leave must move exactly as many
partitions as the core would move from the same assignment.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kafka_assignors.core import GroupSpec, MemberSpec, balanced_sticky
from kafka_assignors.core.metrics import count_spread, moved_partitions, topic_spread

from .conftest import BrokerHandle

log = logging.getLogger(__name__)

Assigned = dict[str, dict[str, list[int]]]


def _squares(a: Mapping[str, Mapping[str, list[int]]]) -> tuple[int, int]:
    loads = sum(sum(map(len, by_topic.values())) ** 2 for by_topic in a.values())
    shares = sum(len(ps) ** 2 for by_topic in a.values() for ps in by_topic.values())
    return loads, shares


class _Group:
    """confluent-kafka members of one consumer-protocol group, polled from this thread."""

    def __init__(self, bootstrap: str, group: str, assignor: str) -> None:
        self.conf = {"bootstrap.servers": bootstrap, "group.id": group,
                     "group.protocol": "consumer", "group.remote.assignor": assignor}
        self.members: dict[str, Any] = {}
        self.errors: list[str] = []

    def join(self, name: str, topics: list[str]) -> None:
        from confluent_kafka import Consumer

        def error(err: Any) -> None:
            self.errors.append(f"{name}: {err}")

        consumer = Consumer({**self.conf, "client.id": name, "error_cb": error})
        consumer.subscribe(topics)
        self.members[name] = consumer

    def leave(self, name: str) -> None:
        self.members.pop(name).close()

    def close(self) -> None:
        for consumer in self.members.values():
            consumer.close()
        self.members.clear()

    def stable(self, total: int, timeout: float = 60.0) -> Assigned:
        """Poll until the broker calls the group Stable (target assignment computed for the
        current group epoch and every member reconciled to it), every member's own view
        matches the broker's, and every partition is held once.

        A quiet period is not enough: the broker computes a new target only on a heartbeat
        after its assignment interval, and heartbeats are 5 s apart by default, so a group
        can look settled for seconds on an old target (KIP-1263).
        """
        from confluent_kafka import ConsumerGroupState
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.conf["bootstrap.servers"]})
        deadline = time.monotonic() + timeout
        now: Assigned = {}
        state = None
        while time.monotonic() < deadline:
            for consumer in self.members.values():
                consumer.poll(0.1)
            now = {name: _by_topic(consumer.assignment())
                   for name, consumer in self.members.items()}
            described = admin.describe_consumer_groups([self.conf["group.id"]])
            group = described[self.conf["group.id"]].result()
            state = group.state
            broker_view = {m.client_id: _by_topic(m.assignment.topic_partitions)
                           for m in group.members}
            held = [(t, p) for a in now.values() for t, ps in a.items() for p in ps]
            if (state == ConsumerGroupState.STABLE and broker_view == now
                    and len(held) == total == len(set(held))):
                return now
        pytest.fail(f"no stable complete assignment in {timeout} s: state {state}, {now}; "
                    f"errors {self.errors}")


def _by_topic(tps: Any) -> dict[str, list[int]]:
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return {t: sorted(ps) for t, ps in by_topic.items()}


def _core(subs: Mapping[str, list[str]], counts: Mapping[str, int],
          owned: Assigned | None = None) -> Assigned:
    members = [MemberSpec(m, frozenset(ts), (owned or {}).get(m, {})) for m, ts in subs.items()]
    return balanced_sticky(GroupSpec.build(members, counts))


def test_balanced_sticky_on_the_broker_matches_the_core(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    """Unequal subscriptions, a fresh group then a leave: the broker's balanced-sticky is as
    balanced (in total and per topic) as the core and moves as few partitions; ``uniform``
    on the same shape is logged beside it."""
    if kafka_broker.byo:
        pytest.skip("needs the project's broker image (our assignor in group.consumer.assignors)")
    a, b, c = make_topic(7), make_topic(3), make_topic(5)
    counts = {a: 7, b: 3, c: 5}
    subs = {"m1": [a, b], "m2": [a], "m3": [a, b, c], "m4": [c], "m5": [a, c]}
    rows = []
    for assignor in ("balanced-sticky", "uniform"):
        group = _Group(kafka_broker.bootstrap, unique_name("group"), assignor)
        try:
            for name, topics in subs.items():
                group.join(name, topics)
            first = group.stable(sum(counts.values()))
            group.leave("m3")
            after = group.stable(sum(counts.values()))
        finally:
            group.close()
        left = {m: ts for m, ts in subs.items() if m != "m3"}
        moved = moved_partitions({m: first[m] for m in left}, after, counts)
        rows.append((assignor, first, after, moved))
        log.info("%s: first %s (spread %d, topic spread %d); after m3 left %s, moved %d",
                 assignor, first, count_spread(first), topic_spread(first, subs), after, moved)
        if assignor != "balanced-sticky":
            continue
        want = _core(subs, counts)
        assert _squares(first) == _squares(want)
        assert count_spread(first) == count_spread(want)
        want_after = _core(left, counts, {m: first[m] for m in left})
        assert _squares(after) == _squares(want_after)
        assert moved == moved_partitions({m: first[m] for m in left}, want_after, counts)
    for assignor, first, after, moved in rows:
        print(f"{assignor:16} first: spread {count_spread(first)}, topic spread "
              f"{topic_spread(first, subs)}, squares {_squares(first)}; after a leave: "
              f"moved {moved}, squares {_squares(after)}")
