"""Command-line options the pipeline's commands share (profile, evaluate, sizing, analyze).

One module that ``cli`` and ``analyze`` both import, so neither imports the other.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._cli_args import bootstrap_servers, key_value
from .._cli_args import rate as rate

REPORTS = Path("reports")


def spark_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Spark (local, a cluster, or Spark Connect)")
    g.add_argument(
        "--master",
        help="Spark master: local[N] (default local[*]), spark://host:port, yarn, k8s://...; "
        "ignored under spark-submit, whose --master wins",
    )
    g.add_argument(
        "--remote",
        metavar="sc://HOST:PORT",
        help="run on a Spark Connect server instead (default: the SPARK_REMOTE environment "
        "variable, unless --master is given)",
    )
    g.add_argument(
        "--conf",
        action="append",
        default=[],
        type=key_value,
        metavar="KEY=VALUE",
        help="extra Spark setting, repeatable (e.g. spark.executor.memory=4g; on Connect, "
        "session settings only)",
    )


def session_from_args(
    args: argparse.Namespace, *, kafka: bool = False, kafka_package: str | None = None
) -> Any:
    """The command's :class:`~.session.Session`; an unreachable master or server ends the
    command with one line naming it (exit 2)."""
    from .session import Session, SessionError

    try:
        session = Session.start(
            master=args.master,
            remote=args.remote,
            app_name=f"kafka-assignors {args.command}",
            kafka=kafka,
            kafka_package=kafka_package,
            conf=conf_pairs(args.conf),
        )
    except SessionError as exc:
        print(f"kafka-assignors {args.command}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    say(f"running on {session.describe()}")
    return session


def kafka_options(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    """--bootstrap plus the security options explain has (one shared definition)."""
    from ..explain.connection import add_security_options

    p.add_argument(
        "--bootstrap",
        type=bootstrap_servers,
        required=required,
        help="Kafka bootstrap servers, host:port[,...]",
    )
    add_security_options(p)


def security(args: argparse.Namespace) -> dict[str, Any]:
    """kafka-python security keywords from the options (exits 2 with the reason if invalid)."""
    from ..explain.connection import ConnectionConfigError, java_properties, security_kwargs

    try:
        kwargs, ignored = security_kwargs(args)
        java_properties(kwargs)  # refuse now what Spark's source could not be given
    except ConnectionConfigError as exc:
        print(f"kafka-assignors {args.command}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if ignored:
        print(
            f"ignored client properties (only security settings are used): {', '.join(ignored)}",
            file=sys.stderr,
        )
    return kwargs


def conf_pairs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--conf takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out


def say(message: str) -> None:
    print(message, flush=True)


def missing_kafka_source(command: str, session: Any, exc: BaseException) -> bool:
    """Says so in one line (and returns True) when a job failed for want of Spark's Kafka
    source, which the server or spark-submit must be given (the client cannot add it)."""
    if "DATA_SOURCE_NOT_FOUND" not in str(exc) or "kafka" not in str(exc):
        return False
    from .kafka_package import SQL_KAFKA, spark_version

    print(
        f"kafka-assignors {command}: error: Spark's Kafka source is not on {session.where}: "
        f"start the server (or spark-submit) with --packages "
        f"org.apache.spark:{SQL_KAFKA}:{spark_version()}",
        file=sys.stderr,
    )
    return True
