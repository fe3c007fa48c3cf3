"""``kafka-assignors demo``: why the assignor matters, on a real broker, in a few minutes.

1. starts the embedded broker (Docker; the image is built on first use), or uses
   ``--bootstrap HOST:PORT`` for an existing cluster;
2. creates two topics with skewed keyed traffic (a few hot partitions) and keeps a
   producer writing at a bounded rate;
3. runs a consumer group with unequal subscriptions under kafka-python's ``range``,
   then under our assignors; each phase scales the group up and down and kills one
   member, with a live view (per member: partitions, messages/s, lag; per group:
   strategy, generation, imbalance, and the members' own rebalance metrics:
   rebalances, latency, partitions moved, spread, kept-partition pause);
4. prints a side-by-side summary (imbalance, partitions moved, peak lag) and the
   rebalance metrics per assignor (written to ``live_metrics.json`` for the report);
5. runs the pipeline (profile, evaluate, sizing, report: ``kafka-assignors analyze``) on
   the demo's topics, with producer and consumer throughput per partition measured on
   the demo's broker (the consumer at the members' pace), with a section on the live
   groups' rebalance metrics, and prints where the HTML report is (``--no-report`` skips
   it);
6. cleans up: producer, member processes, the consumer groups, topics and broker
   (``--keep`` leaves groups, topics and broker).

The whole demo is bounded by ``--max-time`` (900 s by default, counted from the start,
broker start included): rebalance waits, the phases and the pipeline are cut short when
it comes; cleaning up afterwards takes at most about a minute more.  The exit status is
non-zero when a rebalance did not reach a stable group (within ``--timeout``), when the
deadline cut the demo short, or when the pipeline failed.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from .._cli_args import bootstrap_servers, non_negative, positive
from .phases import STRATEGIES

log = logging.getLogger(__name__)

# cooperative-load-aware (weights = the live lag) is offered with --strategy: with live lag
# as weights its assignment follows the lag, so the group rebalances more than once and the
# phase can take minutes on a loaded machine.
DEFAULT_PHASES = ("range", "cooperative-balanced-sticky")
SHORT_PHASES = DEFAULT_PHASES
#: Seconds the pipeline reads at the members' pace to measure Tc (records/s per consumer),
#: and records sent to measure Tp: together a few seconds on a loaded 2-core machine.
PACED_SECONDS = 3.0
MEASURE_RECORDS = 10_000


def add_parser(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="range vs our assignors on a real broker: live view, summary, report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bootstrap",
        type=bootstrap_servers,
        metavar="HOST:PORT[,...]",
        help="use this existing cluster (no Docker)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave the topics and the broker container running"
    )
    parser.add_argument(
        "--short",
        action="store_true",
        help="a shorter run (2 s of watching after each rebalance); still ends with the report",
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
    parser.add_argument(
        "--rate", type=positive, default=120.0, help="records/s produced, above 0 (120)"
    )
    parser.add_argument(
        "--dwell", type=non_negative, help="seconds to watch after each rebalance (4; --short 2)"
    )
    parser.add_argument(
        "--timeout",
        type=positive,
        default=60.0,
        help="seconds to wait for each rebalance, above 0 (60)",
    )
    parser.add_argument(
        "--report-dir", type=Path, default=Path("reports/demo"), help="pipeline output directory"
    )
    parser.add_argument(
        "--report-timeout",
        type=positive,
        default=600.0,
        help="seconds allowed for the pipeline, above 0 (600)",
    )
    parser.add_argument(
        "--max-time",
        type=positive,
        default=900.0,
        help="overall deadline in seconds, broker start included (900); cleanup comes after",
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
    deadline = started + float(args.max_time)
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
    closing: list[str] = []
    try:
        code = _run_demo(args, bootstrap, deadline, closing)
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
    # what the demo found comes last: the recommendation and where the report is
    for line in closing:
        print(line, flush=True)
    return code


def _run_demo(
    args: argparse.Namespace, bootstrap: str, deadline: float, closing: list[str] | None = None
) -> int:
    """The demo on ``bootstrap``; the lines to end the output with are added to ``closing``."""
    from .phases import PhaseResult, run_phase, summary_lines
    from .traffic import Producer, create_demo_topics, delete_demo_groups, delete_demo_topics
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
            if deadline - time.monotonic() < 1.0:
                skipped = PhaseResult(label)
                skipped.problems.append("not run: the demo's deadline (--max-time) came first")
                results.append(skipped)
                continue
            baseline = ends.read()
            results.append(
                run_phase(label, bootstrap, topics, view, baseline, dwell=dwell,
                          stable_timeout=args.timeout, out=sys.stdout, deadline=deadline)
            )
        view.stop()
        producer.stop()
        print("\n".join(summary_lines(results, view)), flush=True)
        print(f"records produced: {producer.sent}", flush=True)
        if not args.no_report:
            live = _write_live_metrics(Path(args.report_dir), results)
            code = _pipeline(args, bootstrap, topics.names, deadline, live, closing)
        problems = [f"[{r.label}] {p}" for r in results for p in r.problems]
        if problems:
            print(
                f"kafka-assignors demo: error: {len(problems)} rebalance(s) did not reach a "
                f"stable group: {'; '.join(problems)}",
                file=sys.stderr,
            )
            code = code or 1
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
            groups = [r.group_id for r in results if r.group_id]
            for failure in delete_demo_groups(bootstrap, groups):
                print(f"kafka-assignors demo: warning: group not deleted: {failure}",
                      file=sys.stderr)
            delete_demo_topics(bootstrap, topics)
            if groups:
                print(f"removed consumer groups {', '.join(groups)} and topics "
                      f"{', '.join(topics.names)}", flush=True)


def _write_live_metrics(out: Path, results: list[Any]) -> Path:
    """The phases' rebalance metrics for the report (``pipeline.report_live``)."""
    import json

    from ..pipeline.report_live import LIVE_JSON

    out.mkdir(parents=True, exist_ok=True)
    path = out / LIVE_JSON
    groups = [{"label": r.label, "strategy": r.strategy, "group_id": r.group_id,
               "metrics": r.metrics.to_json() if r.metrics else None} for r in results]
    path.write_text(json.dumps({"source": "kafka-assignors demo", "groups": groups},
                               indent=1) + "\n")
    return path


def _pipeline(
    args: argparse.Namespace, bootstrap: str, topics: list[str], deadline: float,
    live: Path | None = None,
    closing: list[str] | None = None,
) -> int:
    """profile -> evaluate -> sizing -> report through ``kafka-assignors analyze`` (a bounded
    subprocess).  Sizing counts messages/s; Tp and Tc are measured on the demo's broker
    (``analyze --measure``), Tc at the members' own pace (records per poll and processing
    time after each poll, from :data:`MEMBER_OPTIONS`)."""
    from .phases import MEMBER_OPTIONS

    out = Path(args.report_dir)
    per_poll = MEMBER_OPTIONS["consumer_config"]["max_poll_records"]
    cmd = [sys.executable, "-m", "kafka_assignors.cli", "--log-level", "WARNING", "analyze",
           "--bootstrap", bootstrap, "--consumers", "2,3,4", "--master", "local[2]",
           "--metric", "messages_per_s", "--measure", "--measure-records", str(MEASURE_RECORDS),
           "--max-poll-records", str(per_poll),
           "--processing-ms", str(MEMBER_OPTIONS["processing_delay_ms"]),
           "--paced-seconds", str(PACED_SECONDS), "--paced-like", "the demo's members",
           "--out", str(out)]
    for t in topics:
        cmd += ["--topic", t]
    if live is not None:
        cmd += ["--live-metrics", str(live)]
    timeout = min(float(args.report_timeout), deadline - time.monotonic())
    if timeout < 5:
        print("kafka-assignors demo: error: no time left for the pipeline (--max-time)",
              file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    log_path = (out / "pipeline.log").resolve()
    print("\npipeline: profile -> evaluate -> sizing -> report (Spark; about a minute; "
          f"Spark's own output goes to {log_path}) ...", flush=True)
    held: list[str] = []
    code = _run_filtered(cmd, timeout, log_path, held)
    report = (out / "report" / "report.html").resolve()
    if code is None:
        print(f"kafka-assignors demo: error: the pipeline took over {timeout:.0f} s "
              f"(log: {log_path})", file=sys.stderr)
        return 1
    if code != 0 or not report.exists():
        print(f"kafka-assignors demo: error: the pipeline failed (exit {code}); the end of "
              f"{log_path}:\n{_tail(log_path, 40)}", file=sys.stderr)
        return 1
    if closing is not None:
        closing.extend([*held, f"HTML report: {report}"])
    else:
        print(*held, f"HTML report: {report}", sep="\n", flush=True)
    return 0


#: A Spark progress line of the pipeline (``pipeline.session``'s ``_ProgressLine``).
_PROGRESS = re.compile(
    r"^\[kafka-assignors\] (?P<what>[\w -]+): (?P<done>\d+)/(?P<total>\d+) tasks done, "
    r"(?P<running>\d+) running \((?P<secs>\d+) s\)$"
)
BAR_WIDTH = 30
#: The pipeline command's own error lines (``kafka-assignors analyze: error: ...``); other
#: lines of Spark's workers (their logs included) stay in the log.
_COMMAND_ERROR = re.compile(r"^kafka-assignors [a-z-]+: (error|warning): ")


class _PipelineOutput:
    """The pipeline's output as the demo shows it: its own messages as lines; Spark's
    progress as one bar redrawn in place on a terminal (the lines as they come when piped);
    everything else only in the log."""

    #: The pipeline's closing lines, held back for the end of the demo's output.
    HELD = ("recommendation:", "report:")

    def __init__(
        self, out: TextIO, err: TextIO, log_file: TextIO, *, tty: bool, held: list[str]
    ) -> None:
        self.out, self.err, self.log_file, self.tty = out, err, log_file, tty
        self.held = held
        self.lock = threading.Lock()
        self.bar = False

    def _end_bar(self) -> None:
        if self.bar:
            self.err.write("\n")
            self.err.flush()
            self.bar = False

    def stdout_line(self, line: str) -> None:
        with self.lock:
            self.log_file.write(line)
            if line.startswith(self.HELD):
                if line.startswith(self.HELD[0]):
                    self.held.append(line.rstrip("\n"))
                return
            self._end_bar()
            self.out.write(line)
            self.out.flush()

    def stderr_line(self, line: str) -> None:
        with self.lock:
            self.log_file.write(line)
            found = _PROGRESS.match(line.rstrip("\n"))
            if found and self.tty:
                done, total = int(found["done"]), int(found["total"])
                filled = BAR_WIDTH * done // max(total, 1)
                self.err.write(
                    f"\r\x1b[K  {found['what']:<9} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
                    f"{done}/{total} tasks ({found['secs']} s)"
                )
                self.err.flush()
                self.bar = True
            elif found or line.startswith("[kafka-assignors]") or _COMMAND_ERROR.match(line):
                self._end_bar()
                self.err.write(line)
                self.err.flush()

    def close(self) -> None:
        with self.lock:
            self._end_bar()


def _run_filtered(
    cmd: list[str], timeout: float, log_path: Path, held: list[str]
) -> int | None:
    """Run ``cmd``: its stdout (our own messages) is shown; its stderr (the JVM's Ivy and
    Spark chatter, with our progress lines among it) goes to ``log_path``, and only our
    ``[kafka-assignors]`` lines are shown, Spark's progress as a bar on a terminal
    (:class:`_PipelineOutput`); its recommendation is added to ``held``, not shown.  Returns
    the exit code, None after ``timeout``."""
    with open(log_path, "w", encoding="utf-8", errors="replace") as log_file:
        shown = _PipelineOutput(sys.stdout, sys.stderr, log_file, tty=sys.stderr.isatty(),
                                held=held)
        # an unexpected error's traceback goes to the log (the demo shows its tail)
        env = {**os.environ, "KAFKA_ASSIGNORS_TRACEBACK": "1"}
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", env=env)
        assert proc.stdout is not None and proc.stderr is not None

        def copy(stream: Any, show: Any) -> None:
            for line in stream:
                show(line)

        readers = [
            threading.Thread(target=copy, args=(proc.stdout, shown.stdout_line), daemon=True),
            threading.Thread(target=copy, args=(proc.stderr, shown.stderr_line), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
        for reader in readers:
            reader.join(timeout=10)
        shown.close()
        return code


def _tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(cannot read it: {exc})"
