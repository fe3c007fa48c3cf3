"""Fixtures for the integration suite: real Kafka brokers and real consumer groups.

* ``kafka_broker`` (session): one KRaft broker in Docker through Testcontainers,
  started on first use. ``BOOTSTRAP_SERVERS=host:port,...`` uses that existing
  cluster instead (bring your own cluster, no containers).
* ``kafka_cluster`` (session): three combined broker+controller nodes, racks r1..r3,
  started only when a test asks for it. It can stop/start/pause brokers, so it is
  not available with BOOTSTRAP_SERVERS: those tests are reported as skipped, with
  the reason, in that explicit mode only.
* ``make_topic``: creates uniquely named topics for the test and deletes them after.
* ``make_group``: starts consumer groups (member processes) and closes them after.
* ``spark_standalone`` (session): a Spark standalone master and worker, and
  ``spark_connect`` (session): a Spark Connect server with Spark's Kafka source, both
  started from the PySpark install on 127.0.0.1 (integration_tests/spark_servers.py)
  on first use; one that does not start fails the test with its log.

If no broker can be started (no Docker engine, image build failure, broker crash),
every test that needs one FAILS with the reason and the broker's log; nothing is
skipped for lack of Docker.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from kafka_assignors.embedded import GroupRunner, KafkaCluster, start_cluster, start_single_broker
from kafka_assignors.embedded.admin import create_topic, delete_topic

BOOTSTRAP_ENV = "BOOTSTRAP_SERVERS"
log = logging.getLogger(__name__)


@dataclass
class BrokerHandle:
    """Where the tests' Kafka is; ``cluster`` is None for a bring-your-own cluster."""

    bootstrap: str
    cluster: KafkaCluster | None

    @property
    def byo(self) -> bool:
        return self.cluster is None


def byo_bootstrap() -> str | None:
    """The BOOTSTRAP_SERVERS value, if the suite runs against an existing cluster."""
    value = os.environ.get(BOOTSTRAP_ENV, "").strip()
    return value or None


def _start_or_fail(what: str, start: Callable[[], KafkaCluster]) -> KafkaCluster:
    try:
        return start()
    except Exception as exc:
        pytest.fail(
            f"Could not start the {what} for the integration tests: {type(exc).__name__}: {exc}\n"
            f"(Integration tests need a Docker engine, see integration_tests/README.md, "
            f"or {BOOTSTRAP_ENV}=host:port to use an existing cluster.)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[BrokerHandle]:
    """One real KRaft broker for the whole session (or the BOOTSTRAP_SERVERS cluster)."""
    byo = byo_bootstrap()
    if byo is not None:
        log.warning("using the existing cluster %s=%s (no containers)", BOOTSTRAP_ENV, byo)
        yield BrokerHandle(byo, None)
        return
    cluster = _start_or_fail("Kafka broker", start_single_broker)
    try:
        yield BrokerHandle(cluster.bootstrap, cluster)
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[KafkaCluster]:
    """A 3-broker KRaft cluster (racks r1, r2, r3) that tests may stop/start/pause brokers of."""
    if byo_bootstrap() is not None:
        pytest.skip(
            f"{BOOTSTRAP_ENV} is set: this test needs the 3-broker container cluster "
            "(it stops/starts brokers), which is not started in bring-your-own-cluster mode"
        )
    cluster = _start_or_fail("3-broker Kafka cluster", lambda: start_cluster(3))
    try:
        yield cluster
    finally:
        cluster.close()


def _test_slug(request: pytest.FixtureRequest) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-").lower()
    return slug[:60]


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """unique_name("topic") -> 'topic-<test name>-<random>' (valid Kafka topic/group name)."""

    def make(prefix: str) -> str:
        return f"{prefix}-{_test_slug(request)}-{uuid.uuid4().hex[:8]}"

    return make


@pytest.fixture
def make_topic(
    request: pytest.FixtureRequest, unique_name: Callable[[str], str]
) -> Iterator[Callable[..., str]]:
    """Create topics with unique names; they are deleted at the end of the test.

    make_topic(partitions, *, replication_factor=1, configs=None, bootstrap=None,
    keep=False) -> topic name. ``bootstrap`` defaults to the single broker.
    """
    created: list[tuple[str, str]] = []

    def make(
        partitions: int = 1,
        *,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
        bootstrap: str | None = None,
        keep: bool = False,
    ) -> str:
        if bootstrap is None:
            bootstrap = request.getfixturevalue("kafka_broker").bootstrap
        name = unique_name("topic")
        create_topic(bootstrap, name, partitions, replication_factor, configs)
        if not keep:
            created.append((bootstrap, name))
        return name

    yield make
    for bootstrap, name in created:
        delete_topic(bootstrap, name)


@pytest.fixture
def make_group(
    request: pytest.FixtureRequest, unique_name: Callable[[str], str]
) -> Iterator[Callable[..., GroupRunner]]:
    """Start consumer groups (member processes); every group is closed at test end.

    make_group(topics, strategies=("range",), *, members=0, bootstrap=None,
    group_id=None, **member_options) -> GroupRunner
    """
    runners: list[GroupRunner] = []

    def make(
        topics: Sequence[str],
        strategies: Sequence[str] = ("range",),
        *,
        members: int = 0,
        bootstrap: str | None = None,
        group_id: str | None = None,
        **member_options: Any,
    ) -> GroupRunner:
        if bootstrap is None:
            bootstrap = request.getfixturevalue("kafka_broker").bootstrap
        runner = GroupRunner(
            bootstrap,
            group_id or unique_name("group"),
            topics,
            strategies,
            members=members,
            **member_options,
        )
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A standalone master + one worker (2 cores) for the session; ``.url`` is spark://..."""
    from .spark_servers import ServerFailed, start_standalone

    try:
        cluster = start_standalone(tmp_path_factory.mktemp("spark-standalone"))
    except ServerFailed as exc:
        pytest.fail(f"Could not start the Spark standalone cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def spark_connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Spark Connect server (local[2], with Spark's Kafka source) for the session;
    ``.url`` is sc://..."""
    from kafka_assignors.pipeline.kafka_package import kafka_conf

    from .spark_servers import ServerFailed, start_connect

    try:
        server = start_connect(tmp_path_factory.mktemp("spark-connect"), kafka_conf())
    except ServerFailed as exc:
        pytest.fail(f"Could not start the Spark Connect server: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """On a failed test, attach the tail of each broker's log it used to the report."""
    report = yield
    if report.when == "call" and report.failed:
        funcargs = getattr(item, "funcargs", {})
        clusters: list[KafkaCluster] = []
        if isinstance(funcargs.get("kafka_cluster"), KafkaCluster):
            clusters.append(funcargs["kafka_cluster"])
        handle = funcargs.get("kafka_broker")
        if isinstance(handle, BrokerHandle) and handle.cluster is not None:
            clusters.append(handle.cluster)
        for cluster in clusters:
            for node in cluster.nodes:
                tail = "\n".join(node.logs().splitlines()[-80:])
                report.sections.append((f"broker {node.node_id} log (last 80 lines)", tail))
    return report
