"""The Prometheus and OpenTelemetry exports of GroupMetrics (no broker, no server)."""

from __future__ import annotations

import math
from typing import Any, cast

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kafka_assignors.metrics import COORDINATOR_GROUP, QUALITY_GROUP, GroupMetrics
from kafka_assignors.metrics import otel as otel_export
from kafka_assignors.metrics import prometheus as prom_export


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _two_rebalances(client_id: str = "c1") -> tuple[GroupMetrics, Clock]:
    clock = Clock()
    gm = GroupMetrics(tags={"client-id": client_id}, clock=clock)
    gm.rebalance_started()
    clock.now += 0.25
    gm.rebalance_succeeded()
    clock.now += 10
    gm.rebalance_started()
    clock.now += 0.75
    gm.rebalance_failed()
    gm.rebalance_succeeded()
    clock.now += 3.2
    return gm, clock


def _scrape(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_prometheus_names_follow_the_jmx_exporter_convention() -> None:
    """Java's group and ours get kafka_consumer_<group>_<name>, snake-cased."""
    assert (
        prom_export.metric_name(COORDINATOR_GROUP, "rebalance-latency-avg")
        == "kafka_consumer_consumer_coordinator_metrics_rebalance_latency_avg"
    )
    assert prom_export.metric_name(QUALITY_GROUP, "partitions-moved-last").startswith(
        "kafka_consumer_kafka_assignors_assignment_metrics_"
    )


def test_a_scrape_reads_the_java_rebalance_metrics_with_client_labels() -> None:
    """Counts and latencies recorded on GroupMetrics come out of a scrape with the same
    values, totals as counters, tags as labels."""
    gm, _ = _two_rebalances()
    registry = CollectorRegistry()
    prom_export.register(gm, registry)
    got = _scrape(registry)
    labels = (("client_id", "c1"),)
    prefix = "kafka_consumer_consumer_coordinator_metrics_"
    assert got[(prefix + "rebalance_total", labels)] == 2
    assert got[(prefix + "failed_rebalance_total", labels)] == 1
    assert got[(prefix + "rebalance_latency_max", labels)] == pytest.approx(750)
    assert got[(prefix + "rebalance_latency_avg", labels)] == pytest.approx(500)
    assert got[(prefix + "rebalance_latency_total", labels)] == pytest.approx(1000)
    assert got[(prefix + "last_rebalance_seconds_ago", labels)] == 3
    text = generate_latest(registry).decode()
    assert f"# TYPE {prefix}rebalance_total counter" in text
    assert f"# TYPE {prefix}rebalance_latency_avg gauge" in text


def test_values_are_read_at_scrape_time_and_consumers_share_one_collector() -> None:
    """A second consumer registers into the same collector; a rebalance recorded after
    registration shows at the next scrape; unregister drops the consumer's series."""
    gm1, clock = _two_rebalances("c1")
    gm2, _ = _two_rebalances("c2")
    registry = CollectorRegistry()
    first = prom_export.register(gm1, registry)
    assert prom_export.register(gm2, registry) is first
    name = "kafka_consumer_consumer_coordinator_metrics_rebalance_total"
    assert _scrape(registry)[(name, (("client_id", "c2"),))] == 2
    gm1.rebalance_started()
    clock.now += 0.1
    gm1.rebalance_succeeded()
    assert _scrape(registry)[(name, (("client_id", "c1"),))] == 3
    assert prom_export.unregister(gm2, registry)
    assert (name, (("client_id", "c2"),)) not in _scrape(registry)


def test_two_consumers_with_the_same_labels_export_one_series(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Same client id twice (kafka-python's default): one series, a warning, a valid scrape."""
    registry = CollectorRegistry()
    held = [_two_rebalances("same")[0] for _ in range(2)]  # (exports hold them weakly)
    for gm in held:
        prom_export.register(gm, registry)
    text = generate_latest(registry).decode()
    assert text.count('rebalance_total{client_id="same"}') == 2  # rebalance + failed-rebalance
    assert "own client_id" in caplog.text


def test_a_consumer_is_found_through_the_attribute_its_adapter_sets() -> None:
    """Any consumer object carrying GroupMetrics (kafka-python, aiokafka, the bridge) is
    exported by passing the consumer itself."""
    from types import SimpleNamespace

    from kafka_assignors.metrics import attach

    gm, _ = _two_rebalances("via-consumer")
    consumer = SimpleNamespace()
    assert attach(consumer, gm)
    registry = CollectorRegistry()
    prom_export.register(consumer, registry)
    key = ("kafka_consumer_consumer_coordinator_metrics_rebalance_total",
           (("client_id", "via-consumer"),))
    assert _scrape(registry)[key] == 2
    assert prom_export.unregister(consumer, registry)
    assert key not in _scrape(registry)


def test_an_object_without_metrics_is_refused_with_the_reason() -> None:
    """register() on something that is no consumer of ours says what it needs."""
    with pytest.raises(TypeError, match="carries no kafka-assignors metrics"):
        prom_export.register(object(), CollectorRegistry())
    with pytest.raises(TypeError, match="carries no kafka-assignors metrics"):
        otel_export.register(object(), MeterProvider())


def _otel_points(reader: InMemoryMetricReader) -> dict[tuple[str, tuple[tuple[str, Any], ...]],
                                                       tuple[float, str]]:
    data = reader.get_metrics_data()
    assert data is not None
    out = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points:
                    point = cast(NumberDataPoint, p)  # observable sums and gauges only
                    assert point.attributes is not None  # each observation carries its tags
                    out[(m.name, tuple(sorted(point.attributes.items())))] = (
                        point.value, type(m.data).__name__
                    )
    return out


def test_otel_reads_the_same_numbers_through_observable_instruments() -> None:
    """The in-memory reader sees Java's names with the same values; totals are monotonic
    sums, the rest gauges; values follow later rebalances."""
    gm, clock = _two_rebalances("c1")
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    otel_export.register(gm, meter_provider=provider)
    points = _otel_points(reader)
    attrs = (("client-id", "c1"),)
    assert points[("kafka.consumer.rebalance-total", attrs)] == (2, "Sum")
    assert points[("kafka.consumer.failed-rebalance-total", attrs)] == (1, "Sum")
    value, kind = points[("kafka.consumer.rebalance-latency-max", attrs)]
    expected: tuple[object, str] = (pytest.approx(750), "Gauge")  # approx is no float
    assert (value, kind) == expected
    gm.rebalance_started()
    clock.now += 0.1
    gm.rebalance_succeeded()
    assert _otel_points(reader)[("kafka.consumer.rebalance-total", attrs)][0] == 3
    provider.shutdown()


def test_otel_a_second_consumer_shares_the_instruments() -> None:
    """Two consumers on one provider: one instrument per name, one point per consumer."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    held = [_two_rebalances(client)[0] for client in ("a", "b")]  # (held weakly)
    for gm in held:
        otel_export.register(gm, meter_provider=provider)
    points = _otel_points(reader)
    for client in ("a", "b"):
        assert points[("kafka.consumer.rebalance-total", (("client-id", client),))][0] == 2
    provider.shutdown()


def test_a_dropped_consumer_stops_being_exported() -> None:
    """The export holds consumers weakly: once the application drops one (and it is
    collected), its series are gone without an unregister call."""
    import gc

    registry = CollectorRegistry()
    gm, _ = _two_rebalances("gone")
    prom_export.register(gm, registry)
    assert any("gone" in str(k) for k in _scrape(registry))
    del gm
    gc.collect()
    assert not any("gone" in str(k) for k in _scrape(registry))


def test_no_samples_yet_reads_nan_not_infinity() -> None:
    """A max over no rebalance exports NaN to Prometheus (as Java's reads), never -inf, and
    no point to OpenTelemetry."""
    gm = GroupMetrics(tags={"client-id": "fresh"}, clock=Clock())
    registry = CollectorRegistry()
    prom_export.register(gm, registry)
    value = _scrape(registry)[
        ("kafka_consumer_consumer_coordinator_metrics_rebalance_latency_max",
         (("client_id", "fresh"),))
    ]
    assert math.isnan(value)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    otel_export.register(gm, meter_provider=provider)
    points = _otel_points(reader)
    assert ("kafka.consumer.rebalance-latency-max", (("client-id", "fresh"),)) not in points
    assert points[("kafka.consumer.rebalance-total", (("client-id", "fresh"),))][0] == 0
    provider.shutdown()
