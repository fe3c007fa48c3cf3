"""The Prometheus and OpenTelemetry exports on a real broker: a kafka-python consumer with our
cooperative assignor goes through rebalances, then an HTTP scrape and an in-memory OTel read
return its counters and timings (see ``metrics_scrape``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from .metrics_scrape import PARTITIONS, run_scrape

C = "kafka_consumer_consumer_coordinator_metrics_"
Q = "kafka_consumer_kafka_assignors_assignment_metrics_"


def test_a_scrape_and_an_otel_read_return_what_the_consumer_went_through(
    kafka_broker: Any, make_topic: Callable[..., str]
) -> None:
    """After a join, a second member's join (two cooperative rounds) and its leave, the HTTP
    scrape's rebalance-total equals the successful SyncGroups kafka-python logged, its
    failed-rebalance-total counts every error response, every latency lies within the run's
    span, the leader's moves are the hand-over; and every metric reads the same in the
    scrape, the OTel read and consumer.metrics()."""
    scrape = run_scrape(kafka_broker.bootstrap, make_topic(PARTITIONS))
    _counters_and_timings(scrape)
    _same_everywhere(scrape)


def _counters_and_timings(scrape: Any) -> None:
    assert scrape.holdings == [PARTITIONS, PARTITIONS // 2, PARTITIONS]
    assert scrape.syncs >= 3
    assert scrape.samples[C + "rebalance_total"] == scrape.syncs
    # failed round trips: each error response (a new broker's coordinator still loading
    # answers some), plus any lost connection, which no response logs
    assert scrape.samples[C + "failed_rebalance_total"] >= scrape.error_responses
    assert 0 < scrape.samples[C + "rebalance_latency_max"] <= scrape.span_ms
    assert 0 < scrape.samples[C + "rebalance_latency_avg"] <= scrape.samples[
        C + "rebalance_latency_max"]
    assert scrape.samples[C + "rebalance_latency_total"] <= scrape.span_ms
    assert 0 <= scrape.samples[C + "last_rebalance_seconds_ago"] <= scrape.span_ms / 1000
    # the consumer led every assignment; the second member's join moved half the partitions
    assert scrape.samples[Q + "assignments_total"] >= 3
    assert scrape.samples[Q + "partitions_moved_total"] == PARTITIONS // 2
    assert scrape.samples[Q + "count_spread_last"] == 0


def _same_everywhere(scrape: Any) -> None:
    # counts exactly; a windowed rate or seconds-ago read a moment apart may differ a little
    compared = 0
    for group, prom_prefix, otel_prefix in (
        ("consumer-coordinator-metrics", C, "kafka.consumer."),
        ("kafka-assignors-assignment-metrics", Q, "kafka.consumer.assignment."),
    ):
        for name, value in scrape.own[group].items():
            prom = scrape.samples[prom_prefix + name.replace("-", "_")]
            if not math.isfinite(value):  # no sample yet: NaN in Prometheus, no OTel point
                assert math.isnan(prom) and otel_prefix + name not in scrape.otel, name
                continue
            otel_value, kind = scrape.otel[otel_prefix + name]
            assert kind == ("Sum" if name.endswith("-total") else "Gauge"), name
            for got in (prom, otel_value):
                if name.endswith(("-rate", "-rate-per-hour", "-seconds-ago")):
                    assert got == pytest.approx(value, rel=0.2, abs=1), (name, got, value)
                else:
                    assert got == pytest.approx(value), (name, got, value)
            compared += 1
    assert compared >= 20


def _exported(registry: Any, reader: Any, client_id: str) -> tuple[dict[str, float],
                                                                   dict[str, float]]:
    """(Prometheus sample name -> value, OTel instrument name -> value) for one client."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    prom = {s.name: s.value
            for family in text_string_to_metric_families(generate_latest(registry).decode())
            for s in family.samples if s.labels.get("client_id") == client_id}
    data = reader.get_metrics_data()
    points = {m.name: p.value
              for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
              for p in m.data.data_points if dict(p.attributes).get("client-id") == client_id}
    return prom, points


def _register_both(consumer: Any) -> tuple[Any, Any, Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from prometheus_client import CollectorRegistry

    from kafka_assignors.metrics import otel, prometheus

    registry = CollectorRegistry()
    prometheus.register(consumer, registry)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    otel.register(consumer, meter_provider=provider)
    return registry, reader, provider


def _check_first_join(values: dict[str, dict[str, float]], prom: dict[str, float],
                      points: dict[str, float]) -> None:
    own = values["consumer-coordinator-metrics"]
    assert own["rebalance-total"] >= 1
    assert prom[C + "rebalance_total"] == own["rebalance-total"]
    assert points["kafka.consumer.rebalance-total"] == own["rebalance-total"]
    assert prom[C + "rebalance_latency_max"] == pytest.approx(own["rebalance-latency-max"])
    quality = values["kafka-assignors-assignment-metrics"]
    assert prom[Q + "assignments_total"] == quality["assignments-total"] >= 1
    assert points["kafka.consumer.assignment.assignments-total"] == quality["assignments-total"]


def test_one_call_exports_an_aiokafka_consumer(
    kafka_broker: Any, make_topic: Callable[..., str]
) -> None:
    """An aiokafka consumer with our assignor, registered before start(), is exported after
    its first join with the numbers kafka_assignors.aiokafka.metrics() gives."""
    import asyncio
    import time

    from aiokafka import AIOKafkaConsumer

    import kafka_assignors.aiokafka as kaa
    from kafka_assignors.metrics import instrument

    topic = make_topic(4)

    async def run() -> tuple[Any, ...]:
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=kafka_broker.bootstrap, group_id=f"export-aio-{topic}",
            client_id="exported-aiokafka",
            partition_assignment_strategy=(kaa.BalancedStickyAssignor(),),
        )
        instrument(consumer)  # the metrics, explicitly (docs/runtime.md)
        registry, reader, provider = _register_both(consumer)  # before start()
        await consumer.start()
        try:
            deadline = time.monotonic() + 60
            while len(consumer.assignment()) < 4:
                assert time.monotonic() < deadline, "no assignment within 60 s"
                await consumer.getmany(timeout_ms=200)
            values = kaa.metrics(consumer)
            prom, points = _exported(registry, reader, "exported-aiokafka")
        finally:
            await consumer.stop()
            provider.shutdown()
        return values, prom, points

    _check_first_join(*asyncio.run(run()))


def test_one_call_exports_a_bridged_confluent_consumer(
    kafka_broker: Any, make_topic: Callable[..., str]
) -> None:
    """A kafka_assignors.confluent.Consumer is exported after its first join with the numbers
    its own metrics() gives."""
    import time

    from kafka_assignors.confluent import Consumer

    topic = make_topic(4)
    consumer: Any = Consumer({
        "bootstrap.servers": kafka_broker.bootstrap, "group.id": f"export-bridge-{topic}",
        "client.id": "exported-bridge", "partition.assignment.strategy": "balanced-sticky",
    })
    registry, reader, provider = _register_both(consumer)
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(consumer.assignment()) < 4:
            assert time.monotonic() < deadline, "no assignment within 60 s"
            consumer.poll(0.2)
        values = consumer.metrics()
        prom, points = _exported(registry, reader, "exported-bridge")
    finally:
        consumer.close()
        provider.shutdown()
    _check_first_join(values, prom, points)
