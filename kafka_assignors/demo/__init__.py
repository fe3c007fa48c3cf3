"""``kafka-assignors demo``: why the assignor matters, on a real broker, in a few minutes.

1. starts the embedded broker (Docker; the image is built on first use), or uses
   ``--bootstrap HOST:PORT`` for an existing cluster;
2. creates two topics with skewed keyed traffic (a few hot partitions) and keeps a
   producer writing at a bounded rate;
3. runs a consumer group with unequal subscriptions under kafka-python's ``range``,
   then under our assignors; each phase scales the group up and down and kills one
   member, with a live view (per member: partitions, messages/s, lag; per group:
   strategy, generation, imbalance);
4. prints a side-by-side summary (imbalance, partitions moved, peak lag);
5. runs the pipeline (profile, evaluate, report) on the demo's topics and prints
   where the HTML report is (``--no-report`` skips it);
6. cleans up: producer, groups, topics and broker (``--keep`` leaves topics and broker).
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .phases import STRATEGIES

log = logging.getLogger(__name__)

# cooperative-load-aware (weights = the live lag) is offered with --strategy: with live lag
# as weights its assignment follows the lag, so the group rebalances more than once and the
# phase can take minutes on a loaded machine.
DEFAULT_PHASES = ("range", "cooperative-balanced-sticky")
SHORT_PHASES = DEFAULT_PHASES


def add_parser(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="range vs our assignors on a real broker: live view, summary, report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bootstrap", metavar="HOST:PORT[,...]", help="use this existing cluster (no Docker)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave the topics and the broker container running"
    )
    parser.add_argument(
        "--short", action="store_true", help="2 s pauses after each rebalance"
    )
    parser.add_argument(
        "--no-report", action="store_true", help="skip the pipeline (profile/evaluate/report)"
    )
    parser.add_argument(
        "--strategy",
        action="append",
        dest="strategies",
        metavar="NAME",
        help=f"phases to run, in order; repeatable. Known: {', '.join(STRATEGIES)}, "
        "or any kafka-python name / module:Attr (default: the first two)",
    )
    parser.add_argument("--rate", type=float, default=120.0, help="records/s produced (120)")
    parser.add_argument(
        "--dwell", type=float, help="seconds to watch after each rebalance (4; --short 2)"
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for each rebalance (60)"
    )
    parser.add_argument(
        "--report-dir", type=Path, default=Path("reports/demo"), help="pipeline output directory"
    )
    parser.add_argument(
        "--report-timeout", type=float, default=600.0, help="seconds allowed for the pipeline"
    )
    parser.set_defaults(func=run)


def _start_broker(keep: bool) -> Any:
    from ..embedded import start_single_broker

    log.info("starting the embedded Kafka broker (builds the image on first use) ...")
    return start_single_broker(keep=keep)


def _quiet() -> None:
    """The live view is the output: member starts and client warnings only at DEBUG."""
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("kafka").setLevel(logging.ERROR)
        logging.getLogger("kafka_assignors.embedded").setLevel(logging.WARNING)


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    _quiet()
    cluster = None
    if args.bootstrap:
        bootstrap = str(args.bootstrap)
    else:
        try:
            cluster = _start_broker(bool(args.keep))
        except Exception as exc:
            print(f"kafka-assignors demo: error: cannot start the broker: {exc}", file=sys.stderr)
            return 1
        bootstrap = cluster.bootstrap
    print(f"broker: {bootstrap} (ready after {time.monotonic() - started:.0f} s)", flush=True)
    try:
        code = _run_demo(args, bootstrap)
    finally:
        if cluster is not None:
            if args.keep:
                ids = cluster.detach()
                print(f"--keep: broker left running at {bootstrap}; remove it with: "
                      f"docker rm -f {' '.join(i[:12] for i in ids)}")
            else:
                cluster.close()
                log.info("broker container removed")
    print(f"demo finished in {time.monotonic() - started:.0f} s", flush=True)
    return code


def _run_demo(args: argparse.Namespace, bootstrap: str) -> int:
    from .phases import PhaseResult, run_phase, summary_lines
    from .traffic import Producer, create_demo_topics, delete_demo_topics
    from .watch import EndOffsets, LiveView, Stats

    phases = args.strategies or (SHORT_PHASES if args.short else DEFAULT_PHASES)
    dwell = args.dwell if args.dwell is not None else (2.0 if args.short else 4.0)
    try:
        topics = create_demo_topics(bootstrap)
    except Exception as exc:
        print(f"kafka-assignors demo: error: cannot create topics on {bootstrap}: {exc}",
              file=sys.stderr)
        return 1
    print(f"topics: {topics.orders} (8 partitions), {topics.payments} (4 partitions); "
          f"keyed traffic, {args.rate:g} records/s, a few hot keys", flush=True)
    producer = Producer(bootstrap, topics, args.rate)
    ends = EndOffsets(bootstrap, topics.counts)
    view = LiveView(sys.stdout, Stats(), ends, tty=sys.stdout.isatty())
    results: list[PhaseResult] = []
    code = 0
    try:
        producer.start()
        view.start()
        for label in phases:
            baseline = ends.read()
            results.append(
                run_phase(label, bootstrap, topics, view, baseline, dwell=dwell,
                          stable_timeout=args.timeout, out=sys.stdout)
            )
        view.stop()
        producer.stop()
        print("\n".join(summary_lines(results, view)), flush=True)
        print(f"records produced: {producer.sent}", flush=True)
        if not args.no_report:
            code = _pipeline(args, bootstrap, topics.names)
        return code
    except Exception as exc:
        log.debug("demo failed", exc_info=True)
        print(f"kafka-assignors demo: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        view.stop()
        producer.stop()
        ends.close()
        if not args.keep:
            delete_demo_topics(bootstrap, topics)


def _pipeline(args: argparse.Namespace, bootstrap: str, topics: list[str]) -> int:
    """profile -> evaluate -> report through ``kafka-assignors analyze`` (bounded subprocess)."""
    out = Path(args.report_dir)
    cmd = [sys.executable, "-m", "kafka_assignors.cli", "--log-level", "WARNING", "analyze",
           "--bootstrap", bootstrap, "--consumers", "2,3,4", "--master", "local[2]",
           "--out", str(out)]
    for t in topics:
        cmd += ["--topic", t]
    print("\npipeline: profile -> evaluate -> report (Spark; about a minute) ...", flush=True)
    try:
        proc = subprocess.run(cmd, timeout=args.report_timeout, check=False)
    except subprocess.TimeoutExpired:
        print(f"kafka-assignors demo: error: the pipeline took over {args.report_timeout:.0f} s",
              file=sys.stderr)
        return 1
    report = (out / "report" / "report.html").resolve()
    if proc.returncode != 0 or not report.exists():
        print(f"kafka-assignors demo: error: the pipeline failed (exit {proc.returncode})",
              file=sys.stderr)
        return 1
    print(f"HTML report: {report}", flush=True)
    return 0
