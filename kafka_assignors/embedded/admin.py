"""Small, bounded admin operations through kafka-python's KafkaAdminClient.

Used by the broker launcher (readiness), the group runner (partition counts) and the
test fixtures (topics). Every call has a deadline; nothing waits forever.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kafka import KafkaAdminClient
from kafka.errors import KafkaConfigurationError, KafkaError

from ._ports import port_open

log = logging.getLogger(__name__)


class AdminTimeoutError(TimeoutError):
    """A bounded admin wait ran out of time."""


@dataclass(frozen=True)
class BrokerInfo:
    """One broker as the cluster metadata lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None


@contextlib.contextmanager
def admin_client(bootstrap: str, request_timeout_ms: int = 10_000) -> Iterator[Any]:
    """A KafkaAdminClient for ``bootstrap`` that is always closed afterwards."""
    client = KafkaAdminClient(
        bootstrap_servers=bootstrap.split(","),
        client_id="kafka-assignors-admin",
        request_timeout_ms=request_timeout_ms,
    )
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close()


def describe_brokers(bootstrap: str, request_timeout_ms: int = 10_000) -> list[BrokerInfo]:
    """The brokers the cluster metadata currently lists (live, unfenced ones)."""
    with admin_client(bootstrap, request_timeout_ms) as admin:
        info = admin.describe_cluster()
    return sorted(
        (
            BrokerInfo(int(b["broker_id"]), str(b["host"]), int(b["port"]), b.get("rack"))
            for b in info["brokers"]
            if not b.get("is_fenced", False)
        ),
        key=lambda b: b.node_id,
    )


def _addresses(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for item in bootstrap.split(","):
        host, _, port = item.strip().rpartition(":")
        out.append((host, int(port)))
    return out


def wait_for_brokers(
    bootstrap: str,
    expected: set[int] | None,
    timeout: float,
    *,
    absent: set[int] | frozenset[int] = frozenset(),
    check: Callable[[], None] | None = None,
) -> list[BrokerInfo]:
    """Wait until the metadata lists every broker in ``expected`` and none in ``absent``.

    ``expected=None`` means "at least one broker". ``check`` runs every round and may
    raise to abort early (e.g. a broker container exited). Raises AdminTimeoutError
    with the last observation when ``timeout`` seconds pass.
    """
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while True:
        if check is not None:
            check()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AdminTimeoutError(
                f"brokers not ready after {timeout:.0f} s (want {sorted(expected or [])}, "
                f"absent {sorted(absent)}): {last}"
            )
        # Cheap TCP probe first: kafka-python logs every refused bootstrap connection
        # at ERROR level and backs off for seconds.
        open_ports = [port_open(port, host) for host, port in _addresses(bootstrap)]
        if not (all(open_ports) if expected is not None else any(open_ports)):
            last = "broker ports not accepting connections yet"
            time.sleep(0.3)
            continue
        try:
            brokers = describe_brokers(bootstrap, int(min(10.0, max(remaining, 1.0)) * 1000))
            ids = {b.node_id for b in brokers}
            last = f"metadata lists brokers {sorted(ids)}"
            if (ids if expected is None else expected <= ids) and not ids & absent:
                with admin_client(bootstrap) as admin:
                    admin.list_topics()
                return brokers
        except KafkaConfigurationError:
            raise  # a bug, not a broker that is still starting
        except (KafkaError, OSError, ValueError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(0.5)


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int,
    replication_factor: int = 1,
    configs: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> None:
    """Create a topic and wait (bounded) until every partition has a leader."""
    with admin_client(bootstrap) as admin:
        admin.create_topics(
            {
                name: {
                    "num_partitions": partitions,
                    "replication_factor": replication_factor,
                    "configs": dict(configs or {}),
                }
            },
            timeout_ms=int(timeout * 1000),
        )
        admin.wait_for_topics([name], timeout_ms=int(timeout * 1000))


def delete_topic(bootstrap: str, name: str, timeout: float = 30.0) -> None:
    """Delete a topic (errors are logged, not raised: used for cleanup)."""
    try:
        with admin_client(bootstrap) as admin:
            admin.delete_topics([name], timeout_ms=int(timeout * 1000))
    except (KafkaError, OSError) as exc:
        log.warning("could not delete topic %s: %s", name, exc)


def _describe_topics(bootstrap: str, topics: list[str]) -> list[dict[str, Any]]:
    with admin_client(bootstrap) as admin:
        return list(admin.describe_topics(topics))


def partition_counts(bootstrap: str, topics: list[str]) -> dict[str, int]:
    """Number of partitions of each topic (topics that do not exist are left out)."""
    counts: dict[str, int] = {}
    for topic in _describe_topics(bootstrap, topics):
        if topic.get("error_code", 0) == 0 and topic.get("partitions"):
            counts[str(topic["name"])] = len(topic["partitions"])
    return counts


def _partition(bootstrap: str, topic: str, partition: int, timeout: float) -> dict[str, Any]:
    """``topic``/``partition``'s metadata. A broker learns of a new topic from the controller
    a moment after the one that created it: wait (bounded) for the one answering to know it."""
    deadline = time.monotonic() + timeout
    while True:
        for info in _describe_topics(bootstrap, [topic]):
            for p in info.get("partitions") or []:
                if int(p["partition_index"]) == partition:
                    return dict(p)
        if time.monotonic() >= deadline:
            raise ValueError(f"{topic}-{partition} not found in metadata within {timeout:g} s")
        time.sleep(0.1)


def partition_leader(bootstrap: str, topic: str, partition: int, timeout: float = 10.0) -> int:
    """Node id of the current leader of ``topic``/``partition`` (-1 if none)."""
    return int(_partition(bootstrap, topic, partition, timeout)["leader_id"])


def partition_replicas(
    bootstrap: str, topic: str, partition: int, timeout: float = 10.0
) -> tuple[list[int], list[int]]:
    """(replica node ids, in-sync replica node ids) of ``topic``/``partition``."""
    p = _partition(bootstrap, topic, partition, timeout)
    return [int(r) for r in p["replica_nodes"]], [int(r) for r in p["isr_nodes"]]
