"""Sizing's Tp and Tc measured on the cluster itself (``sizing --measure``, ``analyze
--measure``): one producer and one consumer through a temporary 1-partition topic.

Tc is what one consumer gets from one partition *with its processing*: given the
consumer's pace (``max_poll_records`` and the processing time after each poll, as the
demo's members have), a second consumer reads the same records at that pace for a few
seconds.  Without it, Tc is the client's own read rate, the ceiling for a consumer that
does no work.  Every figure comes with one sentence saying how it was measured.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

from .kafka_io import KafkaIOError, Security, _servers, admin
from .sizing import MEASURED, Origin, SizingInput, human

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Pace:
    """How a real consumer works: records per poll and processing time after each poll."""

    max_poll_records: int
    processing_ms: float
    #: who paces like this, for the report ("the demo's members")
    who: str = "your consumers"


@dataclass(frozen=True, slots=True)
class Throughput:
    """What one partition took from one producer and gave to one consumer, measured."""

    records: int
    record_bytes: int
    producer_seconds: float
    consumer_seconds: float
    #: the paced read (with ``pace``): records read and the seconds they took
    pace: Pace | None = None
    paced_records: int = 0
    paced_seconds: float = 0.0

    @property
    def producer_messages_per_s(self) -> float:
        return self.records / self.producer_seconds

    @property
    def consumer_messages_per_s(self) -> float:
        return self.records / self.consumer_seconds

    @property
    def paced_messages_per_s(self) -> float | None:
        return self.paced_records / self.paced_seconds if self.pace and self.paced_seconds else None

    @property
    def producer_bytes_per_s(self) -> float:
        return self.producer_messages_per_s * self.record_bytes

    @property
    def consumer_bytes_per_s(self) -> float:
        return self.consumer_messages_per_s * self.record_bytes

    def rates(self, metric: str) -> tuple[float, float]:
        """(Tp, Tc) in ``bytes_per_s`` or ``messages_per_s``; Tc is the paced rate when
        there is one."""
        scale = 1.0 if metric.startswith("messages") else float(self.record_bytes)
        tc = self.paced_messages_per_s or self.consumer_messages_per_s
        return self.producer_messages_per_s * scale, tc * scale

    def origins(self, where: str) -> dict[str, Origin]:
        """How Tp and Tc were measured, one sentence each; ``where`` names the cluster."""
        produced = (
            f"one kafka-python producer (acks=all, linger.ms 5) sent {self.records:,} records "
            f"of {self.record_bytes:,} bytes to a new 1-partition topic on {where} in "
            f"{self.producer_seconds:.2f} s"
        )
        if self.pace is None:
            read = (
                f"one kafka-python consumer read those {self.records:,} records back in "
                f"{self.consumer_seconds:.2f} s, doing no work on them"
            )
        else:
            read = (
                f"one kafka-python consumer paced like {self.pace.who} "
                f"(max_poll_records {self.pace.max_poll_records}, "
                f"{self.pace.processing_ms:g} ms of processing after each poll) read "
                f"{self.paced_records:,} of those records in {self.paced_seconds:.2f} s"
            )
        return {"producer": Origin(MEASURED, produced), "consumer": Origin(MEASURED, read)}

    def unpaced_input(self, metric: str) -> list[SizingInput]:
        """With a pace: the client's own read rate, shown beside Tc but not used."""
        if self.pace is None:
            return []
        unit = "messages/s" if metric.startswith("messages") else "bytes/s"
        scale = 1.0 if metric.startswith("messages") else float(self.record_bytes)
        value = self.consumer_messages_per_s * scale
        return [SizingInput(
            "consumer read rate without processing", value, unit, MEASURED,
            f"the same consumer doing no work read all {self.records:,} records in "
            f"{self.consumer_seconds:.2f} s ({human(value, unit)}): the processing, not "
            "Kafka, is what limits a consumer here",
            used=False,
        )]


def measure_throughput(
    bootstrap: str,
    *,
    records: int = 20_000,
    record_bytes: int = 1_000,
    security: Security | None = None,
    timeout: float = 120.0,
    pace: Pace | None = None,
    paced_seconds: float = 3.0,
) -> Throughput:
    """Produce ``records`` values of ``record_bytes`` to a new 1-partition topic (acks=all),
    then read them back with one consumer, timing each side; with ``pace``, read them again
    at that pace for up to ``paced_seconds``.  The topic is deleted after.

    The producer side is send-all-then-flush; the plain read runs from the first fetch to
    the last record; the paced read from its first records to the end of its last
    batch's processing.  All are single-client, single-partition figures on this
    machine's link to the cluster, which is what sizing's Tp and Tc mean.
    """
    if records < 1 or record_bytes < 1:
        raise KafkaIOError("measuring needs at least one record of at least one byte")
    topic = f"kafka-assignors-measure-{uuid.uuid4().hex[:10]}"
    with admin(bootstrap, security) as client:
        try:
            client.create_topics(
                {topic: {"num_partitions": 1, "replication_factor": -1}}, wait_for_metadata=True
            )
        except Exception as exc:
            raise KafkaIOError(f"cannot create the measuring topic {topic}: {exc}") from exc
        try:
            produced = _produce(bootstrap, topic, records, record_bytes, security, timeout)
            read, consumed = _read(bootstrap, topic, records, None, timeout, security)
            if read < records:
                raise KafkaIOError(f"read back {read} of {records} records within {timeout:g} s")
            paced = (0, 0.0)
            if pace is not None:
                paced = _read(bootstrap, topic, records, pace, paced_seconds, security)
                if paced[0] < 1:
                    raise KafkaIOError(f"the paced consumer read nothing in {paced_seconds:g} s")
        finally:
            try:
                client.delete_topics([topic])
            except Exception as exc:  # reported, not raised: the measurement stands
                log.warning("could not delete the measuring topic %s: %s", topic, exc)
    return Throughput(records, record_bytes, max(produced, 1e-6), max(consumed, 1e-6),
                      pace, paced[0], paced[1])


def _produce(
    bootstrap: str, topic: str, records: int, record_bytes: int, security: Security | None,
    timeout: float,
) -> float:
    from kafka import KafkaProducer

    value = b"x" * record_bytes
    producer = KafkaProducer(
        bootstrap_servers=_servers(bootstrap),
        acks="all",
        linger_ms=5,
        client_id="kafka-assignors-measure",
        **dict(security or {}),
    )
    try:
        producer.partitions_for(topic)  # metadata first: not part of the timing
        started = time.monotonic()
        for _ in range(records):
            producer.send(topic, value=value, partition=0)
        producer.flush(timeout=timeout)
        return time.monotonic() - started
    finally:
        producer.close(timeout=10)


def _read(
    bootstrap: str, topic: str, records: int, pace: Pace | None, seconds: float,
    security: Security | None,
) -> tuple[int, float]:
    """(records read, seconds) from the start of the topic, for at most ``seconds``."""
    from kafka import KafkaConsumer, TopicPartition

    extra: dict[str, Any] = dict(security or {})
    if pace is not None:
        extra["max_poll_records"] = pace.max_poll_records
    consumer = KafkaConsumer(
        bootstrap_servers=_servers(bootstrap),
        client_id="kafka-assignors-measure",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **extra,
    )
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        read = 0
        started = time.monotonic()
        first: float | None = None  # the paced clock starts with the first records
        limit = started + seconds + (10.0 if pace is not None else 0.0)  # + the first fetch
        while read < records and time.monotonic() < limit:
            batches = consumer.poll(timeout_ms=1000)
            got = sum(len(b) for b in batches.values())
            if pace is None:
                read += got
                continue
            if got and first is None:
                first = time.monotonic()
                limit = first + seconds
            read += got
            time.sleep(pace.processing_ms / 1000)
        end = time.monotonic()
        return read, max(end - (first if first is not None else started), 1e-6)
    finally:
        consumer.close()


def measure_options(p: argparse.ArgumentParser, *, record_size_default: str) -> None:
    """``--measure`` and its knobs, shared by ``sizing`` and ``analyze``."""
    m = p.add_argument_group("measuring Tp and Tc on the cluster (--measure)")
    m.add_argument(
        "--measure",
        action="store_true",
        help="measure the rates not given: produce records to a temporary 1-partition topic "
        "and read them back (the topic is deleted after)",
    )
    from .._cli_args import count, non_negative, positive

    m.add_argument(
        "--measure-records", type=count, default=20_000, help="records to send (default 20000)"
    )
    m.add_argument(
        "--record-size", type=count, help=f"bytes per record (default {record_size_default})"
    )
    m.add_argument(
        "--max-poll-records",
        type=count,
        help="with --processing-ms: records your consumer takes per poll",
    )
    m.add_argument(
        "--processing-ms",
        type=non_negative,
        default=0.0,
        help="your consumer's processing time after each poll: Tc is then measured at that "
        "pace (for --paced-seconds) instead of as the client's bare read rate",
    )
    m.add_argument(
        "--paced-seconds", type=positive, default=3.0, help="how long the paced read runs (3)"
    )
    m.add_argument(
        "--paced-like",
        default="your consumers",
        metavar="WHO",
        help="who paces like that, for the report (default 'your consumers')",
    )


def pace_from_args(args: argparse.Namespace) -> Pace | None:
    if not args.processing_ms and not args.max_poll_records:
        return None
    return Pace(args.max_poll_records or 500, float(args.processing_ms), args.paced_like)


def measure_and_say(
    args: argparse.Namespace, record_size: int, command: str
) -> Throughput | None:
    """Run ``--measure`` with the command's options and print what it found (None, with the
    error printed, when it failed)."""
    from .options import say, security

    try:
        measured = measure_throughput(
            args.bootstrap,
            records=args.measure_records,
            record_bytes=record_size,
            security=security(args),
            pace=pace_from_args(args),
            paced_seconds=args.paced_seconds,
        )
    except KafkaIOError as exc:
        print(f"kafka-assignors {command}: error: {exc}", file=sys.stderr)
        return None
    paced = measured.paced_messages_per_s
    say(
        f"measured on one partition ({measured.records:,} records of "
        f"{measured.record_bytes:,} bytes): producer {measured.producer_messages_per_s:,.0f} "
        f"msg/s = {measured.producer_bytes_per_s / 1e6:,.2f} MB/s, consumer "
        f"{measured.consumer_messages_per_s:,.0f} msg/s = "
        f"{measured.consumer_bytes_per_s / 1e6:,.2f} MB/s"
        + (f"; at the consumer's pace {paced:,.0f} msg/s" if paced else "")
    )
    return measured
