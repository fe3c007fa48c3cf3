"""Rebalance metrics to Prometheus, under the names a Java consumer's JMX exporter gives
(`kafka_consumer_consumer_coordinator_metrics_...`). Serve them with
`prometheus_client.start_http_server(port)`; here we print what a scrape would read.

    pip install '.[prometheus]'
    BOOTSTRAP_SERVERS=localhost:9092 python examples/metrics_prometheus.py
"""

from __future__ import annotations

import prometheus_client
from _common import BOOTSTRAP, ensure_topic, poll_until

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer  # records the metrics itself
from kafka_assignors.metrics import prometheus

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-prometheus",
                         client_id="examples-prometheus-1",
                         partition_assignment_strategy=[CooperativeBalancedStickyAssignor()])
registry = prometheus_client.CollectorRegistry()  # default: prometheus_client's global one
prometheus.register(consumer, registry=registry)
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
scrape = prometheus_client.generate_latest(registry).decode()
print("\n".join(line for line in scrape.splitlines() if "rebalance_total" in line))
prometheus.unregister(consumer)
consumer.close()
