"""Moving a live group from `range` to `balanced-sticky` without stopping it: restart the
members one at a time listing both strategies (ours first), then once more with ours alone.
The broker's vote picks a strategy every member offers, so the group switches when the last
member offering only `range` is gone (docs/migration.md).

    BOOTSTRAP_SERVERS=localhost:9092 python examples/migrate_live_group.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from kafka.coordinator.assignors.range import RangePartitionAssignor

from kafka_assignors import BalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer
from kafka_assignors.negotiation import describe_group_strategy

GROUP = "examples-migration"
topic = ensure_topic("examples-migration", partitions=6)


def start(name: str, strategies: list[type]) -> KafkaConsumer:
    return KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id=GROUP, client_id=name,
                         partition_assignment_strategy=strategies)


def settle(members: dict[str, KafkaConsumer], step: str) -> None:
    """Poll every member until together they hold all 6 partitions, then show the vote."""
    def everyone_polls() -> None:
        for consumer in members.values():
            consumer.poll(timeout_ms=200)

    def settled() -> bool:
        owned = [tp for c in members.values() for tp in c.assignment()]
        return len(owned) == 6 == len(set(owned)) and all(c.assignment() for c in
                                                           members.values())

    poll_until(settled, everyone_polls, what=step)
    print(f"{step}: the group uses {describe_group_strategy(BOOTSTRAP, GROUP).strategy}")


members = {"a": start("a", [RangePartitionAssignor]), "b": start("b", [RangePartitionAssignor])}
settle(members, "before")
for name in ("a", "b"):  # rolling restart 1: both strategies, ours first
    members.pop(name).close()
    members[name] = start(name, [BalancedStickyAssignor, RangePartitionAssignor])
    settle(members, f"{name} restarted with both")
for name in ("a", "b"):  # rolling restart 2: ours alone
    members.pop(name).close()
    members[name] = start(name, [BalancedStickyAssignor])
    settle(members, f"{name} restarted with ours alone")
for consumer in members.values():
    consumer.close()
