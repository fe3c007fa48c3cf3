"""Where the pipeline's Spark work runs: one :class:`Session` per command, in one of three modes.

* ``local``: a SparkSession in this process (``--master local[...]``, the default
  ``local[*]``); its Python workers are this interpreter, nothing is shipped.
* ``cluster``: a SparkSession whose executors are elsewhere (``--master spark://...``,
  ``yarn``, ``k8s://...``, or whatever ``spark-submit --master`` chose).
* ``connect``: a Spark Connect client (``--remote sc://host:port`` or PySpark's own
  ``SPARK_REMOTE`` variable); the driver and executors are the server's.

The session owns the differences: what it ships (this package as a zip through
``SparkSession.addArtifacts``, named by content hash because Spark refuses a
same-named artifact with new content), how it reports progress
(``statusTracker`` on classic sessions, a progress handler on Connect), and how a
written result is read back.  The jobs themselves (profile, evaluate) use the
DataFrame API only, which both kinds of session serve.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from .kafka_package import kafka_conf, log

Mode = Literal["local", "cluster", "connect"]
#: Seconds a master or Connect server has to answer before the command gives up.
CONNECT_TIMEOUT = 10.0
#: Seconds allowed for a Connect server's first answer (it retries for 10 minutes otherwise).
FIRST_ANSWER_TIMEOUT = 40.0
PROGRESS_EVERY = 2.0


class SessionError(RuntimeError):
    """A session that cannot be made as asked: one line saying why."""


class SparkUnavailable(SessionError):
    """The master or Connect server cannot be reached: one line naming it and why."""


@dataclass
class Session:
    """A SparkSession and the mode it runs in; commands go cli -> Session -> job."""

    spark: Any
    mode: Mode
    #: The master URL or the ``sc://`` address.
    where: str
    shipped: list[str] = field(default_factory=list)

    # --- making one ------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        *,
        master: str | None = None,
        remote: str | None = None,
        app_name: str = "kafka-assignors",
        kafka: bool = False,
        kafka_package: str | None = None,
        conf: Mapping[str, str] | None = None,
    ) -> Session:
        """``remote`` (else ``SPARK_REMOTE``) means Connect, else ``master`` (else local[*]).

        Under ``spark-submit`` its ``--master`` wins.  Raises :class:`SparkUnavailable`
        when the master or server does not answer.
        """
        if os.environ.get("PYSPARK_GATEWAY_PORT"):  # spark-submit started the JVM already
            return cls._classic("", app_name, kafka, kafka_package, conf)
        if remote is None and master is None:
            remote = os.environ.get("SPARK_REMOTE") or None
        if remote:
            return cls._connect(remote, conf)
        # PySpark would take SPARK_REMOTE over an explicit --master: the option wins here
        os.environ.pop("SPARK_REMOTE", None)
        return cls._classic(master or "local[*]", app_name, kafka, kafka_package, conf)

    @classmethod
    def wrap(cls, spark: Any) -> Session:
        """The Session of an existing SparkSession (classic or Connect)."""
        if type(spark).__module__.startswith("pyspark.sql.connect"):
            builder = getattr(spark.client, "_builder", None)  # its address, for messages only
            return cls(spark, "connect", f"sc://{builder.endpoint}" if builder else "Connect")
        master = str(spark.sparkContext.master or "")
        return cls(spark, "local" if master.startswith("local") else "cluster", master)

    @classmethod
    def _classic(
        cls,
        master: str,
        app_name: str,
        kafka: bool,
        kafka_package: str | None,
        conf: Mapping[str, str] | None,
    ) -> Session:
        import logging

        from pyspark import SparkConf
        from pyspark.sql import SparkSession

        logging.getLogger("py4j").setLevel(logging.WARNING)  # one INFO line per JVM call
        settings = {
            "spark.ui.showConsoleProgress": "false",  # we print our own progress
            "spark.sql.session.timeZone": "UTC",
            "spark.ui.enabled": "false",
            "spark.driver.memory": "2g",
        }
        if kafka and master:  # under spark-submit, its --packages (set now, it would be late
            # and spark.jars would replace the jars it resolved)
            log("adding Spark's Kafka source (the first run downloads it into Ivy's cache)")
            settings.update(kafka_conf(kafka_package))
        settings.update(conf or {})
        builder = SparkSession.builder.appName(app_name)
        if not master:  # under spark-submit
            master = str(SparkConf().get("spark.master", ""))
        else:
            builder = builder.master(master)
        check_master(master)
        if master.startswith("local"):
            # local workers must run this interpreter, which has kafka_assignors installed
            # (PySpark reads the variable when the context starts)
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            # one machine: keep the driver on loopback (Spark otherwise binds to the first
            # non-loopback interface it finds, and warns about it); settings given win
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            settings.setdefault("spark.driver.host", "127.0.0.1")
            settings.setdefault("spark.driver.bindAddress", "127.0.0.1")
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark: Any = builder.getOrCreate()
        spark.sparkContext.setLogLevel("WARN")
        session = cls.wrap(spark)
        if session.mode == "cluster":
            session.ship()
        return session

    @classmethod
    def _connect(cls, url: str, conf: Mapping[str, str] | None) -> Session:
        host, port = connect_address(url)
        _reach("Spark Connect server", url, [(host, port)])
        box: dict[str, Any] = {}
        # the client retries a silent server for about 10 minutes: bound the first call
        thread = threading.Thread(target=_first_answer, args=(url, box), name="connect")
        thread.daemon = True
        thread.start()
        thread.join(FIRST_ANSWER_TIMEOUT)
        problem = None
        if thread.is_alive():
            problem = f"did not answer within {FIRST_ANSWER_TIMEOUT:.0f} s"
        elif "error" in box:
            problem = one_line(box["error"])
        if problem is not None:
            if "spark" in box:  # else its exit hook would retry releasing the session
                box["spark"].client.close()
            raise SparkUnavailable(f"Spark Connect server {url}: {problem}")
        spark = box["spark"]
        settings = {"spark.sql.session.timeZone": "UTC", **(conf or {})}
        for key, value in settings.items():
            try:
                spark.conf.set(key, value)
            except Exception as exc:  # a cluster setting: the server's, not the session's
                spark.client.close()
                raise SessionError(f"--conf {key}: {one_line(exc)}") from None
        session = cls(spark, "connect", url)
        session.ship()
        return session

    # --- what it ships -----------------------------------------------------------------

    def ship(self) -> Path:
        """Send this kafka_assignors to the executors (a zip on their Python path).

        Its dependencies (kafka-python, PyYAML, pyarrow, pandas) must be on the
        executors already; docs/pipeline.md shows how to ship a whole virtualenv.
        """
        archive = package_zip()
        if archive.name not in self.shipped:
            self.spark.addArtifacts(str(archive), pyfile=True)
            self.shipped.append(archive.name)
            log(f"shipped {archive.name} to the executors")
        return archive

    # --- how it reports progress ---------------------------------------------------------

    @contextmanager
    def progress(self, what: str, every: float = PROGRESS_EVERY) -> Iterator[None]:
        """Print the running job's task progress every few seconds (stderr)."""
        line = _ProgressLine(what, every)
        if self.mode == "connect":
            handler = line.on_connect_progress
            self.spark.registerProgressHandler(handler)
            try:
                yield
            finally:
                self.spark.removeProgressHandler(handler)
            return
        tracker = self.spark.sparkContext.statusTracker()
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(every):
                done = total = running = 0
                for sid in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(sid)
                    if info is not None:
                        done += info.numCompletedTasks
                        total += info.numTasks
                        running += info.numActiveTasks
                line.show(done, total, running)

        thread = threading.Thread(target=watch, name="progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=every + 1)

    # --- results -------------------------------------------------------------------------

    def output_path(self, path: str | Path) -> str:
        """Where Spark writes ``path``: URLs as given, file paths made absolute (on Connect,
        on the server's file system)."""
        text = str(path)
        return text if "://" in text else str(Path(text).resolve())

    def describe(self) -> str:
        if self.mode == "connect":
            return f"Spark Connect {self.where} (Spark {self.spark.version} on the server)"
        return f"Spark {self.spark.version}, master {self.where}"

    def stop(self) -> None:
        self.spark.stop()


class _ProgressLine:
    """``what: 3/10 tasks done, 2 running (12 s)``, when it changes or every 30 s."""

    def __init__(self, what: str, every: float) -> None:
        self.what, self.every = what, every
        self.started = self.said = time.monotonic()
        self.last = ""
        self.lock = threading.Lock()

    def show(self, done: int, total: int, running: int) -> None:
        if not total:
            return
        line = f"{self.what}: {done}/{total} tasks done, {running} running"
        now = time.monotonic()
        with self.lock:
            if (line != self.last and now - self.said >= self.every) or now - self.said > 30:
                log(f"{line} ({now - self.started:.0f} s)")
                self.last, self.said = line, now

    def on_connect_progress(
        self, stages: Any, inflight_tasks: int, operation_id: str | None, done: bool
    ) -> None:
        stages = list(stages or [])
        if done or not stages:
            return
        finished = sum(s.num_completed_tasks for s in stages)
        self.show(finished, sum(s.num_tasks for s in stages), inflight_tasks)


def build_session(
    master: str = "local[*]",
    app_name: str = "kafka-assignors",
    *,
    kafka: bool = False,
    kafka_package: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> Any:
    """A classic SparkSession (an existing one is reused, as under ``spark-submit``)."""
    return Session.start(
        master=master, app_name=app_name, kafka=kafka, kafka_package=kafka_package, conf=conf
    ).spark


def _first_answer(url: str, box: dict[str, Any]) -> None:
    """A Connect session in ``box["spark"]`` that has answered once, else ``box["error"]``."""
    import warnings

    from pyspark.sql import SparkSession
    from pyspark.sql.connect.client.retries import DefaultPolicy

    try:
        spark: Any = SparkSession.builder.remote(url).getOrCreate()  # no call to the server yet
        box["spark"] = spark
        usual = spark.client.get_retry_policies()
        spark.client.set_retry_policies([DefaultPolicy(max_retries=4, max_backoff=2_000)])
        try:
            with warnings.catch_warnings():  # the error says it, once
                warnings.simplefilter("ignore")
                _ = spark.version
        finally:
            spark.client.set_retry_policies(usual)
    except Exception as exc:
        box["error"] = exc


def connect_address(url: str) -> tuple[str, int]:
    """(host, port) of ``sc://host[:port][/;params]`` (Spark Connect's default port 15002)."""
    parts = urlsplit(url)
    if parts.scheme != "sc" or not parts.hostname:
        raise SparkUnavailable(f"not a Spark Connect address: {url!r} (sc://host:port)")
    try:
        return parts.hostname, parts.port or 15002
    except ValueError:
        raise SparkUnavailable(f"not a Spark Connect address: {url!r} (bad port)") from None


def check_master(master: str) -> None:
    """Fail now, with one line, when a standalone master does not accept connections (Spark
    would retry for a minute and then print Java stack traces)."""
    if not master.startswith("spark://"):
        return
    hosts = []
    for hostport in master.removeprefix("spark://").split(","):
        host, _, port = hostport.strip().rpartition(":")
        if not host or not port.isdigit():
            raise SparkUnavailable(f"not a Spark master URL: {master!r} (spark://host:port)")
        hosts.append((host.strip("[]"), int(port)))
    _reach("Spark master", master, hosts)


def _reach(what: str, url: str, addresses: list[tuple[str, int]]) -> None:
    reasons = []
    for host, port in addresses:
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
            return
        except OSError as exc:
            reasons.append(f"{host}:{port}: {exc.strerror or exc}")
    raise SparkUnavailable(f"cannot reach the {what} at {url} ({'; '.join(reasons)})")


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (Spark's carry JVM stack traces; gRPC's say
    what happened in ``details = "..."``)."""
    text = str(exc).strip()
    details = re.search(r'details = "([^"]*)"', text)
    lines = text.splitlines()
    first = details.group(1) if details else (lines[0] if lines else "")
    return f"{type(exc).__name__}: {first}"[:300]


def package_zip() -> Path:
    """This kafka_assignors as a zip named by its content's hash (same content, same name)."""
    import kafka_assignors

    root = Path(kafka_assignors.__file__).parent
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
        and p.suffix != ".pyc"
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    target = Path(tempfile.gettempdir()) / f"kafka_assignors-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in files:
                zf.write(path, Path("kafka_assignors") / path.relative_to(root))
        partial.replace(target)
    return target
