"""kafka-python: our assignor in one line (`partition_assignment_strategy`).

    BOOTSTRAP_SERVERS=localhost:9092 python examples/one_line_kafka_python.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from kafka import KafkaConsumer

from kafka_assignors import CooperativeBalancedStickyAssignor

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(
    topic,
    bootstrap_servers=BOOTSTRAP,
    group_id="examples-one-line",
    partition_assignment_strategy=[CooperativeBalancedStickyAssignor()],  # the one line
)
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
print("assigned:", sorted(tp.partition for tp in consumer.assignment()))
consumer.close()
