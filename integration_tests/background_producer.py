"""A producer thread for live tests: numbered records until stopped, and what was acked."""

from __future__ import annotations

import threading
import time
from typing import Any

from .unknown_offsets import resolve_delivered

#: records are produced in bursts this often (s); a burst is rate x this many records
BURST_EVERY_S = 0.05


class BackgroundProducer:
    """Writes numbered records, about ``rate`` a second, until stopped; remembers the
    ``(partition, offset)`` of every acknowledged record.

    With ``partitions`` record n goes to partition ``n % partitions`` (every partition gets
    traffic); otherwise it is keyed ``order-{n % keys}`` and the default partitioner places it,
    as an application's keyed traffic would be.
    """

    def __init__(self, bootstrap: str, topic: str, rate: int = 200, *,
                 partitions: int | None = None, keys: int = 500) -> None:
        from confluent_kafka import Producer

        self.acked: set[tuple[int, int]] = set()
        self.unknown: set[bytes] = set()  # acked with no offset: see unknown_offsets
        self.not_in_log = 0  # acked with no offset and not in the log: see NotInLog
        self._bootstrap = bootstrap
        self.failed = 0
        self._topic = topic
        self._partitions = partitions
        self._keys = keys
        self._stop = threading.Event()
        self._producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                                   "linger.ms": 5, "enable.idempotence": True})
        self._thread = threading.Thread(target=self._run, args=(rate,), daemon=True)
        self._thread.start()

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is None and msg.offset() is not None and msg.offset() >= 0:
            self.acked.add((msg.partition(), msg.offset()))
        elif err is None:
            self.unknown.add(msg.value())
        else:
            self.failed += 1

    def _placement(self, seq: int) -> dict[str, Any]:
        if self._partitions is not None:
            return {"partition": seq % self._partitions}
        return {"key": f"order-{seq % self._keys}".encode()}

    def _run(self, rate: int) -> None:
        seq = 0
        while not self._stop.is_set():
            for _ in range(max(1, int(rate * BURST_EVERY_S))):
                self._producer.produce(self._topic, value=str(seq).encode(),
                                       on_delivery=self._delivered, **self._placement(seq))
                seq += 1
            self._producer.poll(0)
            time.sleep(BURST_EVERY_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert self._producer.flush(30) == 0, "the producer could not deliver everything"
        if self.unknown:  # values are unique: look them up in every partition of the topic
            meta = self._producer.list_topics(self._topic, timeout=10).topics[self._topic]
            found, self.not_in_log = resolve_delivered(
                self._bootstrap, [(self._topic, p) for p in meta.partitions], self.unknown,
                "background producer")
            self.acked |= {(p, offset) for _, p, offset in found.values()}
            self.unknown = set()
