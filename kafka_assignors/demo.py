"""``kafka-assignors demo``: a real consumer group on a real broker, end to end.

1. starts the embedded broker (Docker, image built if needed), or uses
   ``--bootstrap HOST:PORT``;
2. creates a topic and produces a few keyed records;
3. runs a group of kafka-python consumers (separate processes) with the chosen
   strategies through the group runner, waits until it is stable;
4. prints each member's assignment, records consumed and the protocol the group chose;
5. cleans up: group, topic and broker container (``--keep`` leaves topic and broker).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import uuid
from typing import Any, TextIO

log = logging.getLogger(__name__)


def add_parser(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="run a consumer group on a real broker and show its assignment",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bootstrap", metavar="HOST:PORT[,...]", help="use this existing cluster (no Docker)"
    )
    parser.add_argument("--members", type=int, default=3, help="group members (default 3)")
    parser.add_argument("--partitions", type=int, default=6, help="topic partitions (default 6)")
    parser.add_argument("--records", type=int, default=60, help="records to produce (default 60)")
    parser.add_argument(
        "--strategy",
        action="append",
        dest="strategies",
        metavar="NAME",
        help="assignment strategy, most preferred first; repeatable. A kafka-python name "
        "(range, roundrobin, sticky, cooperative-sticky) or module:Attr. Default: range",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (120)")
    parser.add_argument(
        "--keep", action="store_true", help="leave the topic and the broker container running"
    )
    parser.set_defaults(func=run)


def _produce(bootstrap: str, topic: str, count: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all", linger_ms=5)
    try:
        for i in range(count):
            producer.send(topic, key=f"key-{i % 17}".encode(), value=f"record {i}".encode())
        producer.flush(timeout=30)
    finally:
        producer.close(timeout=10)


def _print_report(
    out: TextIO, topic: str, bootstrap: str, group: Any, strategies: list[str]
) -> None:
    members = [m for m in group.members() if m.alive and not m.stopping]
    out.write(f"\nGroup {group.group_id} on {bootstrap}, topic {topic}\n")
    out.write(f"strategies offered (most preferred first): {', '.join(strategies)}\n")
    out.write(f"{'member':<8} {'pid':>7} {'generation':>10} {'records':>8}  partitions\n")
    for m in members:
        parts = ", ".join(str(p) for _, p in sorted(m.assignment))
        out.write(f"{m.name:<8} {m.pid or 0:>7} {m.generation:>10} {m.records:>8}  [{parts}]\n")
    out.write(f"chosen protocol: {group.protocol()}\n\n")
    out.flush()


def run(args: argparse.Namespace) -> int:
    from .embedded import GroupRunner, start_single_broker
    from .embedded.admin import create_topic, delete_topic

    strategies: list[str] = args.strategies or ["range"]
    cluster = None
    started = time.monotonic()
    if args.bootstrap:
        bootstrap = str(args.bootstrap)
        log.info("using the existing cluster at %s", bootstrap)
    else:
        log.info("starting the embedded Kafka broker (builds the image on first use) ...")
        try:
            cluster = start_single_broker(keep=bool(args.keep))
        except Exception as exc:
            log.error("could not start the embedded broker: %s", exc)
            return 1
        bootstrap = cluster.bootstrap
        log.info("broker ready at %s in %.1f s", bootstrap, time.monotonic() - started)

    topic = f"demo-{uuid.uuid4().hex[:8]}"
    group_id = f"demo-group-{uuid.uuid4().hex[:8]}"
    keep_topic = bool(args.keep)
    try:
        create_topic(bootstrap, topic, args.partitions)
        _produce(bootstrap, topic, args.records)
        log.info("topic %s: %d partitions, %d records", topic, args.partitions, args.records)
        with GroupRunner(
            bootstrap,
            group_id,
            [topic],
            strategies,
            members=args.members,
            report_records=True,
            session_timeout_ms=10_000,
        ) as group:
            group.wait_stable(timeout=args.timeout)
            # Let the members drain the topic so the report shows who read what.
            try:
                group.wait_for(
                    lambda views: sum(v.records for v in views) >= args.records,
                    timeout=min(30.0, args.timeout),
                    what=f"{args.records} records consumed",
                )
            except TimeoutError as exc:
                log.warning("%s", str(exc).splitlines()[0])
            group.wait_stable(timeout=args.timeout)
            _print_report(sys.stdout, topic, bootstrap, group, strategies)
        log.info("group closed; demo took %.1f s", time.monotonic() - started)
        return 0
    except Exception as exc:
        log.error("demo failed: %s", exc)
        return 1
    finally:
        if not keep_topic:
            delete_topic(bootstrap, topic)
        if cluster is not None:
            if args.keep:
                ids = cluster.detach()
                log.info(
                    "--keep: broker left running at %s; remove it with: docker rm -f %s",
                    bootstrap,
                    " ".join(i[:12] for i in ids),
                )
            else:
                cluster.close()
                log.info("broker container removed")
