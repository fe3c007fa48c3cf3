"""The pipeline's small talks with the broker through kafka-python (no Spark).

Partition lists (so idle partitions appear in a profile), a group's committed
offsets and lag, and publishing a profile to a compacted topic.  Every call takes
``security``: kafka-python keywords (``security_protocol``, ``sasl_*``, ``ssl_*``) as
:func:`kafka_assignors.explain.connection.security_kwargs` builds them from the
command line; :func:`spark_options` gives the same settings to Spark's Kafka source.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..load.profile import LoadProfile

RETRIES = 10
log = logging.getLogger(__name__)


class KafkaIOError(RuntimeError):
    """A broker request that failed, with what was asked."""


Security = Mapping[str, Any]


def spark_options(security: Security | None) -> dict[str, str]:
    """The same settings as ``kafka.``-prefixed options of Spark's Kafka source."""
    from ..explain.connection import java_properties

    return {f"kafka.{k}": v for k, v in java_properties(security or {}).items()}


def _servers(bootstrap: str) -> list[str]:
    return [s.strip() for s in bootstrap.split(",") if s.strip()]


@contextmanager
def admin(bootstrap: str, security: Security | None = None) -> Iterator[Any]:
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(
        bootstrap_servers=_servers(bootstrap),
        client_id="kafka-assignors-pipeline",
        **dict(security or {}),
    )
    try:
        yield client
    finally:
        client.close()


def partition_counts(
    bootstrap: str, topics: Sequence[str], security: Security | None = None
) -> dict[str, int]:
    """Partition count of each topic; a missing topic is an error naming it."""
    with admin(bootstrap, security) as client:
        described = client.describe_topics(list(topics))
    counts = {d["name"]: len(d["partitions"]) for d in described if not d.get("error_code")}
    missing = [t for t in topics if not counts.get(t)]
    if missing:
        raise KafkaIOError(f"no such topic(s) on {bootstrap}: {', '.join(missing)}")
    return counts


def _retry(what: str, call: Any) -> Any:
    # a new group's coordinator (or the offsets topic) may take a moment to exist
    for attempt in range(RETRIES):
        try:
            return call()
        except Exception as exc:
            if not getattr(exc, "retriable", False) or attempt == RETRIES - 1:
                raise KafkaIOError(f"{what}: {exc}") from exc
            time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


def group_lag(
    bootstrap: str, group: str, counts: dict[str, int], security: Security | None = None
) -> dict[tuple[str, int], tuple[int | None, int]]:
    """(topic, partition) -> (committed offset or None, lag) for ``group``.

    Without a commit the lag counts from the earliest offset still in the log.
    """
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec

    tps = [TopicPartition(t, p) for t, n in counts.items() for p in range(n)]
    with admin(bootstrap, security) as client:
        committed = _retry(
            f"committed offsets of group {group}", lambda: client.list_group_offsets({group: tps})
        ).get(group, {})
        ends = _retry(
            "end offsets",
            lambda: client.list_partition_offsets({tp: OffsetSpec.LATEST for tp in tps}),
        )
        starts = _retry(
            "start offsets",
            lambda: client.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in tps}),
        )
    out: dict[tuple[str, int], tuple[int | None, int]] = {}
    for tp in tps:
        end = ends[tp].offset
        meta = committed.get(tp)
        offset = meta.offset if meta is not None and meta.offset >= 0 else None
        out[(tp.topic, tp.partition)] = (
            offset,
            max(0, end - (offset if offset is not None else starts[tp].offset)),
        )
    return out


def publish(
    profile: LoadProfile, bootstrap: str, topic: str, security: Security | None = None
) -> int:
    """Write one message per partition (key ``topic:partition``) to a compacted topic.

    The topic is created compacted when it does not exist.  Returns messages sent.
    """
    from kafka import KafkaProducer

    with admin(bootstrap, security) as client:
        if topic not in client.list_topics():
            try:
                client.create_topics(
                    {
                        topic: {
                            "num_partitions": 1,
                            "replication_factor": -1,
                            "configs": {"cleanup.policy": "compact"},
                        }
                    },
                    wait_for_metadata=True,
                )
            except Exception as exc:
                if "TopicAlreadyExists" not in type(exc).__name__:
                    raise KafkaIOError(f"cannot create compacted topic {topic}: {exc}") from exc
    entries = profile.to_json()["partitions"]
    producer = KafkaProducer(
        bootstrap_servers=_servers(bootstrap),
        acks="all",
        client_id="kafka-assignors-pipeline",
        **dict(security or {}),
    )
    try:
        for e in entries:
            producer.send(
                topic,
                key=f"{e['topic']}:{e['partition']}".encode(),
                value=json.dumps(e, sort_keys=True).encode(),
            )
        producer.flush(timeout=60)
    finally:
        producer.close()
    return len(entries)
