"""Rebalance metrics to OpenTelemetry: observable instruments on a meter provider (here the
SDK's in-memory reader; in production your exporter's).

    pip install '.[otel]' opentelemetry-sdk
    BOOTSTRAP_SERVERS=localhost:9092 python examples/metrics_otel.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python import KafkaConsumer
from kafka_assignors.metrics import otel

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-otel",
                         client_id="examples-otel-1",
                         partition_assignment_strategy=[CooperativeBalancedStickyAssignor()])
reader = InMemoryMetricReader()
otel.register(consumer, meter_provider=MeterProvider(metric_readers=[reader]))
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
data = reader.get_metrics_data()
names = sorted({m.name for rm in data.resource_metrics for sm in rm.scope_metrics
                for m in sm.metrics})
print(len(names), "metrics, e.g.", [n for n in names if "rebalance" in n][:3])
otel.unregister(consumer)
consumer.close()
