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
