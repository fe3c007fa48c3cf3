"""Spark's Kafka source for ``profile``: which ``spark-sql-kafka`` package to put on the classpath.

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
from pathlib import Path

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
