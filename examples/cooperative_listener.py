"""Cooperative rebalancing with a rebalance listener: when a second member joins, the first
gives up only the partitions that move (its listener sees them revoked), and keeps the rest.

    BOOTSTRAP_SERVERS=localhost:9092 python examples/cooperative_listener.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from kafka import ConsumerRebalanceListener, TopicPartition

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer


class Printer(ConsumerRebalanceListener):
    def __init__(self, name: str) -> None:
        self.name = name

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # commit what you processed of these here (commit_async during a rebalance)
        print(f"{self.name} revoked: {sorted(tp.partition for tp in revoked)}")

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        print(f"{self.name} assigned: {sorted(tp.partition for tp in assigned)}")


topic = ensure_topic("examples-cooperative", partitions=4)


def member(name: str) -> KafkaConsumer:
    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, group_id="examples-cooperative",
                             client_id=name,
                             partition_assignment_strategy=[CooperativeBalancedStickyAssignor])
    consumer.subscribe([topic], listener=Printer(name))
    return consumer


first = member("first")
poll_until(lambda: len(first.assignment()) == 4, lambda: first.poll(timeout_ms=300))
second = member("second")  # joins: "first" gives up two partitions, keeps two


def both_poll() -> None:
    first.poll(timeout_ms=100)
    second.poll(timeout_ms=100)


poll_until(lambda: len(first.assignment()) == 2 and len(second.assignment()) == 2, both_poll)
print("first keeps:", sorted(tp.partition for tp in first.assignment()))
print("second got:", sorted(tp.partition for tp in second.assignment()))
second.close()
first.close()
