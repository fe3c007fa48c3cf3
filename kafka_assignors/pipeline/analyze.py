"""``kafka-assignors analyze``: profile, evaluate on the measured load, report - one command.

What the README's main command runs on the demo's topics: one Spark session
for profile and evaluate, a small grid built around the measured profile
(group sizes up to the partition count, the built-in churn sequences), then
the report, whose path it prints.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .cli import REPORTS, _conf, _say, _spark_options

ASSIGNORS = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "balanced-sticky",
    "cooperative-balanced-sticky",
)
CHURN = {
    "rolling-restart": ["leave", "join", "leave", "join"],
    "failures": ["crash", "join"],
    "growth": ["scale-out 2", "add-partitions +2", "scale-in 1"],
}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "analyze",
        help="profile + evaluate + report in one go (Spark)",
        description="Profile the topics with Spark's Kafka source, evaluate the assignors on "
        "the measured load for a few group sizes and churn sequences, and write "
        "the report. Prints where the report is.",
    )
    p.add_argument("--bootstrap", required=True, help="Kafka bootstrap servers")
    p.add_argument(
        "--topic",
        action="append",
        required=True,
        metavar="TOPIC",
        help="topic to analyze (repeatable, or comma-separated)",
    )
    p.add_argument("--group", help="consumer group: its lag is profiled too")
    p.add_argument("--consumers", default="2,3,6", help="group sizes to try (default 2,3,6)")
    p.add_argument("--assignors", default=",".join(ASSIGNORS), help="comma-separated")
    p.add_argument("--out", type=Path, default=REPORTS, help=f"output root (default {REPORTS})")
    p.add_argument("--kafka-package", metavar="COORDS", help="see `profile --help`")
    _spark_options(p)
    p.set_defaults(func=run_analyze_command)


def run_analyze_command(args: argparse.Namespace) -> int:
    from ..simulator import expand_grid
    from .evaluate import evaluate
    from .profile import Window, run_profile, write_profile
    from .report import build_report
    from .session import build_session, progress

    topics = [t.strip() for arg in args.topic for t in arg.split(",") if t.strip()]
    spark = build_session(
        args.master,
        "kafka-assignors analyze",
        kafka=True,
        kafka_package=args.kafka_package,
        conf=_conf(args.conf),
    )
    with progress(spark, "profile"):
        profile = run_profile(spark, args.bootstrap, topics, Window(), group=args.group)
    json_path, _ = write_profile(profile, args.out / "profile")
    _say(f"load profile: {json_path}")
    n_partitions = len(profile.partitions)
    sizes = sorted({min(int(n), n_partitions) for n in args.consumers.split(",") if n.strip()})
    grid = {
        "clusters": [{"name": "measured", "profile": str(json_path.resolve())}],
        "consumers": sizes,
        "churn": CHURN,
    }
    scenarios = expand_grid(grid)
    names = [a.strip() for a in args.assignors.split(",") if a.strip()]
    steps_path = args.out / "evaluate" / "steps.parquet"
    summary = evaluate(spark, scenarios, names, steps_path)
    _say(f"{summary.steps:,} simulated rebalances in {summary.seconds:.1f} s: {steps_path}")
    report = build_report(
        args.out / "report", steps_path=steps_path, profile_path=json_path, consumers=sizes[-1]
    )
    if report.recommendation:
        _say(f"recommendation: {report.recommendation}")
    _say(f"report: {report.html.resolve()}")
    return 0
