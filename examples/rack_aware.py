"""Rack-aware (KIP-881): each member says its rack (`client_rack`) and reads partitions that
have a replica in it where the balance allows; on a cluster without racks it balances as
`balanced-sticky` does.

    BOOTSTRAP_SERVERS=localhost:9092 python examples/rack_aware.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from kafka import KafkaConsumer

from kafka_assignors import RackAwareAssignor

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-rack",
                         client_rack="zone-a",  # kafka-python 3: also fetches from that rack
                         partition_assignment_strategy=[RackAwareAssignor(client_rack="zone-a")])
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
print("assigned:", sorted(tp.partition for tp in consumer.assignment()))
consumer.close()
