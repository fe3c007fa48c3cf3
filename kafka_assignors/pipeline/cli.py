"""``kafka-assignors profile | evaluate | sizing | report``: the pipeline's subcommands.

Registered by :mod:`kafka_assignors.cli` through :func:`add_parser`.  Spark,
pandas and matplotlib are imported only when a command runs.  Outputs go
under ``reports/`` by default, where ``report`` looks for them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._cli_args import (
    count,
    existing_file,
    existing_path,
    factor,
    headroom,
    key_value,
    offsets_spec,
    time_spec,
)
from .options import (
    REPORTS,
    conf_pairs,
    kafka_options,
    missing_kafka_source,
    rate,
    say,
    security,
    session_from_args,
    spark_options,
)

DEFAULT_PROFILE_DIR = REPORTS / "profile"
DEFAULT_EVALUATE = REPORTS / "evaluate" / "steps.parquet"
DEFAULT_SIZING = REPORTS / "sizing.json"
DEFAULT_REPORT_DIR = REPORTS / "report"
DEFAULT_GRID = Path(__file__).parent / "scenarios" / "default.yaml"


def add_parser(subparsers: Any) -> None:
    """Add the pipeline subcommands: profile, evaluate, sizing, report and analyze (all four
    in one go)."""
    from . import analyze

    _profile(subparsers)
    _evaluate(subparsers)
    _sizing(subparsers)
    _report(subparsers)
    analyze.add_parser(subparsers)


# --- profile -----------------------------------------------------------------------------


def _profile(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "profile",
        help="measure per-partition load with Spark's Kafka source",
        description="Read topics with Spark's Kafka source over an offset range or a time "
        "window and write the load profile (JSON + Parquet) that LoadAwareAssignor "
        "and the report read. With --group, also committed offsets and lag.",
    )
    kafka_options(p)
    p.add_argument(
        "--topic",
        action="append",
        required=True,
        metavar="TOPIC",
        help="topic to profile (repeatable, or comma-separated)",
    )
    p.add_argument("--group", help="consumer group: add its committed offsets and lag")
    p.add_argument(
        "--from-offsets",
        type=offsets_spec("earliest"),
        default="earliest",
        help="'earliest' (default) or Spark's JSON, e.g. '{\"t\":{\"0\":100}}'",
    )
    p.add_argument(
        "--to-offsets",
        type=offsets_spec("latest"),
        default="latest",
        help="'latest' (default) or Spark's JSON",
    )
    p.add_argument(
        "--since",
        type=time_spec,
        help="window start instead of offsets: ISO time, epoch ms or relative like -15m, -2h",
    )
    p.add_argument(
        "--until",
        type=time_spec,
        help="window end (same forms; default now when --since is given)",
    )
    p.add_argument(
        "--weight",
        default="bytes_per_s",
        choices=["bytes_per_s", "messages_per_s", "lag", "bytes", "messages"],
        help="what a partition's weight is (default bytes_per_s)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_PROFILE_DIR,
        help=f"output directory (default {DEFAULT_PROFILE_DIR})",
    )
    p.add_argument(
        "--publish",
        metavar="TOPIC",
        help="also publish the profile to this compacted topic "
        "(one message per partition, key topic:partition)",
    )
    p.add_argument(
        "--kafka-package",
        metavar="COORDS",
        help="Maven coordinates of Spark's Kafka source (default: the one matching "
        "the installed Spark)",
    )
    p.add_argument(
        "--kafka-option",
        action="append",
        default=[],
        type=key_value,
        metavar="KEY=VALUE",
        help="extra Kafka source option, overriding the security options for Spark, "
        "e.g. kafka.ssl.truststore.type=JKS",
    )
    spark_options(p)
    p.set_defaults(func=run_profile_command)


def run_profile_command(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from .kafka_io import publish
    from .profile import Window, parse_time, run_profile, write_profile

    topics = [t.strip() for arg in args.topic for t in arg.split(",") if t.strip()]
    kwargs = security(args)
    now = int(datetime.now(UTC).timestamp() * 1000)
    if args.until and not args.since:
        print("kafka-assignors profile: error: argument --until: needs --since (the window's "
              "start)", file=sys.stderr)
        return 2
    window = Window(
        starting_offsets=args.from_offsets,
        ending_offsets=args.to_offsets,
        start_ms=parse_time(args.since, now) if args.since else None,
        end_ms=parse_time(args.until, now) if args.until else (now if args.since else None),
    )
    start, end = window.start_ms, window.end_ms
    if start is not None and end is not None and start >= end:
        print(f"kafka-assignors profile: error: --since {args.since} is not before "
              f"--until {args.until or 'now'}: expected a window that starts before it ends",
              file=sys.stderr)
        return 2
    session = session_from_args(args, kafka=True, kafka_package=args.kafka_package)
    try:
        with session.progress("profile"):
            profile = run_profile(
                session,
                args.bootstrap,
                topics,
                window,
                group=args.group,
                weight_metric=args.weight,
                kafka_options=conf_pairs(args.kafka_option),
                security=kwargs,
            )
    except Exception as exc:
        if missing_kafka_source(args.command, session, exc):
            return 1
        raise
    json_path, parquet_path = write_profile(profile, args.out)
    total = sum(int(p.measured.get("messages", 0)) for p in profile.partitions)
    say(
        f"profiled {len(profile.partitions)} partitions ({total:,} messages) of {', '.join(topics)}"
    )
    say(f"load profile: {json_path}\nparquet:      {parquet_path}")
    if args.publish:
        sent = publish(profile, args.bootstrap, args.publish, kwargs)
        say(f"published {sent} entries to compacted topic {args.publish}")
    return 0


# --- evaluate ----------------------------------------------------------------------------


def _evaluate(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="simulate assignors over a scenario grid on Spark",
        description="Cross a scenario grid (YAML) with a list of assignors and run the real "
        "assignor code for every rebalance, in parallel on Spark. Writes one row "
        "per rebalance step as Parquet.",
    )
    p.add_argument(
        "--scenarios",
        type=existing_file,
        default=DEFAULT_GRID,
        help="scenario grid YAML (default: the built-in grid)",
    )
    p.add_argument(
        "--assignors",
        help="comma-separated wire names or module:Class paths (default: the "
        "grid's 'assignors', else all known)",
    )
    p.add_argument(
        "--profile",
        type=existing_file,
        help="a load profile: adds a 'measured' cluster with its counts and weights",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_EVALUATE,
        help=f"output Parquet directory (default {DEFAULT_EVALUATE})",
    )
    spark_options(p)
    p.set_defaults(func=run_evaluate_command)


def run_evaluate_command(args: argparse.Namespace) -> int:
    from ..simulator import assignor_names, expand_grid, load_grid
    from .evaluate import evaluate

    grid = load_grid(args.scenarios)
    if args.profile:
        grid.setdefault("clusters", []).append(
            {"name": "measured", "profile": str(args.profile.resolve())}
        )
    names = (
        args.assignors.split(",") if args.assignors else grid.get("assignors") or assignor_names()
    )
    names = [str(n).strip() for n in names if str(n).strip()]
    grid.pop("assignors", None)
    scenarios = expand_grid(grid)
    steps = sum(s.steps for s in scenarios)
    say(
        f"evaluating {len(scenarios)} scenarios ({steps:,} rebalances) under each of "
        f"{len(names)} assignors: {', '.join(names)}"
    )
    session = session_from_args(args)
    summary = evaluate(session, scenarios, names, args.out)
    say(
        f"{summary.steps:,} simulated rebalances in {summary.seconds:.1f} s "
        f"({summary.steps_per_second:,.0f}/s; {summary.cpu_seconds:,.1f} CPU s in the "
        f"workers); {summary.errors} failed"
    )
    say(f"results: {summary.output}")
    return 0


# --- sizing ------------------------------------------------------------------------------


def _sizing(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sizing",
        help="partitions needed and consumers worth running",
        description="Partitions needed = max(target/producer rate, target/consumer rate), "
        "both per partition; consumers beyond the partition count sit idle. "
        "With --profile the target is the measured total times --growth, and "
        "keys hotter than one consumer can take are flagged. With --measure the "
        "per-partition rates are measured on the cluster (a temporary 1-partition topic).",
    )
    p.add_argument(
        "--producer-rate",
        type=rate,
        metavar="TP",
        help="throughput one partition takes from producers (k/M/G suffixes); "
        "required unless --measure",
    )
    p.add_argument(
        "--consumer-rate",
        type=rate,
        metavar="TC",
        help="throughput one consumer gets from one partition; required unless --measure",
    )
    from .measure import measure_options

    measure_options(p, record_size_default="1000")
    kafka_options(p, required=False)
    p.add_argument("--target", type=rate, metavar="TT", help="target throughput")
    p.add_argument(
        "--profile", type=existing_file, help="measured load profile (target and hot keys)"
    )
    p.add_argument(
        "--metric",
        default="bytes_per_s",
        choices=["bytes_per_s", "messages_per_s"],
        help="unit of the rates when a profile is used (default bytes_per_s)",
    )
    p.add_argument(
        "--growth",
        type=factor,
        help="expected growth factor on the measured load, above 0 (assumed 1: no growth)",
    )
    p.add_argument(
        "--headroom",
        type=headroom,
        help="partition headroom factor, at least 1 (assumed 1.5)",
    )
    p.add_argument("--unit", default="bytes/s", help="unit label for given rates")
    p.add_argument(
        "--out", type=Path, default=DEFAULT_SIZING, help=f"JSON output (default {DEFAULT_SIZING})"
    )
    p.set_defaults(func=run_sizing_command)


def run_sizing_command(args: argparse.Namespace) -> int:
    from ..load.profile import read_profile
    from .sizing import ASSUMED, GIVEN, Origin, describe, size, size_from_profile

    if args.profile is None and args.target is None:
        print("kafka-assignors sizing: error: needs --target or --profile", file=sys.stderr)
        return 2
    producer_rate, consumer_rate = args.producer_rate, args.consumer_rate
    growth = args.growth if args.growth is not None else 1.0
    room = args.headroom if args.headroom is not None else 1.5
    origins = {
        "producer": Origin(GIVEN, "--producer-rate"),
        "consumer": Origin(GIVEN, "--consumer-rate"),
        "headroom": Origin(GIVEN, "--headroom")
        if args.headroom is not None
        else Origin(ASSUMED, "the default, 1.5x; --headroom sets it"),
        "growth": Origin(GIVEN, "--growth")
        if args.growth is not None
        else Origin(ASSUMED, "the default, 1x (no growth); --growth sets it"),
        "target": Origin(GIVEN, "--target"),
    }
    extra: list[Any] = []
    if args.measure and (producer_rate is None or consumer_rate is None):
        if not args.bootstrap:
            print("kafka-assignors sizing: error: --measure needs --bootstrap", file=sys.stderr)
            return 2
        metric = args.metric if args.profile else (
            "messages_per_s" if args.unit.startswith("messages") else "bytes_per_s"
        )
        from .measure import measure_and_say

        measured = measure_and_say(args, args.record_size or 1_000, "sizing")
        if measured is None:
            return 1
        tp, tc = measured.rates(metric)
        found = measured.origins(args.bootstrap)
        if producer_rate is None:
            producer_rate, origins["producer"] = tp, found["producer"]
        if consumer_rate is None:
            consumer_rate, origins["consumer"] = tc, found["consumer"]
            extra = measured.unpaced_input(metric)
    if producer_rate is None or consumer_rate is None:
        print("kafka-assignors sizing: error: needs --producer-rate and --consumer-rate "
              "(or --measure)", file=sys.stderr)
        return 2
    if args.profile:
        if args.target is None:
            del origins["target"]
        result = size_from_profile(
            read_profile(args.profile),
            producer_rate,
            consumer_rate,
            metric=args.metric,
            growth=growth,
            headroom=room,
            target=args.target,
            origins=origins,
            extra_inputs=extra,
        )
    else:
        result = size(
            args.target,
            producer_rate,
            consumer_rate,
            unit=args.unit,
            headroom=room,
            origins=origins,
            extra_inputs=extra,
        )
    say(describe(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result.to_json(), indent=1, default=str) + "\n")
    say(f"sizing: {args.out}")
    return 0


# --- report ------------------------------------------------------------------------------


def _report(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report",
        help="one HTML page with plots and a recommendation",
        description="Build report.html with PNG plots from evaluate's results, a measured "
        "profile and a sizing result (each optional; defaults are the files the "
        "other commands write under reports/).",
    )
    p.add_argument(
        "--evaluate", type=existing_path, help=f"evaluate output (default {DEFAULT_EVALUATE})"
    )
    p.add_argument(
        "--profile",
        type=existing_file,
        help=f"load profile JSON (default {DEFAULT_PROFILE_DIR / 'profile.json'})",
    )
    p.add_argument(
        "--sizing", type=existing_file, help=f"sizing JSON (default {DEFAULT_SIZING})"
    )
    p.add_argument(
        "--consumers",
        type=count,
        help="consumers for the measured-load plot (default: sizing's answer)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_REPORT_DIR,
        help=f"output directory (default {DEFAULT_REPORT_DIR})",
    )
    p.add_argument("--live-metrics", type=existing_file, metavar="FILE",
                   help="live groups' rebalance metrics (live_metrics.json, the demo writes it)")
    p.set_defaults(func=run_report_command)


def _given_or_default(value: Path | None, default: Path) -> Path | None:
    if value is not None:
        if not value.exists():
            raise SystemExit(f"no such file: {value}")
        return value
    return default if default.exists() else None


def run_report_command(args: argparse.Namespace) -> int:
    from .report import build_report
    from .sizing import Sizing

    steps = _given_or_default(args.evaluate, DEFAULT_EVALUATE)
    profile = _given_or_default(args.profile, DEFAULT_PROFILE_DIR / "profile.json")
    sizing_path = _given_or_default(args.sizing, DEFAULT_SIZING)
    live = getattr(args, "live_metrics", None)
    if live is not None and not live.exists():
        raise SystemExit(f"no such file: {live}")
    if steps is None and profile is None and sizing_path is None and live is None:
        print(
            "kafka-assignors report: error: nothing to report: run evaluate, profile or sizing "
            "first (or pass paths)",
            file=sys.stderr,
        )
        return 2
    sizing = None
    if sizing_path is not None:
        sizing = Sizing.from_json(json.loads(sizing_path.read_text()))
    report = build_report(
        args.out, steps_path=steps, profile_path=profile, sizing=sizing, consumers=args.consumers,
        live_path=live,
    )
    if report.recommendation:
        say(f"recommendation: {report.recommendation}")
    say(f"report: {report.html.resolve()}")
    return 0
