"""The SparkSession the pipeline runs on, with Spark's own Kafka source when asked for.

The Kafka source is ``spark-sql-kafka-0-10_2.13`` of the installed Spark
version, fetched by Spark's Ivy (``spark.jars.packages``) and cached in Ivy's
default cache.  When a Maven repository lacks that exact version (mirrors lag
behind PyPI), the newest older release of the same major version is used
instead, found with the Ivy that ships inside PySpark; the choice is printed
and remembered per Spark version.  ``--kafka-package`` overrides all this.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCALA = "2.13"
SQL_KAFKA = f"spark-sql-kafka-0-10_{SCALA}"
TOKEN_PROVIDER = f"spark-token-provider-kafka-0-10_{SCALA}"
#: Spark ships slf4j; some mirrors lack the version the Kafka source asks for.
ALWAYS_EXCLUDE = ("org.slf4j:slf4j-api",)
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kafka-assignors"


def log(message: str) -> None:
    print(f"[kafka-assignors] {message}", file=sys.stderr, flush=True)


def spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def kafka_conf(override: str | None = None) -> dict[str, str]:
    """``spark.jars.*`` settings that put Spark's Kafka source on the classpath."""
    override = override or os.environ.get("KAFKA_ASSIGNORS_SPARK_KAFKA_PACKAGE")
    excludes = ",".join(ALWAYS_EXCLUDE)
    if override:
        return {"spark.jars.packages": override, "spark.jars.excludes": excludes}
    version = spark_version()
    exact = {
        "spark.jars.packages": f"org.apache.spark:{SQL_KAFKA}:{version}",
        "spark.jars.excludes": excludes,
    }
    remembered = CACHE / f"spark-kafka-{version}.json"
    try:
        conf: dict[str, str] = json.loads(remembered.read_text())
        if all(Path(j).exists() for j in conf.get("spark.jars", "").split(",") if j):
            return conf
    except (OSError, ValueError):
        pass
    ivy = _ivy_jar()
    if ivy is None or _ivy_resolve(ivy, SQL_KAFKA, version, transitive=True) is not None:
        conf = exact
    else:
        conf = _fallback(ivy, version) or exact
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        remembered.write_text(json.dumps(conf))
    except OSError:
        pass
    return conf


def _fallback(ivy: Path, version: str) -> dict[str, str] | None:
    major = version.split(".")[0]
    sql = _ivy_resolve(ivy, SQL_KAFKA, f"[{major}.0,{version}]", transitive=False)
    if sql is None:
        return None
    older = _version_of(Path(sql).name, SQL_KAFKA)
    token = _ivy_resolve(ivy, TOKEN_PROVIDER, f"[{major}.0,{older}]", transitive=False)
    if older is None or token is None:
        return None
    log(
        f"WARNING: Maven has no {SQL_KAFKA} {version} (the installed Spark); using {older} "
        f"with {Path(token).name}. Set --kafka-package to choose another."
    )
    return {
        "spark.jars.packages": f"org.apache.spark:{SQL_KAFKA}:{older}",
        "spark.jars.excludes": ",".join((*ALWAYS_EXCLUDE, f"org.apache.spark:{TOKEN_PROVIDER}")),
        "spark.jars": token,
    }


def _version_of(jar_name: str, artifact: str) -> str | None:
    stem = jar_name.removesuffix(".jar")
    marker = f"{artifact}-"
    return stem[stem.index(marker) + len(marker) :] if marker in stem else None


def _ivy_jar() -> Path | None:
    import pyspark

    jars = sorted(Path(pyspark.__file__).parent.joinpath("jars").glob("ivy-*.jar"))
    return jars[-1] if jars else None


def _ivy_resolve(ivy: Path, artifact: str, revision: str, *, transitive: bool) -> str | None:
    """The cached jar of org.apache.spark:artifact:revision, or None if Ivy cannot get it."""
    with tempfile.TemporaryDirectory() as tmp:
        cachepath = Path(tmp) / "cp.txt"
        cmd = [
            "java",
            "-jar",
            str(ivy),
            "-dependency",
            "org.apache.spark",
            artifact,
            revision,
            "-confs",
            "default",
            "-cachepath",
            str(cachepath),
        ]
        if not transitive:
            cmd.append("-notransitive")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0 or not cachepath.exists():
            return None
        jars = [j for j in cachepath.read_text().strip().split(os.pathsep) if artifact in j]
        return jars[0] if jars else None


def build_session(
    master: str = "local[*]",
    app_name: str = "kafka-assignors",
    *,
    kafka: bool = False,
    kafka_package: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> Any:
    """A SparkSession (an existing one is reused, as under ``spark-submit``)."""
    import logging

    from pyspark.sql import SparkSession

    logging.getLogger("py4j").setLevel(logging.WARNING)  # one INFO line per JVM call
    settings = {
        "spark.ui.showConsoleProgress": "false",  # we print our own progress
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.driver.memory": "2g",
    }
    if kafka:
        log("adding Spark's Kafka source (the first run downloads it into Ivy's cache)")
        settings.update(kafka_conf(kafka_package))
    settings.update(conf or {})
    builder = SparkSession.builder.appName(app_name)
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        # under spark-submit the gateway already runs and its --master wins
        from pyspark import SparkConf

        master = str(SparkConf().get("spark.master", ""))
    elif master:
        builder = builder.master(master)
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
    if not str(spark.sparkContext.master or "").startswith("local"):
        ship_package(spark)
    return spark


def ship_package(spark: Any) -> Path:
    """Send this kafka_assignors to the executors (a zip on their Python path).

    Its dependencies (kafka-python, PyYAML) must be on the executors already;
    docs/pipeline.md shows how to ship a whole virtualenv instead.
    """
    import shutil

    import kafka_assignors

    package = Path(kafka_assignors.__file__).parent
    target = Path(tempfile.mkdtemp(prefix="kafka-assignors-")) / "kafka_assignors"
    shutil.copytree(
        package, target / "kafka_assignors", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    archive = Path(shutil.make_archive(str(target), "zip", target))
    spark.sparkContext.addPyFile(str(archive))
    log(f"shipped {archive.name} to the executors")
    return archive


@contextmanager
def progress(spark: Any, what: str, every: float = 2.0) -> Iterator[None]:
    """Print the running job's task progress every few seconds (stderr)."""
    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()
    started = time.monotonic()

    def watch() -> None:
        last, said = "", time.monotonic()
        while not stop.wait(every):
            done = total = running = 0
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
                    running += info.numActiveTasks
            if total:
                line = f"{what}: {done}/{total} tasks done, {running} running"
                if line != last or time.monotonic() - said > 30:
                    log(f"{line} ({time.monotonic() - started:.0f} s)")
                    last, said = line, time.monotonic()

    thread = threading.Thread(target=watch, name="progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every + 1)
