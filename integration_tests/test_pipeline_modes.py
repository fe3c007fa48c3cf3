"""The pipeline's commands on a real standalone cluster (spark-submit) and a real Spark Connect
server, as a user runs them: each command in its own process, against servers that the
session fixtures start (spark_standalone, spark_connect), and the broker fixture."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.simulator import expand_grid, load_grid, simulate

from .spark_servers import LOOPBACK, free_port, server_env, spark_home

pq = pytest.importorskip("pyarrow.parquet")

#: Hang guard for one command (a first run may download Spark's Kafka source).
COMMAND_TIMEOUT = 300
GRID = """\
clusters:
  - {name: small, topics: {a: 6, b: 4}}
consumers: [2, 3]
subscriptions: [all, unequal]
churn:
  growth: ['scale-out 2', crash, 'add-partitions +2']
"""
ASSIGNORS = "range,balanced-sticky,cooperative-balanced-sticky"


def run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=env or server_env()
    )
    assert done.returncode == 0, f"{cmd[:4]}... exited {done.returncode}:\n{done.stderr[-4000:]}"
    return done


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafka_assignors.cli", "--log-level", "WARNING", *args]


def spark_submit(master: str, *args: str, packages: dict[str, str] | None = None) -> list[str]:
    """spark-submit of the pipeline's entry file, in client mode, as docs/pipeline.md shows."""
    from kafka_assignors.pipeline import __main__ as entry

    cmd = [str(spark_home() / "bin" / "spark-submit"), "--master", master,
           "--conf", f"spark.pyspark.python={sys.executable}",
           "--conf", f"spark.driver.host={LOOPBACK}"]
    for key, value in (packages or {}).items():
        cmd += ["--conf", f"{key}={value}"]
    return [*cmd, str(Path(entry.__file__)), *args]


def expected_rows(grid: Path) -> dict[tuple[str, str, int], tuple[int | None, int | None]]:
    """(scenario, assignor, step) -> (moved, count imbalance), simulated in this process."""
    out = {}
    for scenario in expand_grid(load_grid(grid)):
        for name in ASSIGNORS.split(","):
            for step in simulate(scenario, name):
                out[(scenario.name, name, step.step)] = (step.moved, step.count_imbalance)
    return out


def written_rows(steps: Path) -> dict[tuple[str, str, int], tuple[int | None, int | None]]:
    table = pq.read_table(steps).to_pylist()
    return {
        (r["scenario"], r["assignor"], r["step"]): (r["moved"], r["count_imbalance"])
        for r in table
    }


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    return path


def finished_tasks(log: str) -> int:
    return log.count("Executor: Finished task")


# --- the standalone cluster --------------------------------------------------------------


def new_executor_logs(cluster: Any, before: set[Path]) -> tuple[list[Path], str]:
    """The app directories the worker made since ``before``, and their executors' stderr."""
    apps = sorted(cluster.app_dirs() - before)
    logs = "".join(p.read_text(errors="replace") for app in apps for p in app.glob("*/stderr"))
    return apps, logs


def test_evaluate_under_spark_submit_runs_on_the_worker(
    spark_standalone: Any, grid: Path, tmp_path: Path
) -> None:
    """spark-submit --master spark://...: the worker's executor fetches the shipped package
    and runs the tasks; the rows are what the simulator gives in this process."""
    before = spark_standalone.app_dirs()
    steps = tmp_path / "steps.parquet"
    done = run(spark_submit(spark_standalone.url, "evaluate", "--scenarios", str(grid),
                            "--assignors", ASSIGNORS, "--out", str(steps)))
    assert "running on Spark 4." in done.stdout and spark_standalone.url in done.stdout
    assert "CPU s in the workers); 0 failed" in done.stdout
    assert written_rows(steps) == expected_rows(grid)
    apps, logs = new_executor_logs(spark_standalone, before)
    assert len(apps) == 1, apps
    assert list(apps[0].glob("*/kafka_assignors-*.zip")), "the package was not shipped"
    assert finished_tasks(logs) >= 1 + 2, logs[-3000:]  # the write's tasks, then the totals


def test_profile_under_spark_submit_reads_the_topic_on_the_worker(
    spark_standalone: Any, kafka_broker: Any, make_topic: Callable[..., str], tmp_path: Path
) -> None:
    """spark-submit with the Kafka source package: per-partition counts of a real topic,
    read by the worker's executor."""
    from kafka_assignors.pipeline.kafka_package import kafka_conf

    topic = make_topic(2)
    produce(kafka_broker.bootstrap, topic, {0: 7, 1: 3})
    before = spark_standalone.app_dirs()
    out = tmp_path / "profile"
    run(spark_submit(spark_standalone.url, "profile", "--bootstrap", kafka_broker.bootstrap,
                     "--topic", topic, "--weight", "messages", "--out", str(out),
                     packages=kafka_conf()))
    assert profile_counts(out) == {0: 7, 1: 3}
    _, logs = new_executor_logs(spark_standalone, before)
    assert finished_tasks(logs) >= 2, logs[-3000:]  # a task per Kafka partition at least


# --- Spark Connect -----------------------------------------------------------------------


def test_evaluate_on_spark_connect_runs_on_the_server(
    spark_connect: Any, grid: Path, tmp_path: Path
) -> None:
    """--remote sc://...: the server's executor runs the tasks (its log counts them), the
    client only sends the plan and the package; same rows as the simulator here."""
    offset = spark_connect.log_size()
    steps = tmp_path / "steps.parquet"
    done = run(cli("evaluate", "--remote", spark_connect.url, "--scenarios", str(grid),
                   "--assignors", ASSIGNORS, "--out", str(steps)))
    assert f"running on Spark Connect {spark_connect.url}" in done.stdout
    assert "kafka_assignors-" in done.stderr  # shipped with addArtifacts
    assert "CPU s in the workers); 0 failed" in done.stdout
    assert written_rows(steps) == expected_rows(grid)
    assert finished_tasks(spark_connect.log_since(offset)) >= 1 + 2


def test_profile_on_spark_connect_through_spark_remote(
    spark_connect: Any, kafka_broker: Any, make_topic: Callable[..., str], tmp_path: Path
) -> None:
    """SPARK_REMOTE, as PySpark reads it, selects the server; its Kafka source reads the
    topic there."""
    topic = make_topic(3)
    produce(kafka_broker.bootstrap, topic, {0: 5, 2: 9})
    offset = spark_connect.log_size()
    out = tmp_path / "profile"
    env = {**server_env(), "SPARK_REMOTE": spark_connect.url}
    done = run(cli("profile", "--bootstrap", kafka_broker.bootstrap, "--topic", topic,
                   "--weight", "messages", "--out", str(out)), env=env)
    assert f"running on Spark Connect {spark_connect.url}" in done.stdout
    assert profile_counts(out) == {0: 5, 1: 0, 2: 9}
    assert finished_tasks(spark_connect.log_since(offset)) >= 3


def test_analyze_on_spark_connect_writes_the_report_here(
    spark_connect: Any, kafka_broker: Any, make_topic: Callable[..., str], tmp_path: Path
) -> None:
    """analyze, unchanged, on the server: profile and evaluate run there, the report is
    built here from what they wrote."""
    topic = make_topic(4)
    produce(kafka_broker.bootstrap, topic, {0: 20, 1: 5, 2: 5, 3: 1})
    offset = spark_connect.log_size()
    done = run(cli("analyze", "--remote", spark_connect.url, "--bootstrap",
                   kafka_broker.bootstrap, "--topic", topic, "--consumers", "2,3",
                   "--assignors", "range,balanced-sticky,load-aware", "--out", str(tmp_path)))
    assert f"report: {(tmp_path / 'report' / 'report.html').resolve()}" in done.stdout
    assert "recommendation: " in done.stdout
    assert profile_counts(tmp_path / "profile") == {0: 20, 1: 5, 2: 5, 3: 1}
    steps = pq.read_table(tmp_path / "evaluate" / "steps.parquet").to_pylist()
    assert {r["assignor"] for r in steps} == {"range", "balanced-sticky", "load-aware"}
    assert not [r for r in steps if r["error"]]
    assert finished_tasks(spark_connect.log_since(offset)) >= 4


# --- addresses that do not answer ----------------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        s.listen(8)
        yield int(s.getsockname()[1])


@pytest.mark.parametrize(
    "how", ["--remote refused", "--master refused", "SPARK_REMOTE unknown host", "--remote silent"]
)
def test_an_unreachable_master_or_server_is_one_line_naming_it(
    how: str, grid: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Exit 2 and one line with the address (no Java stack trace); a server that accepts
    but never answers is given up on after 40 s (the client would retry for 10 minutes)."""
    closed = free_port()  # nothing listens there any more
    env = server_env()
    args = ["evaluate", "--scenarios", str(grid), "--out", str(tmp_path / "x")]
    if how == "--remote refused":
        address = f"sc://{LOOPBACK}:{closed}"
        args += ["--remote", address]
    elif how == "--master refused":
        address = f"spark://{LOOPBACK}:{closed}"
        args += ["--master", address]
    elif how == "SPARK_REMOTE unknown host":
        address = "sc://no-such-host.invalid:15002"
        env["SPARK_REMOTE"] = address
    else:
        address = f"sc://{LOOPBACK}:{request.getfixturevalue('silent_port')}"
        args += ["--remote", address]
    started = time.monotonic()
    done = subprocess.run(cli(*args), capture_output=True, text=True, timeout=120, env=env)
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and address in errors[0], done.stderr
    assert errors[0].startswith("kafka-assignors evaluate: error: ")
    assert "Traceback" not in done.stderr and "at org.apache" not in done.stderr
    print(f"{how}: failed in {took:.1f} s")  # reported, not asserted (machine load varies)


# --- helpers ---------------------------------------------------------------------------------


def produce(bootstrap: str, topic: str, per_partition: dict[int, int]) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    for partition, n in per_partition.items():
        for i in range(n):
            producer.send(topic, key=f"k{i % 3}".encode(), value=b"v" * 10, partition=partition)
    producer.flush(timeout=30)
    producer.close()


def profile_counts(out: Path) -> dict[int, int]:
    entries = json.loads((out / "profile.json").read_text())["partitions"]
    return {int(e["partition"]): int(e["messages"]) for e in entries}

