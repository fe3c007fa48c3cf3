"""A kafka-python consumer with our assignor, configured as the README says, scraped over HTTP.

``run_scrape(bootstrap, topic)`` takes one in-process consumer (``scraped``, the group's
first member and so its leader) through rebalances on a real broker: it joins alone, a
second member (a process of ``kafka_assignors.embedded``) joins (cooperative: the hand-over
takes a second round), the second leaves. It counts the successful SyncGroup responses
kafka-python logs for it (the event Java's ``rebalance-total`` counts), then scrapes
``prometheus_client.start_http_server`` on 127.0.0.1 and reads an OpenTelemetry SDK
in-memory reader, both registered with one call each. The test asserts on the result;

    python -m integration_tests.metrics_scrape --out docs/results/

runs it on a broker of its own (or ``--bootstrap``) and writes the scrape
(``metrics_scrape.txt``) and what was observed (``metrics_scrape.json``), the README's
example.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import NumberDataPoint

CLIENT_ID = "scraped"
PARTITIONS = 6


@dataclass
class ScrapeResult:
    #: the exposition text the HTTP endpoint returned
    text: str
    #: (name, labels) -> value parsed from ``text``
    samples: dict[str, float]
    #: OTel instrument name -> (value, point kind) for client-id=scraped
    otel: dict[str, list[Any]]
    #: the consumer's own ``consumer.metrics()`` values of the two groups, read right after
    own: dict[str, dict[str, float]]
    #: successful SyncGroup responses kafka-python logged for the consumer
    syncs: int
    #: JoinGroup/SyncGroup responses with an error it logged (a lost connection is not one)
    error_responses: int
    #: wall-clock span of the whole run (ms): no latency can exceed it
    span_ms: float
    #: partition counts the scraped consumer held after each step
    holdings: list[int] = field(default_factory=list)


class RoundTrips(logging.Handler):
    """Counts the JoinGroup/SyncGroup responses kafka-python logs (DEBUG): SyncGroup ones
    without error (successful rebalances), and those with an error (failed round trips)."""

    RESPONSES = ("Received JoinGroup response: %s", "Received SyncGroup response: %s")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.synced = 0
        self.errors = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg not in self.RESPONSES or not record.args:
            return
        # (logging unpacks a single Mapping argument: the response is args itself then)
        args = record.args
        response = args[0] if isinstance(args, tuple) else args
        code = (response.get("error_code") if isinstance(response, dict)
                else getattr(response, "error_code", None))
        if code not in (0, None):
            self.errors += 1
        elif record.msg == self.RESPONSES[1]:
            self.synced += 1


def _consumer(bootstrap: str, group: str, topic: str, client_id: str) -> Any:
    from kafka_assignors import CooperativeBalancedStickyAssignor
    from kafka_assignors.kafka_python import KafkaConsumer

    # the runtime's one line, docs/runtime.md (plus what a test needs: ids and short timeouts)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap.split(","),
        group_id=group,
        client_id=client_id,
        partition_assignment_strategy=[CooperativeBalancedStickyAssignor()],
        session_timeout_ms=10_000,
        heartbeat_interval_ms=500,
        auto_offset_reset="earliest",
    )
    consumer.subscribe([topic])
    return consumer


def _poll_until(consumers: list[Any], done: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(timeout_ms=100)
        if done():
            return
    raise TimeoutError(f"{what}: not reached within {timeout:.0f} s")


def _stable(consumer: Any, partitions: int) -> bool:
    from kafka_assignors.metrics import metrics_of

    found = metrics_of(consumer)
    md = consumer.group_metadata()
    return (
        len(consumer.assignment()) == partitions
        and str(md.state).strip("<>").upper() == "STABLE"
        and found is not None
        and not found.rebalance_in_progress
    )


def run_scrape(bootstrap: str, topic: str, timeout: float = 90.0) -> ScrapeResult:
    """The whole run (bounded by ``timeout`` per step); the caller owns the topic."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.parser import text_string_to_metric_families

    from kafka_assignors.embedded import GroupRunner
    from kafka_assignors.metrics import COORDINATOR_GROUP, QUALITY_GROUP, otel, prometheus

    counter = RoundTrips()
    base_log = logging.getLogger("kafka.coordinator")  # (base.py logs under this name)
    level = base_log.level
    base_log.addHandler(counter)
    base_log.setLevel(logging.DEBUG)
    started = time.monotonic()
    group = f"metrics-scrape-{uuid.uuid4().hex[:8]}"
    scraped = _consumer(bootstrap, group, topic, CLIENT_ID)
    registry = CollectorRegistry()
    prometheus.register(scraped, registry)  # the one call
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    otel.register(scraped, meter_provider=provider)  # the one call
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    holdings = []
    others = GroupRunner(bootstrap, group, (topic,),
                         ["kafka_assignors:CooperativeBalancedStickyAssignor"],
                         session_timeout_ms=10_000, heartbeat_interval_ms=500)
    try:
        _poll_until([scraped], lambda: _stable(scraped, PARTITIONS), timeout, "first join")
        holdings.append(len(scraped.assignment()))
        index = others.add_member()

        def both_hold_half() -> bool:
            view = others.member(index)
            return (_stable(scraped, PARTITIONS // 2) and view.state == "STABLE"
                    and len(view.assignment) == PARTITIONS // 2)

        _poll_until([scraped], both_hold_half, timeout, "a second member joined")
        holdings.append(len(scraped.assignment()))
        others.stop_member(index, timeout=30)
        _poll_until([scraped], lambda: _stable(scraped, PARTITIONS), timeout,
                    "the second member left")
        holdings.append(len(scraped.assignment()))
        span_ms = (time.monotonic() - started) * 1000
        port = server.server_port
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            text = resp.read().decode()
        data = reader.get_metrics_data()
        values = scraped.metrics()
        own = {g: dict(values.get(g, {})) for g in (COORDINATOR_GROUP, QUALITY_GROUP)}
        syncs, errors = counter.synced, counter.errors
    finally:
        base_log.removeHandler(counter)
        base_log.setLevel(level)
        others.close()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
        scraped.close()
        provider.shutdown()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("client_id") == CLIENT_ID:
                samples[s.name] = s.value
    points: dict[str, list[Any]] = {}
    for rm in data.resource_metrics if data is not None else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points:
                    point = cast("NumberDataPoint", p)  # observable sums and gauges only
                    assert point.attributes is not None  # each observation carries its tags
                    if dict(point.attributes).get("client-id") == CLIENT_ID:
                        points[m.name] = [point.value, type(m.data).__name__]
    return ScrapeResult(text, samples, points, own, syncs, errors, span_ms, holdings)


def _finite(value: Any) -> Any:
    """NaN and infinities as null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _warm_up(bootstrap: str, topic: str, timeout: float = 90.0) -> None:
    """One group joined and left first: a new broker creates and loads the offsets topic on
    the first group's FindCoordinator, and answers the JoinGroups of that time with
    NOT_COORDINATOR (failed rebalances a long-running cluster does not show)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id="warm-up-"
                             + uuid.uuid4().hex[:8], session_timeout_ms=10_000)
    try:
        consumer.subscribe([topic])
        _poll_until([consumer], lambda: len(consumer.assignment()) == PARTITIONS, timeout,
                    "the warm-up group")
    finally:
        consumer.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", help="an existing broker (default: start one)")
    parser.add_argument("--out", type=Path, default=Path("docs/results"))
    args = parser.parse_args(argv)
    from kafka_assignors.embedded.admin import create_topic, delete_topic

    cluster = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from kafka_assignors.embedded import start_single_broker

        cluster = start_single_broker()
        bootstrap = cluster.bootstrap
    topic = f"metrics-scrape-{uuid.uuid4().hex[:8]}"
    try:
        create_topic(bootstrap, topic, PARTITIONS)
        _warm_up(bootstrap, topic)
        result = run_scrape(bootstrap, topic)
        delete_topic(bootstrap, topic)
    finally:
        if cluster is not None:
            cluster.close()
    args.out.mkdir(parents=True, exist_ok=True)
    ours = [line for line in result.text.splitlines()
            if "consumer_coordinator_metrics" in line or "kafka_assignors_assignment" in line]
    (args.out / "metrics_scrape.txt").write_text("\n".join(ours) + "\n")
    doc = _finite(asdict(result))
    doc.pop("text")
    doc["command"] = "python -m integration_tests.metrics_scrape --out docs/results/"
    (args.out / "metrics_scrape.json").write_text(json.dumps(doc, indent=1, sort_keys=True)
                                                  + "\n")
    print(f"wrote {args.out / 'metrics_scrape.txt'} and metrics_scrape.json: "
          f"{result.syncs} successful SyncGroups seen, holdings {result.holdings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
