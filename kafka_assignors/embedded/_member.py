"""One consumer-group member, run as its own process by :class:`GroupRunner`.

    python -m kafka_assignors.embedded._member '<MemberConfig as JSON>'

Reports JSON lines (see :mod:`.events`) on the original stdout; anything else the
process prints goes to stderr (fd 1 is pointed at fd 2), which the parent keeps in a
log file. It stops cleanly (leaves the group, fires the revocation callback) on a
``stop`` line on stdin, on stdin EOF (the parent went away) or on SIGTERM/SIGINT.
"""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

from ..kafka_python.compat import KAFKA_PYTHON_2
from .events import MemberConfig

SUMMARY_CHARS = 100


class Emitter:
    """Writes one JSON object per line, from any thread."""

    def __init__(self, out: TextIO, name: str) -> None:
        self._out = out
        self._name = name
        self._lock = threading.Lock()

    def emit(self, event: str, **fields: Any) -> None:
        record = {
            "event": event,
            "member": self._name,
            "pid": os.getpid(),
            "mono": time.monotonic(),
            "wall": time.time(),
            **fields,
        }
        line = json.dumps(record, default=str)
        with self._lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # parent gone; we are about to stop anyway


def take_stdout() -> TextIO:
    """Keep the real stdout for events; send fd 1 (stray prints) to stderr."""
    events_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(events_fd, "w", buffering=1, encoding="utf-8")


def _summary(data: bytes | None) -> str | None:
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS] + "..."


def _partitions(tps: Any) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in tps)


def group_snapshot(consumer: Any) -> dict[str, Any]:
    """Generation, member id, state, chosen protocol and owned partitions, right now.

    kafka-python 3.0.12 has no public accessor for the chosen protocol: it lives in
    the coordinator's Generation (``generation_if_stable().protocol``), which is set
    once JoinGroup/SyncGroup complete.  kafka-python 2.x has no ``group_metadata()``:
    its coordinator's ``_generation`` and ``state`` say the same.
    """
    coordinator: Any = getattr(consumer, "_coordinator", None)
    if hasattr(consumer, "group_metadata"):
        md = consumer.group_metadata()
        generation_id, member_id, raw_state = md.generation_id, md.member_id, md.state
    else:
        current = coordinator._generation
        generation_id, member_id = current.generation_id, current.member_id
        raw_state = coordinator.state
    protocol = None
    if coordinator is not None:
        # (kafka-python 2.0 names it generation(); 2.1 renamed it)
        if_stable = getattr(coordinator, "generation_if_stable", None) or coordinator.generation
        generation = if_stable()
        protocol = getattr(generation, "protocol", None) if generation is not None else None
    # MemberState values are strings like '<stable>'; report STABLE/REBALANCING/UNJOINED.
    state = str(raw_state or "").strip("<>").upper() or "UNKNOWN"
    # a STABLE member can already know it will join again (kafka-python requests the rejoin
    # when a cooperative assignment revoked partitions, or the subscription changed): until
    # it has, the picture it reports is not the group's settled one
    need_rejoin = getattr(coordinator, "need_rejoin", None)
    rejoin_pending = bool(state == "STABLE" and need_rejoin is not None and need_rejoin())
    return {
        "generation": int(generation_id),
        "member_id": str(member_id),
        "state": state,
        "rejoin_pending": rejoin_pending,
        "protocol": protocol,
        "assignment": _partitions(consumer.assignment()),
    }


class _Listener:
    """Reports kafka-python's rebalance callbacks (they run on its IO thread)."""

    def __init__(self, emitter: Emitter, revoke_delay_ms: int = 0) -> None:
        self.emitter = emitter
        self.consumer: Any = None
        self.revoke_delay_ms = revoke_delay_ms

    def _emit(self, event: str, tps: Any, *, mid_rebalance: bool = False) -> None:
        fields: dict[str, Any] = {"partitions": _partitions(tps)}
        if self.consumer is not None:
            try:
                fields.update(group_snapshot(self.consumer))
            except Exception as exc:  # never break the consumer from a report
                fields["snapshot_error"] = repr(exc)
            if mid_rebalance and fields.get("state") == "STABLE":
                # kafka-python sets STABLE and the new generation before it applies the
                # assignment: a revocation reported now shows the old partitions on the new
                # generation, and the rejoin that follows it is not requested yet
                fields["rejoin_pending"] = True
        self.emitter.emit(event, **fields)

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._emit("revoked", revoked, mid_rebalance=bool(revoked))
        if self.revoke_delay_ms and revoked:
            # stands for the work an application does before letting go (commit, flush):
            # the partitions are still this member's until the callback returns
            time.sleep(self.revoke_delay_ms / 1000)
            self.emitter.emit("released", partitions=_partitions(revoked))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._emit("assigned", assigned)

    def on_partitions_lost(self, lost: Any) -> None:
        self._emit("lost", lost)


def _make_listener(emitter: Emitter, revoke_delay_ms: int = 0) -> Any:
    from kafka import ConsumerRebalanceListener

    class Listener(_Listener, ConsumerRebalanceListener):  # type: ignore[misc]
        pass

    return Listener(emitter, revoke_delay_ms)


def _watch_stdin(
    on_stop: Callable[[], object], commands: queue.SimpleQueue[str] | None = None
) -> None:
    for line in sys.stdin:
        command = line.strip()
        if command == "stop":
            break
        if command and commands is not None:
            commands.put(command)
    on_stop()


def stop_on_stdin(on_stop: Callable[[], object]) -> None:
    """Call ``on_stop`` (from a daemon thread) on a ``stop`` line or stdin EOF: the parent
    asked, or went away."""
    threading.Thread(target=_watch_stdin, args=(on_stop,), daemon=True, name="stdin").start()


def script_main(run: Callable[[dict[str, Any], Emitter], int | None]) -> int:
    """``main()`` of a member script run as ``python SCRIPT '<config JSON>'``: events on the
    real stdout, the config's ``name`` on every event, an exception reported as an ``error``
    event (with its traceback) before the process exits 1."""
    cfg = json.loads(sys.argv[1])
    emitter = Emitter(take_stdout(), cfg["name"])
    logging.basicConfig(level=cfg.get("log_level", "WARNING"), stream=sys.stderr,
                        format=f"%(asctime)s {cfg['name']} %(name)s %(levelname)s %(message)s")
    try:
        return run(cfg, emitter) or 0
    except Exception as exc:
        emitter.emit(
            "error", message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()
        )
        traceback.print_exc()
        return 1


def _run_command(command: str, consumer: Any, listener: Any, stop: threading.Event,
                 emitter: Emitter) -> None:
    """``stall MS``: do not poll for MS ms (heartbeats go on: max_poll_interval_ms applies);
    ``subscribe T1,T2``: change the subscription (a rebalance trigger)."""
    verb, _, arg = command.partition(" ")
    if verb == "stall":
        ms = int(arg)
        emitter.emit("stall", ms=ms)
        stop.wait(ms / 1000)
        emitter.emit("resumed")
    elif verb == "subscribe":
        topics = [t for t in arg.split(",") if t]
        consumer.subscribe(topics=topics, listener=listener)
        emitter.emit("subscribed", topics=topics)
    else:
        emitter.emit("error", message=f"unknown command {command!r}")


def _arm_watchdog(seconds: float, emitter: Emitter) -> None:
    """Hard exit if a clean stop takes longer than ``seconds`` (every wait is bounded)."""

    def fire() -> None:
        emitter.emit("error", message=f"clean stop took over {seconds:.0f} s; exiting hard")
        os._exit(3)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()


def run(cfg: MemberConfig, emitter: Emitter) -> int:
    if cfg.runtime and not KAFKA_PYTHON_2:  # (the runtime is kafka-python 3's only)
        from ..kafka_python import KafkaConsumer  # the runtime, as docs/runtime.md says
    else:
        from kafka import KafkaConsumer  # type: ignore[no-redef]

    from .strategies import resolve_strategies

    stop = threading.Event()
    commands: queue.SimpleQueue[str] = queue.SimpleQueue()
    threading.Thread(
        target=_watch_stdin, args=(stop.set, commands), daemon=True, name="stdin"
    ).start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def on_commit(offsets: Any, result: Any) -> None:
        emitter.emit(
            "commit",
            mode="auto",
            ok=not isinstance(result, Exception),
            error=repr(result) if isinstance(result, Exception) else None,
            offsets=sorted([tp.topic, tp.partition, om.offset] for tp, om in offsets.items()),
        )

    listener = _make_listener(emitter, cfg.revoke_delay_ms)
    # (kafka-python 2.2 has no static membership: the option only when it is used)
    static = {"group_instance_id": cfg.group_instance_id} if cfg.group_instance_id else {}
    # the consumer group protocol (KIP-848): the broker assigns and sets the session and the
    # heartbeat interval, so those options are refused there
    classic: dict[str, Any] = {} if cfg.consumer_config.get("group_protocol") == "consumer" \
        else {"partition_assignment_strategy": resolve_strategies(cfg.strategies),
              "session_timeout_ms": cfg.session_timeout_ms,
              "heartbeat_interval_ms": cfg.heartbeat_interval_ms}
    # configured as docs/runtime.md tells users: the runtime's KafkaConsumer, or kafka's
    consumer = KafkaConsumer(
        bootstrap_servers=cfg.bootstrap.split(","),
        group_id=cfg.group_id,
        client_id=cfg.name,
        **static,
        **classic,
        max_poll_interval_ms=cfg.max_poll_interval_ms,
        enable_auto_commit=cfg.commit == "auto",
        auto_offset_reset=cfg.auto_offset_reset,
        default_offset_commit_callback=on_commit,
        **cfg.consumer_config,
    )
    listener.consumer = consumer
    consumer.subscribe(topics=list(cfg.topics), listener=listener)
    emitter.emit("subscribed", topics=list(cfg.topics), strategies=list(cfg.strategies))

    last: dict[str, Any] | None = None
    metrics_reporter = MetricsReporter(consumer, emitter)
    while not stop.is_set():
        while not commands.empty() and not stop.is_set():
            _run_command(commands.get(), consumer, listener, stop, emitter)
        batches = consumer.poll(timeout_ms=cfg.poll_timeout_ms)
        consumed: dict[tuple[str, int], int] = {}
        for tp, records in batches.items():
            for rec in records:
                consumed[(tp.topic, tp.partition)] = rec.offset + 1
                if cfg.report_records:
                    emitter.emit(
                        "record",
                        topic=rec.topic,
                        partition=rec.partition,
                        offset=rec.offset,
                        key=_summary(rec.key),
                        value=_summary(rec.value),
                        value_size=len(rec.value) if rec.value is not None else None,
                    )
        if consumed and cfg.commit == "sync":
            try:
                consumer.commit()
                emitter.emit(
                    "commit",
                    mode="sync",
                    ok=True,
                    error=None,
                    offsets=sorted([t, p, o] for (t, p), o in consumed.items()),
                )
            except Exception as exc:
                emitter.emit(
                    "commit",
                    mode="sync",
                    ok=False,
                    error=repr(exc),
                    offsets=sorted([t, p, o] for (t, p), o in consumed.items()),
                )
        snapshot = group_snapshot(consumer)
        if snapshot != last:
            emitter.emit("state", **snapshot)
            last = snapshot
        if cfg.report_metrics:
            metrics_reporter.maybe_emit()
        if cfg.processing_delay_ms and not stop.is_set():
            time.sleep(cfg.processing_delay_ms / 1000)

    if cfg.report_metrics:
        metrics_reporter.maybe_emit(force=True)
    _arm_watchdog(cfg.close_timeout_ms / 1000 + 10, emitter)
    emitter.emit("closing")
    consumer.close(autocommit=cfg.commit == "auto", timeout_ms=cfg.close_timeout_ms)
    emitter.emit("closed")
    return 0


#: Metrics whose value moves with the clock alone: a change in them is no news.
_CLOCK_DRIVEN = ("-rate-per-hour", "-seconds-ago")


class MetricsReporter:
    """Emits the consumer's kafka-assignors metrics when a rebalance figure changed (at most
    once a second), for views such as the demo's."""

    def __init__(self, consumer: Any, emitter: Emitter, every: float = 1.0) -> None:
        self.consumer, self.emitter, self.every = consumer, emitter, every
        self._sent: dict[str, dict[str, float | None]] | None = None
        self._at = 0.0

    def read(self) -> dict[str, dict[str, float | None]] | None:
        from ..metrics import metrics_of

        found = metrics_of(self.consumer)
        if found is None:
            return None
        return {g: {n: (float(v) if math.isfinite(v) else None) for n, v in by_name.items()}
                for g, by_name in found.values().items()}

    def maybe_emit(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._at < self.every:
            return
        values = self.read()
        if values is None or (not force and not _news(self._sent, values)):
            return
        self._sent, self._at = values, now
        self.emitter.emit("metrics", values=values)


def _news(before: dict[str, dict[str, float | None]] | None,
          after: dict[str, dict[str, float | None]]) -> bool:
    if before is None:
        return True
    return any(
        before.get(g, {}).get(n) != v
        for g, by_name in after.items()
        for n, v in by_name.items()
        if not n.endswith(_CLOCK_DRIVEN)
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m kafka_assignors.embedded._member CONFIG_JSON", file=sys.stderr)
        return 2
    cfg = MemberConfig.from_json(args[0])
    emitter = Emitter(take_stdout(), cfg.name)
    logging.basicConfig(
        level=cfg.log_level,
        stream=sys.stderr,
        format=f"%(asctime)s {cfg.name} %(name)s %(levelname)s %(message)s",
    )
    emitter.emit("started")
    try:
        return run(cfg, emitter)
    except Exception as exc:
        emitter.emit(
            "error", message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()
        )
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
