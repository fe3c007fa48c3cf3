"""A custom strategy in one function: `make_assignor(name, function)` turns a function of the
group (`GroupSpec`) into an assignor; the leader checks its result (every partition exactly
once, to a member subscribed to its topic) before sending it.

    BOOTSTRAP_SERVERS=localhost:9092 python examples/custom_strategy.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from kafka import KafkaConsumer

from kafka_assignors import GroupSpec, TopicPartition, make_assignor


def by_member_id(group: GroupSpec) -> dict[str, list[TopicPartition]]:
    """Partition p of every topic to the p-th subscribed member (by member id), round robin."""
    out: dict[str, list[TopicPartition]] = {m.member_id: [] for m in group.members}
    for topic in group.subscribed_topics():
        members = sorted(m.member_id for m in group.members if topic in m.topics)
        for p in range(group.partition_count(topic)):
            out[members[p % len(members)]].append(TopicPartition(topic, p))
    return out


ByMemberId = make_assignor("by-member-id", by_member_id)

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-custom",
                         partition_assignment_strategy=[ByMemberId])
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
print("assigned:", sorted(tp.partition for tp in consumer.assignment()))
consumer.close()
