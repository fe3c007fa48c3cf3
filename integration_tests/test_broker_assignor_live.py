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
from collections.abc import Callable, Mapping

from kafka_assignors.core import GroupSpec, MemberSpec, balanced_sticky
from kafka_assignors.core.metrics import count_spread, moved_partitions, topic_spread

from .conftest import BrokerHandle
from .consumer_protocol_group import Assigned, ConsumerProtocolGroup, require_balanced_sticky

log = logging.getLogger(__name__)

def _squares(a: Mapping[str, Mapping[str, list[int]]]) -> tuple[int, int]:
    loads = sum(sum(map(len, by_topic.values())) ** 2 for by_topic in a.values())
    shares = sum(len(ps) ** 2 for by_topic in a.values() for ps in by_topic.values())
    return loads, shares


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
    require_balanced_sticky(kafka_broker.bootstrap)
    a, b, c = make_topic(7), make_topic(3), make_topic(5)
    counts = {a: 7, b: 3, c: 5}
    subs = {"m1": [a, b], "m2": [a], "m3": [a, b, c], "m4": [c], "m5": [a, c]}
    rows = []
    for assignor in ("balanced-sticky", "uniform"):
        group = ConsumerProtocolGroup(kafka_broker.bootstrap, unique_name("group"),
                                      {"group.remote.assignor": assignor})
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
