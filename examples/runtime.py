"""The consumer runtime: kafka-python's `KafkaConsumer`, imported from us. Same constructor;
joins are never dropped and cooperative members keep reading what they keep during a
rebalance (docs/runtime.md).

    BOOTSTRAP_SERVERS=localhost:9092 python examples/runtime.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer  # instead of: from kafka import ...

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-runtime",
                         partition_assignment_strategy=[CooperativeBalancedStickyAssignor()])
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
print("assigned:", sorted(tp.partition for tp in consumer.assignment()))
consumer.close()
