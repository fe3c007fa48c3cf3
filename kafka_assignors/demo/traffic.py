"""The demo's topics and its producer: keyed, skewed traffic at a bounded rate.

Two topics (``orders`` with 8 partitions, ``payments`` with 4).  Keys follow a
Zipf-like law, so the partitions of the few hottest keys carry most of the
traffic - the situation where counting partitions is not enough.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from dataclasses import dataclass

log = logging.getLogger(__name__)

KEYS = 40
ZIPF = 1.3


@dataclass(frozen=True)
class DemoTopics:
    orders: str
    payments: str
    counts: dict[str, int]

    @property
    def names(self) -> list[str]:
        return [self.orders, self.payments]


def create_demo_topics(bootstrap: str, orders: int = 8, payments: int = 4) -> DemoTopics:
    from ..embedded.admin import create_topic

    suffix = uuid.uuid4().hex[:6]
    topics = DemoTopics(f"demo-orders-{suffix}", f"demo-payments-{suffix}", {})
    create_topic(bootstrap, topics.orders, orders)
    create_topic(bootstrap, topics.payments, payments)
    topics.counts.update({topics.orders: orders, topics.payments: payments})
    return topics


def delete_demo_topics(bootstrap: str, topics: DemoTopics) -> None:
    from ..embedded.admin import delete_topic

    for name in topics.names:
        delete_topic(bootstrap, name)


class Producer(threading.Thread):
    """Writes ``rate`` records/s (orders 3 : payments 1) until stopped; bounded everywhere."""

    def __init__(self, bootstrap: str, topics: DemoTopics, rate: float, seed: int = 7) -> None:
        super().__init__(daemon=True, name="demo-producer")
        self.bootstrap = bootstrap
        self.topics = topics
        self.rate = max(rate, 1.0)
        self.sent = 0
        self.error: str | None = None
        self._stop_event = threading.Event()
        self._rng = random.Random(seed)
        weights = [1.0 / (k + 1) ** ZIPF for k in range(KEYS)]
        self._keys = [f"customer-{k:02d}".encode() for k in range(KEYS)]
        self._weights = weights

    def stop(self, timeout: float = 15.0) -> None:
        self._stop_event.set()
        self.join(timeout=timeout)

    def run(self) -> None:
        from kafka import KafkaProducer

        try:
            producer = KafkaProducer(
                bootstrap_servers=self.bootstrap.split(","), linger_ms=20, acks=1
            )
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("demo producer could not start: %s", self.error)
            return
        tick = 0.1
        per_tick = self.rate * tick
        owed = 0.0
        try:
            while not self._stop_event.is_set():
                started = time.monotonic()
                owed += per_tick
                while owed >= 1.0:
                    owed -= 1.0
                    orders = self._rng.random() < 0.75
                    topic = self.topics.orders if orders else self.topics.payments
                    key = self._rng.choices(self._keys, self._weights)[0]
                    producer.send(topic, key=key, value=b"x" * 100)
                    self.sent += 1
                self._stop_event.wait(max(0.0, tick - (time.monotonic() - started)))
            producer.flush(timeout=10)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("demo producer failed: %s", self.error)
        finally:
            producer.close(timeout=5)


def delete_demo_groups(bootstrap: str, group_ids: list[str], timeout: float = 20.0) -> list[str]:
    """Delete the demo's consumer groups (offsets included); returns ``group: reason`` for
    each group that could not be deleted within ``timeout`` (a group must be empty first:
    a killed member stays until its session times out, so non-empty groups are retried)."""
    from kafka.admin import KafkaAdminClient

    if not group_ids:
        return []
    deadline = time.monotonic() + timeout
    pending = list(group_ids)
    failed: dict[str, str] = {}
    try:
        client = KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","),
            client_id="kafka-assignors-demo",
            request_timeout_ms=int(min(timeout, 10.0) * 1000),
        )
    except Exception as exc:
        return [f"{g}: {type(exc).__name__}: {exc}" for g in group_ids]
    try:
        while pending:
            try:
                results = client.delete_groups(pending)
            except Exception as exc:
                results = {g: f"{type(exc).__name__}: {exc}" for g in pending}
            failed = {
                g: str(r) for g, r in results.items() if r != "OK" and "GroupIdNotFound" not in r
            }
            pending = [g for g in pending if g in failed]
            if not pending or time.monotonic() + 1.0 > deadline:
                break
            time.sleep(1.0)
    finally:
        client.close()
    return [f"{g}: {failed[g]}" for g in pending]
