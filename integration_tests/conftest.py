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

In a parallel run (``pytest -n N``, pytest-xdist; ``make test`` runs one) the single broker
is the run's, started once by the xdist controller and shared by every worker
(``shared_broker.py``), and the tests that cannot share a worker's time or fixtures run as
serial groups (``scheduling.py``: the usage matrices, the 3-broker cluster's tests, Spark,
the compatibility cells), longest first. Every run samples the machine's 1-minute load and
prints it beside the wall time of each group and of each long test.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.embedded import GroupRunner, KafkaCluster, start_cluster, start_single_broker
from kafka_assignors.embedded.admin import create_topic, delete_topic

from . import scheduling, shared_broker

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
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[BrokerHandle]:
    """One real KRaft broker for the whole session (or the BOOTSTRAP_SERVERS cluster)."""
    byo = byo_bootstrap()
    if byo is not None:
        log.warning("using the existing cluster %s=%s (no containers)", BOOTSTRAP_ENV, byo)
        yield BrokerHandle(byo, None)
        return
    run_dir = _worker_run_dir(request.config)
    if run_dir is not None:  # a parallel run: the controller's broker, shared by every worker
        try:
            shared = shared_broker.attach(run_dir)
        except Exception as exc:
            pytest.fail(
                f"Could not start the Kafka broker for the integration tests: {exc}\n"
                f"(Integration tests need a Docker engine, see integration_tests/README.md, "
                f"or {BOOTSTRAP_ENV}=host:port to use an existing cluster.)",
                pytrace=False,
            )
        yield BrokerHandle(shared.bootstrap, shared)  # removed by the controller at the end
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
                lines = node.logs().splitlines()
                report.sections.append((f"broker {node.node_id} log (last 80 lines)",
                                        "\n".join(lines[-80:])))
                # a shared broker's last lines are often other tests': its errors, with their
                # stack traces, name what went wrong on the broker (an UNKNOWN_SERVER_ERROR)
                errors = broker_errors(lines)
                if errors:
                    report.sections.append((f"broker {node.node_id} errors (last 200 lines)",
                                            "\n".join(errors[-200:])))
    return report


def broker_errors(lines: Sequence[str]) -> list[str]:
    """A broker log's ERROR lines, each with the stack trace that follows it."""
    out: list[str] = []
    inside = False
    for line in lines:
        if " ERROR " in line:
            inside = True
            out.append(line)
        elif inside and (line.startswith(("\t", " ", "Caused by")) or "Exception" in line[:120]):
            out.append(line)
        else:
            inside = False
    return out


# ---- parallel runs (pytest-xdist): the shared broker, the groups, the load ---------------------
RUN_DIR_KEY = shared_broker.RUN_DIR_KEY


def _worker_run_dir(config: pytest.Config) -> Path | None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or RUN_DIR_KEY not in workerinput:
        return None
    return Path(workerinput[RUN_DIR_KEY])


class _Run:
    """The controller's (or a serial run's) plugin: the shared broker's server, the load
    sampler, and each integration test's start, stop and time spent."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.sampler = scheduling.LoadSampler()
        self.run_dir: Path | None = None
        self.server: shared_broker.BrokerServer | None = None
        #: node id -> [first start, last stop, seconds in setup + call + teardown]
        self.tests: dict[str, list[float]] = {}

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.run_dir is not None:
            node.workerinput[RUN_DIR_KEY] = str(self.run_dir)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.nodeid.startswith("integration_tests/"):
            return
        entry = self.tests.setdefault(report.nodeid, [report.start, report.stop, 0.0])
        entry[0] = min(entry[0], report.start)
        entry[1] = max(entry[1], report.stop)
        entry[2] += report.duration

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The wall time of each integration group and of each test over a minute, each with
        the machine's 1-minute load meanwhile (a timing judge's evidence: the machine's stall
        or the client's), and the run's load overall."""
        if not self.tests:
            return
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", "kafka-assignors: integration groups, wall time and load")
        names = scheduling.read_groups(self.run_dir)
        groups: dict[str, list[float]] = {}
        for nodeid, (start, stop, busy) in self.tests.items():
            g = groups.setdefault(names.get(nodeid, "other tests"), [start, stop, 0.0, 0.0])
            g[0], g[1] = min(g[0], start), max(g[1], stop)
            g[2] += busy
            g[3] += 1
        lines = []
        for name, (start, stop, busy, count) in sorted(groups.items(), key=lambda kv: kv[1][0]):
            lines.append(f"{name}: {count:.0f} tests, {stop - start:.0f} s wall "
                         f"({time.strftime('%H:%M:%S', time.localtime(start))}-"
                         f"{time.strftime('%H:%M:%S', time.localtime(stop))}), "
                         f"{busy:.0f} s of test time; "
                         f"{scheduling.describe(self.sampler.between(start, stop))}")
            write(lines[-1])
        long = sorted(((busy, nodeid, start, stop) for nodeid, (start, stop, busy)
                       in self.tests.items() if busy >= 60), reverse=True)
        if long:
            write("tests over 60 s:")
        for busy, nodeid, start, stop in long:
            write(f"  {busy:5.0f} s  {nodeid}: "
                  f"{scheduling.describe(self.sampler.between(start, stop))}")
        everything = [load for _, load in self.sampler.samples]
        write(f"the whole run: {scheduling.describe(everything)}; {os.cpu_count()} CPUs")
        out = os.environ.get("KAFKA_ASSIGNORS_GROUP_TIMES")
        if out:  # make test prints these lines again in its stage summary
            with open(out, "a") as handle:
                handle.write("".join(f"    {line}\n" for line in lines))
        durations = os.environ.get("KAFKA_ASSIGNORS_WRITE_DURATIONS")
        if durations:
            scheduling.write_durations(Path(durations),
                                       [(n, busy) for n, (_, _, busy) in self.tests.items()])

    def close(self) -> None:
        self.sampler.close()
        if self.server is not None:
            self.server.close()
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)


_RUN = pytest.StashKey[_Run]()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # a worker: the controller keeps the run's plugin
    run = _Run(config)
    if getattr(config.option, "dist", "no") != "no" and not config.option.collectonly:
        run.run_dir = Path(tempfile.mkdtemp(prefix="kafka-assignors-run-"))
        if byo_bootstrap() is None:
            run.server = shared_broker.BrokerServer(run.run_dir)
    config.stash[_RUN] = run
    config.pluginmanager.register(run, "kafka-assignors-run")


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is not None:
        run.close()


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n N`` (xdist's "load"): our units and order (scheduling.py); other --dist modes
    are xdist's own."""
    run = config.stash.get(_RUN, None)
    if config.getvalue("dist") == "load" and run is not None and run.run_dir is not None:
        return scheduling.make_scheduler(config, log, run.run_dir)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A worker of a parallel run: tell the controller which tests form a serial group."""
    run_dir = _worker_run_dir(config)
    if run_dir is not None:
        ours = (i for i in items if i.nodeid.startswith("integration_tests/"))
        scheduling.write_groups(run_dir, ours)
