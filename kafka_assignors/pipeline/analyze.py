"""``kafka-assignors analyze``: profile, evaluate on the measured load, report - one command.

What the README's main command runs on the demo's topics: one Spark session
for profile and evaluate, a small grid built around the measured profile
(group sizes up to the partition count, the built-in churn sequences), sizing
from the measured rates, then the report, whose path it prints.

Sizing needs what one partition takes from producers and gives to one consumer,
which a profile does not measure.  ``--measure`` measures both on the cluster
(records of the profile's mean size through a temporary 1-partition topic; with
``--processing-ms``, the consumer at your consumers' pace: what the demo does).
Otherwise, unless given (``--producer-rate``, ``--consumer-rate``), the assumptions
are 10 MB/s and 2 MB/s per partition (``bytes_per_s``; with ``--metric
messages_per_s``, 10,000 and 2,000 messages/s), growth 1x and headroom 1.5x.  The
report states each input and where it came from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._cli_args import count_list, existing_file, factor, headroom
from ..simulator.grid import SUBSCRIPTIONS as GRID_SUBSCRIPTIONS
from .measure import measure_options
from .options import (
    REPORTS,
    kafka_options,
    missing_kafka_source,
    rate,
    say,
    security,
    session_from_args,
    spark_options,
)

ASSIGNORS = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "balanced-sticky",
    "cooperative-balanced-sticky",
    "load-aware",
    "cooperative-load-aware",
)
#: Subscription patterns tried when there are several topics (grid.SUBSCRIPTIONS).
SUBSCRIPTIONS = ("all", "unequal")
CHURN = {
    "rolling-restart": ["leave", "join", "leave", "join"],
    "failures": ["crash", "join"],
    "growth": ["scale-out 2", "add-partitions +2", "scale-in 1"],
}
#: Per-partition throughputs assumed for sizing when not given, by metric.
ASSUMED_RATES = {"bytes_per_s": (10e6, 2e6), "messages_per_s": (10_000.0, 2_000.0)}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "analyze",
        help="profile + evaluate + sizing + report in one go (Spark)",
        description="Profile the topics with Spark's Kafka source, evaluate the assignors on "
        "the measured load for a few group sizes and churn sequences, size the topics "
        "from the measured rates, and write the report. Prints where the report is.",
    )
    kafka_options(p)
    p.add_argument(
        "--topic",
        action="append",
        required=True,
        metavar="TOPIC",
        help="topic to analyze (repeatable, or comma-separated)",
    )
    p.add_argument("--group", help="consumer group: its lag is profiled too")
    p.add_argument(
        "--consumers",
        type=count_list,
        default=[2, 3, 6],
        help="group sizes to try, comma-separated (default 2,3,6)",
    )
    p.add_argument("--assignors", default=",".join(ASSIGNORS), help="comma-separated")
    p.add_argument(
        "--subscriptions",
        default=",".join(SUBSCRIPTIONS),
        help="subscription patterns to try with several topics: all (every consumer on every "
        "topic), unequal (consumer i on the first i mod T + 1 topics), halves "
        f"(default {','.join(SUBSCRIPTIONS)})",
    )
    p.add_argument("--out", type=Path, default=REPORTS, help=f"output root (default {REPORTS})")
    p.add_argument("--live-metrics", type=existing_file, metavar="FILE",
                   help="live groups' rebalance metrics for the report (the demo writes it)")
    p.add_argument("--kafka-package", metavar="COORDS", help="see `profile --help`")
    g = p.add_argument_group("sizing (from the measured rates)")
    g.add_argument(
        "--metric",
        default="bytes_per_s",
        choices=list(ASSUMED_RATES),
        help="unit of the rates (default bytes_per_s)",
    )
    g.add_argument(
        "--producer-rate",
        type=rate,
        metavar="TP",
        help="throughput one partition takes from producers (assumed: 10M bytes/s or "
        "10k messages/s)",
    )
    g.add_argument(
        "--consumer-rate",
        type=rate,
        metavar="TC",
        help="throughput one consumer gets from one partition (assumed: 2M bytes/s or "
        "2k messages/s)",
    )
    g.add_argument(
        "--growth", type=factor, help="growth factor, above 0 (assumed 1: no growth)"
    )
    g.add_argument(
        "--headroom", type=headroom, help="partition headroom, at least 1 (assumed 1.5)"
    )
    measure_options(p, record_size_default="the profile's mean record size")
    spark_options(p)
    p.set_defaults(func=run_analyze_command)


def run_analyze_command(args: argparse.Namespace) -> int:
    from ..simulator import expand_grid
    from .evaluate import evaluate
    from .profile import Window, run_profile, write_profile
    from .report import build_report
    from .sizing import describe, size_from_profile

    topics = [t.strip() for arg in args.topic for t in arg.split(",") if t.strip()]
    patterns = [s.strip() for s in args.subscriptions.split(",") if s.strip()]
    if not patterns or not set(patterns) <= set(GRID_SUBSCRIPTIONS):
        print(f"kafka-assignors analyze: error: --subscriptions {args.subscriptions!r}: use "
              f"one or more of {', '.join(GRID_SUBSCRIPTIONS)}", file=sys.stderr)
        return 2
    kwargs = security(args)
    session = session_from_args(args, kafka=True, kafka_package=args.kafka_package)
    try:
        with session.progress("profile"):
            profile = run_profile(
                session, args.bootstrap, topics, Window(), group=args.group, security=kwargs
            )
    except Exception as exc:
        if missing_kafka_source(args.command, session, exc):
            return 1
        raise
    json_path, _ = write_profile(profile, args.out / "profile")
    say(f"load profile: {json_path}")
    n_partitions = len(profile.partitions)
    sizes = sorted({min(int(n), n_partitions) for n in args.consumers})
    grid = {
        "clusters": [{"name": "measured", "profile": str(json_path.resolve())}],
        "consumers": sizes,
        # with one topic every pattern is "all": do not simulate it twice
        "subscriptions": patterns if len(topics) > 1 else ["all"],
        "churn": CHURN,
    }
    scenarios = expand_grid(grid)
    names = [a.strip() for a in args.assignors.split(",") if a.strip()]
    steps_path = args.out / "evaluate" / "steps.parquet"
    summary = evaluate(session, scenarios, names, steps_path)
    if not steps_path.exists():  # written on a remote file system: the report reads it here
        steps_path.parent.mkdir(parents=True, exist_ok=True)
        remote = session.spark.read.parquet(session.output_path(steps_path))
        remote.toPandas().to_parquet(steps_path)
    say(f"{summary.steps:,} simulated rebalances in {summary.seconds:.1f} s: {steps_path}")
    origins = {
        "producer": _rate_origin(args.producer_rate, "--producer-rate"),
        "consumer": _rate_origin(args.consumer_rate, "--consumer-rate"),
        "growth": _factor_origin(args.growth, "--growth", "1x (no growth)"),
        "headroom": _factor_origin(args.headroom, "--headroom", "1.5x"),
    }
    growth = args.growth if args.growth is not None else 1.0
    room = args.headroom if args.headroom is not None else 1.5
    tp = args.producer_rate or ASSUMED_RATES[args.metric][0]
    tc = args.consumer_rate or ASSUMED_RATES[args.metric][1]
    extra: list[Any] = []
    if args.measure and not (args.producer_rate and args.consumer_rate):
        from .measure import measure_and_say

        measured = measure_and_say(args, args.record_size or _mean_record_size(profile),
                                   "analyze")
        if measured is None:
            return 1
        rates, found = measured.rates(args.metric), measured.origins(_where(args.bootstrap))
        if not args.producer_rate:
            tp, origins["producer"] = rates[0], found["producer"]
        if not args.consumer_rate:
            tc, origins["consumer"] = rates[1], found["consumer"]
            extra = measured.unpaced_input(args.metric)
    sizing = size_from_profile(
        profile,
        tp,
        tc,
        metric=args.metric,
        growth=growth,
        headroom=room,
        origins=origins,
        extra_inputs=extra,
    )
    sizing_path = args.out / "sizing.json"
    sizing_path.parent.mkdir(parents=True, exist_ok=True)
    sizing_path.write_text(json.dumps(sizing.to_json(), indent=1, default=str) + "\n")
    say(describe(sizing))
    say(f"sizing: {sizing_path}")
    report = build_report(
        args.out / "report",
        steps_path=steps_path,
        profile_path=json_path,
        sizing=sizing,
        consumers=sizes[-1],
        live_path=args.live_metrics,
    )
    if report.recommendation:
        say(f"recommendation: {report.recommendation}")
    say(f"report: {report.html.resolve()}")
    return 0


def _factor_origin(given: float | None, flag: str, default: str) -> Any:
    """``given: --growth`` when it was given, else ``assumed`` with the value assumed."""
    from .sizing import ASSUMED, GIVEN, Origin

    if given is not None:
        return Origin(GIVEN, flag)
    return Origin(ASSUMED, f"the default, {default}; {flag} sets it")


def _rate_origin(given: float | None, flag: str) -> Any:
    from .sizing import ASSUMED, GIVEN, Origin

    if given:
        return Origin(GIVEN, flag)
    return Origin(
        ASSUMED,
        "a typical figure, not this cluster's: measure it with `kafka-assignors analyze "
        f"--measure` (or `sizing --measure`), or give {flag}",
    )


def _mean_record_size(profile: Any) -> int:
    """Bytes (key + value) per message over the profile; 1,000 when it counted none."""
    parts = profile.partitions
    messages = sum(float(p.measured.get("messages", 0) or 0) for p in parts)
    size = sum(float(p.measured.get("bytes", 0) or 0) for p in parts)
    return max(1, round(size / messages)) if messages and size else 1_000


def _where(bootstrap: str) -> str:
    first = bootstrap.split(",")[0].strip()
    return f"the profiled cluster ({first})"
