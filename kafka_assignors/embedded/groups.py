"""Run a consumer group as separate processes and watch it: the group runner.

Each member is a kafka-python ``KafkaConsumer`` in its own Python process (so it can
be SIGKILLed like a crashed application), started with the given assignment
strategies. Members report every rebalance callback, state change, commit and
(optionally) record as JSON lines (:mod:`.events`); the runner keeps one
:class:`MemberView` per member and offers bounded waits on the group's state.

    with GroupRunner(bootstrap, "g1", ["orders"], ["range"], members=3) as group:
        group.wait_stable(timeout=60)
        print(group.assignments(), group.protocol())
        group.kill_member(0)
        group.wait_stable(timeout=60)

Every wait is bounded; member processes never outlive the runner (close() on exit,
and a member whose parent disappears sees stdin EOF and stops).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ._lifetime import Closing, OpenAtExit
from .events import MemberConfig, MemberView, TopicPartition

log = logging.getLogger(__name__)

EventCallback = Callable[[MemberView, dict[str, Any]], None]


class GroupRunnerError(RuntimeError):
    """The group could not be driven as asked."""


class GroupNotStableError(TimeoutError):
    """wait_stable() ran out of time; the message lists every member's last state."""


class MemberFailedError(GroupRunnerError):
    """A member process exited on its own (not stopped or killed by the runner)."""


@dataclass
class _Member:
    view: MemberView
    proc: subprocess.Popen[str]
    log_path: Path
    reader: threading.Thread


def _child_env(python: str | None = None) -> dict[str, str]:
    """The parent's environment, with its sys.path so 'module:Attr' strategies import.

    For another interpreter (another venv, another kafka-python): the directory holding
    this package and the working directory only, never the parent's site-packages.
    """
    env = dict(os.environ)
    if python is not None:
        package_root = str(Path(__file__).resolve().parent.parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([package_root, os.getcwd()]))
        env["PYTHONUNBUFFERED"] = "1"
        return env
    paths = [p or os.getcwd() for p in sys.path]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONUNBUFFERED"] = "1"
    return env


class GroupRunner(Closing):
    """N consumer processes in one group; see the module docstring."""

    def __init__(
        self,
        bootstrap: str,
        group_id: str,
        topics: Sequence[str],
        strategies: Sequence[str] = ("range",),
        *,
        members: int = 0,
        on_event: EventCallback | None = None,
        workdir: str | Path | None = None,
        keep_logs: bool = False,
        **member_options: Any,
    ) -> None:
        """``member_options`` are MemberConfig fields applied to every member
        (session_timeout_ms, max_poll_interval_ms, group_instance_id, commit, ...)."""
        self.bootstrap = bootstrap
        self.group_id = group_id
        self._template = MemberConfig(
            name="",
            bootstrap=bootstrap,
            group_id=group_id,
            topics=tuple(topics),
            strategies=tuple(strategies),
            **member_options,
        )
        self._on_event = on_event
        self._owns_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kafka-assignors-group-"))
        self._keep_logs = keep_logs
        self._members: list[_Member] = []
        self._cond = threading.Condition()
        self._closed = False
        _OPEN.remember(self)
        try:
            for _ in range(members):
                self.add_member()
        except BaseException:
            self.close()
            raise

    # -- members ------------------------------------------------------------------------
    def add_member(self, *, name: str | None = None, **overrides: Any) -> int:
        """Start one more member (MemberConfig fields may be overridden); returns its index."""
        if self._closed:
            raise GroupRunnerError("runner is closed")
        index = len(self._members)
        cfg = replace(self._template, name=name or f"m{index}", **overrides)
        log_path = self.workdir / f"{cfg.name}.log"
        log_file = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 (owned by the child)
        try:
            proc = subprocess.Popen(
                [cfg.python or sys.executable, "-u", "-m", "kafka_assignors.embedded._member",
                 cfg.to_json()],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log_file,
                text=True,
                encoding="utf-8",
                env=_child_env(cfg.python),
            )
        finally:
            log_file.close()
        view = MemberView(index=index, name=cfg.name, config=cfg, pid=proc.pid)
        reader = threading.Thread(
            target=self._read_events, args=(view, proc), daemon=True, name=f"group-{cfg.name}"
        )
        with self._cond:
            self._members.append(_Member(view, proc, log_path, reader))
        reader.start()
        log.info("started member %s (pid %d) of group %s", cfg.name, proc.pid, self.group_id)
        return index

    def _read_events(self, view: MemberView, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                log.warning("member %s wrote a non-JSON line: %r", view.name, line[:200])
                continue
            with self._cond:
                view.apply(event)
                self._cond.notify_all()
            if self._on_event is not None:
                try:
                    self._on_event(view, event)
                except Exception:
                    log.exception("on_event callback failed")
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        with self._cond:
            view.alive = False
            view.exit_code = code
            self._cond.notify_all()

    def _member(self, index: int) -> _Member:
        try:
            return self._members[index]
        except IndexError:
            raise GroupRunnerError(f"no member {index} (have {len(self._members)})") from None

    def member(self, index: int) -> MemberView:
        """A copy of one member's current view."""
        with self._cond:
            return replace(self._member(index).view, events=list(self._member(index).view.events))

    def members(self) -> list[MemberView]:
        return [self.member(i) for i in range(len(self._members))]

    def live_indexes(self) -> list[int]:
        """Members whose process runs and that are not being stopped."""
        with self._cond:
            return [m.view.index for m in self._members if m.view.alive and not m.view.stopping]

    def events(self, index: int | None = None) -> list[dict[str, Any]]:
        """Events of one member, or of all members ordered by their monotonic timestamp."""
        with self._cond:
            if index is not None:
                return list(self._member(index).view.events)
            merged = [e for m in self._members for e in m.view.events]
        return sorted(merged, key=lambda e: float(e.get("mono", 0.0)))

    def member_log(self, index: int, tail: int | None = None) -> str:
        """The member process's stderr (kafka-python logging, tracebacks)."""
        try:
            text = self._member(index).log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"<log unavailable: {exc}>"
        return text if tail is None else "\n".join(text.splitlines()[-tail:])

    # -- stopping ----------------------------------------------------------------------------
    def _send_stop(self, m: _Member) -> None:
        with self._cond:
            m.view.stopping = True
        if m.proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                m.proc.stdin.write("stop\n")
                m.proc.stdin.flush()
            with contextlib.suppress(OSError, ValueError):
                m.proc.stdin.close()

    def _reap(self, m: _Member, timeout: float) -> None:
        try:
            m.proc.wait(timeout=max(timeout, 0.1))
        except subprocess.TimeoutExpired:
            log.warning("member %s did not stop in time; SIGTERM", m.view.name)
            m.proc.terminate()
            try:
                m.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.warning("member %s ignored SIGTERM; SIGKILL", m.view.name)
                m.proc.kill()
                m.proc.wait(timeout=10)
        m.reader.join(timeout=10)

    def stop_member(self, index: int, timeout: float = 30.0) -> None:
        """Close one member cleanly (it leaves the group); bounded, then escalates."""
        m = self._member(index)
        self._send_stop(m)
        self._reap(m, timeout)

    def _send_line(self, index: int, line: str) -> None:
        m = self._member(index)
        if m.proc.stdin is None or m.view.stopping:
            raise GroupRunnerError(f"member {m.view.name} takes no commands (stopping)")
        try:
            m.proc.stdin.write(line + "\n")
            m.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise GroupRunnerError(f"member {m.view.name} is gone: {exc}") from exc

    def stall_member(self, index: int, seconds: float) -> None:
        """Make one member stop calling poll() for ``seconds`` while its heartbeats go on,
        as a stuck application would (past ``max_poll_interval_ms`` it leaves the group)."""
        self._send_line(index, f"stall {int(seconds * 1000)}")

    def resubscribe(self, index: int, topics: Sequence[str]) -> None:
        """Change one member's subscription to ``topics`` (a rebalance trigger)."""
        self._send_line(index, "subscribe " + ",".join(topics))
        with self._cond:
            view = self._member(index).view
            view.config = replace(view.config, topics=tuple(topics))

    def kill_member(self, index: int) -> None:
        """SIGKILL one member: no LeaveGroup, the broker notices at session timeout."""
        m = self._member(index)
        with self._cond:
            m.view.killed = True
            m.view.stopping = True
        m.proc.kill()
        m.proc.wait(timeout=10)
        m.reader.join(timeout=10)

    def close(self, timeout: float = 30.0) -> None:
        """Stop every member (clean first, then SIGTERM/SIGKILL), bounded by ``timeout``."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        running = [m for m in self._members if m.proc.poll() is None]
        for m in running:
            self._send_stop(m)
        for m in running:
            self._reap(m, deadline - time.monotonic())
        for m in self._members:
            if m.proc.stdout is not None:
                with contextlib.suppress(OSError):
                    m.proc.stdout.close()
        if self._owns_workdir and not self._keep_logs:
            shutil.rmtree(self.workdir, ignore_errors=True)
        _OPEN.forget(self)

    # -- observing -----------------------------------------------------------------------------
    def assignments(self) -> dict[str, frozenset[TopicPartition]]:
        """Current assignment of each live member, by member name."""
        with self._cond:
            return {
                m.view.name: m.view.assignment
                for m in self._members
                if m.view.alive and not m.view.stopping
            }

    def protocols(self) -> dict[str, str | None]:
        """Chosen protocol (assignor wire name) as each live member last reported it."""
        with self._cond:
            return {
                m.view.name: m.view.protocol
                for m in self._members
                if m.view.alive and not m.view.stopping
            }

    def protocol(self) -> str | None:
        """The protocol the live members agree on (None if none reported or they differ)."""
        values = {p for p in self.protocols().values() if p is not None}
        return values.pop() if len(values) == 1 else None

    def expected_partitions(self) -> frozenset[TopicPartition]:
        """Every partition of the topics the live members subscribe to (asks the cluster)."""
        from .admin import partition_counts

        with self._cond:
            topics = sorted(
                {t for m in self._members if m.view.alive for t in m.view.config.topics}
            )
        counts = partition_counts(self.bootstrap, topics)
        return frozenset((t, p) for t, n in counts.items() for p in range(n))

    def _check_failures(self) -> None:
        for m in self._members:
            v = m.view
            if not v.alive and not v.stopping and not v.killed:
                raise MemberFailedError(
                    f"member {v.describe()} exited on its own; its log:\n"
                    + self.member_log(v.index, tail=40)
                )

    def _stable_problem(self, expected: frozenset[TopicPartition]) -> str | None:
        """None if the group is stable and its assignment exact; else what is wrong."""
        live = [m.view for m in self._members if m.view.alive and not m.view.stopping]
        if not live:
            return "no live members"
        not_stable = [v.name for v in live if v.state != "STABLE"]
        if not_stable:
            return f"not STABLE yet: {not_stable}"
        rejoining = [v.name for v in live if v.rejoin_pending]
        if rejoining:
            return f"STABLE but about to join again: {rejoining}"
        generations = {v.generation for v in live}
        if len(generations) != 1:
            return f"members on different generations {sorted(generations)}"
        seen: dict[TopicPartition, str] = {}
        duplicates = []
        for v in live:
            for tp in v.assignment:
                if tp in seen:
                    duplicates.append(f"{tp[0]}-{tp[1]} ({seen[tp]}, {v.name})")
                seen[tp] = v.name
        if duplicates:
            return f"partitions owned twice: {sorted(duplicates)}"
        missing = expected - seen.keys()
        if missing:
            return f"unassigned partitions: {sorted(f'{t}-{p}' for t, p in missing)}"
        extra = seen.keys() - expected
        if extra:
            return f"unexpected partitions: {sorted(f'{t}-{p}' for t, p in extra)}"
        return None

    def wait_stable(
        self,
        timeout: float = 60.0,
        *,
        expected: Iterable[TopicPartition] | Mapping[str, int] | None = None,
        settle: float = 0.0,
    ) -> dict[str, frozenset[TopicPartition]]:
        """Wait until every live member is STABLE on one generation, none about to join again
        (a cooperative first round), and their assignments cover ``expected`` (default: all
        partitions of the subscribed topics) exactly once.

        ``settle`` additionally requires that picture to hold for that many seconds.
        Returns assignments(); raises GroupNotStableError (with each member's last state)
        on timeout and MemberFailedError at once if a member process dies on its own.
        """
        if isinstance(expected, Mapping):
            want = frozenset((t, p) for t, n in expected.items() for p in range(n))
        elif expected is not None:
            want = frozenset(expected)
        else:
            want = self.expected_partitions()
        deadline = time.monotonic() + timeout
        stable_since: float | None = None
        stable_key: tuple[Any, ...] | None = None
        with self._cond:
            while True:
                self._check_failures()
                problem = self._stable_problem(want)
                now = time.monotonic()
                if problem is None:
                    key = tuple(
                        sorted(
                            (m.view.name, m.view.generation, m.view.assignment)
                            for m in self._members
                            if m.view.alive and not m.view.stopping
                        )
                    )
                    if key != stable_key:
                        stable_key, stable_since = key, now
                    assert stable_since is not None
                    if now - stable_since >= settle:
                        return {
                            m.view.name: m.view.assignment
                            for m in self._members
                            if m.view.alive and not m.view.stopping
                        }
                else:
                    stable_key = stable_since = None
                if now >= deadline:
                    lines = "\n  ".join(
                        m.view.describe() + self._progress(m, now) for m in self._members)
                    raise GroupNotStableError(
                        f"group {self.group_id} not stable after {timeout:.0f} s: {problem}\n"
                        f"  expected {len(want)} partitions; members:\n  {lines}"
                    )
                wait = deadline - now
                if problem is None:
                    wait = min(wait, max(settle - (now - (stable_since or now)), 0.01))
                self._cond.wait(timeout=min(wait, 0.5))

    def _progress(self, m: _Member, now: float) -> str:
        """How far a member got, for a timeout's message: its last event and how long ago
        (a member that never reported was still starting its process), and, unless it is
        stable, its log's last lines."""
        last = m.view.events[-1] if m.view.events else None
        if last is None:
            text = "; no event yet (process still starting?)"
        else:
            age = now - float(last.get("mono", now))
            text = f"; last event {last.get('event')!r} {age:.1f} s ago"
        if m.view.alive and m.view.state != "STABLE":
            tail = self.member_log(m.view.index, tail=5).strip()
            if tail:
                text += "\n    " + "\n    ".join(tail.splitlines())
        return text

    def wait_for(
        self, predicate: Callable[[list[MemberView]], bool], timeout: float, what: str
    ) -> None:
        """Bounded wait until ``predicate(views)`` holds (views are live objects: read only)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate([m.view for m in self._members]):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    now = time.monotonic()
                    lines = "\n  ".join(
                        m.view.describe() + self._progress(m, now) for m in self._members)
                    raise TimeoutError(
                        f"timed out after {timeout:.0f} s waiting for {what}:\n  {lines}"
                    )
                self._cond.wait(timeout=min(remaining, 0.5))


# ---- bookkeeping: member processes never outlive the interpreter ----------------------------
_OPEN: OpenAtExit[GroupRunner] = OpenAtExit(lambda runner: runner.close(timeout=15))


def close_all_groups() -> None:
    """Close every runner of this process that is still open."""
    _OPEN.close_all()
