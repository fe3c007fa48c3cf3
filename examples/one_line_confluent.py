"""confluent-kafka: librdkafka has no hook for a custom assignor, so
`kafka_assignors.confluent.Consumer` bridges it (same config dict, same methods).

    pip install '.[confluent]'
    BOOTSTRAP_SERVERS=localhost:9092 python examples/one_line_confluent.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until

from kafka_assignors.confluent import Consumer

topic = ensure_topic("examples-orders")
consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "examples-confluent",
                     "partition.assignment.strategy": "cooperative-balanced-sticky"})
consumer.subscribe([topic])
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(0.5))
print("assigned:", sorted(tp.partition for tp in consumer.assignment()))
consumer.close()
