"""Real Spark servers for the pipeline's tests, started from the PySpark install alone.

* :func:`start_standalone`: a standalone master and one worker (``spark-class
  org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), on 127.0.0.1 with
  free ports; the worker's executors run this interpreter.
* :func:`start_connect`: a Spark Connect server (``spark-submit --class
  org.apache.spark.sql.connect.service.SparkConnectServer``; its jar ships inside
  PySpark 4), ``local[2]``, with Spark's Kafka source on its classpath for ``profile``.

Each process logs to a file; :class:`ServerFailed` carries the log's end when one does
not come up, and ``stop()`` ends exactly the processes started here, by their pid.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT = 180.0  # the Connect server's first start downloads the Kafka source (Ivy)
LOOPBACK = "127.0.0.1"


class ServerFailed(RuntimeError):
    """A Spark process that did not start; the message ends with its log."""


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SPARK_REMOTE", None)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP=LOOPBACK,
        # the executors' Python: this interpreter (kafka-python, pyarrow, pandas installed)
        PYSPARK_PYTHON=sys.executable,
        SPARK_NO_DAEMONIZE="1",
    )
    return env


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=10)


def launch(name: str, cmd: Sequence[str], log: Path) -> Process:
    with log.open("wb") as out:
        popen = subprocess.Popen(
            list(cmd), stdout=out, stderr=subprocess.STDOUT, env=server_env(), cwd=log.parent
        )
    return Process(name, popen, log)


def wait_until(process: Process, port: int, marker: str, timeout: float = START_TIMEOUT) -> None:
    """Until the process listens on ``port`` and its log says ``marker``; else ServerFailed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            break
        if marker in process.log_text():
            try:
                socket.create_connection((LOOPBACK, port), timeout=2).close()
                return
            except OSError:
                pass
        time.sleep(0.5)
    state = (
        f"exited with {process.popen.returncode}"
        if process.popen.poll() is not None
        else f"not ready after {timeout:.0f} s"
    )
    process.stop()
    raise ServerFailed(
        f"{process.name} {state} (waiting for {marker!r} and port {port}); "
        f"its log {process.log}:\n{process.tail()}"
    )


@dataclass
class Standalone:
    """A master and one worker; ``url`` is ``spark://127.0.0.1:PORT``."""

    url: str
    work_dir: Path
    processes: list[Process] = field(default_factory=list)

    def app_dirs(self) -> set[Path]:
        return {p for p in self.work_dir.glob("app-*") if p.is_dir()}

    def stop(self) -> None:
        for process in reversed(self.processes):  # the worker first: it ends its executors
            process.stop()


def start_standalone(root: Path, cores: int = 2, memory: str = "2g") -> Standalone:
    root.mkdir(parents=True, exist_ok=True)
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, ui = free_port(), free_port()
    master = launch(
        "Spark master",
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", LOOPBACK,
         "--port", str(port), "--webui-port", str(ui)],
        root / "master.log",
    )
    cluster = Standalone(f"spark://{LOOPBACK}:{port}", root / "work", [master])
    try:
        wait_until(master, port, "I have been elected leader")
        worker_port = free_port()
        worker = launch(
            "Spark worker",
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
             "--port", str(worker_port), "--webui-port", str(free_port()),
             "--cores", str(cores), "--memory", memory,
             "--work-dir", str(cluster.work_dir), cluster.url],
            root / "worker.log",
        )
        cluster.processes.append(worker)
        wait_until(worker, worker_port, "Successfully registered with master")
    except BaseException:
        cluster.stop()
        raise
    return cluster


@dataclass
class ConnectServer:
    """A Spark Connect server; ``url`` is ``sc://127.0.0.1:PORT``."""

    url: str
    process: Process

    @property
    def log(self) -> Path:
        return self.process.log

    def log_size(self) -> int:
        return self.log.stat().st_size

    def log_since(self, offset: int) -> str:
        with self.log.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def stop(self) -> None:
        self.process.stop()


def start_connect(root: Path, kafka_conf: dict[str, str]) -> ConnectServer:
    """``kafka_conf``: the ``spark.jars.*`` settings that add Spark's Kafka source."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    settings = {
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.ui.enabled": "false",
        "spark.pyspark.python": sys.executable,
        **kafka_conf,
    }
    cmd = [str(spark_home() / "bin" / "spark-submit"),
           "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
           "--name", "kafka-assignors tests: Spark Connect", "--master", "local[2]"]
    for key, value in settings.items():
        cmd += ["--conf", f"{key}={value}"]
    process = launch("Spark Connect server", [*cmd, "spark-internal"], root / "connect.log")
    wait_until(process, port, "Spark Connect server started")
    return ConnectServer(f"sc://{LOOPBACK}:{port}", process)
