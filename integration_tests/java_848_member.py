"""Kafka's Java consumer on the consumer group protocol (KIP-848) as members of a live test's
group: threads of one JVM running ``benchmarks/java/RebalanceMember.java`` with the strategy
``consumer:<assignor>`` (compiled once per process against the kafka-clients jar the image
build resolved, as the rebalance benchmark does).

The JVM reports every listener call, every change of a member's assignment and every record
as JSON lines with a CLOCK_MONOTONIC time (``mono``, Python's ``time.monotonic()``).  A
record read, or a snapshot of the assignment, at time t proves the member held the partition
at t: :meth:`JavaMembers.held_at` gives those proofs, which the group checks against the
times the Python members provably held their partitions (double ownership across processes
without trusting any clock but the shared monotonic one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

TP = tuple[str, int]


def _classpath() -> str:
    """The compiled member's classpath. A missing javac or kafka-clients jar fails the test
    (scripts/bootstrap.sh and the image build provide both): a test that cannot run fails."""
    from benchmarks._timing_clients import java_classpath

    try:
        return java_classpath()
    except (RuntimeError, FileNotFoundError) as exc:
        pytest.fail(f"the Java member needs javac and the kafka-clients jar: {exc}")


class JavaMembers:
    """Java consumers (``group.protocol=consumer``) in ``group_id`` on one topic, one JVM."""

    def __init__(self, bootstrap: str, group_id: str, topic: str, assignor: str,
                 log_dir: Path, revoke_delay_ms: int = 1) -> None:
        log = open(log_dir / "jvm.log", "w", encoding="utf-8")  # noqa: SIM115  (kept open)
        # a revocation callback sleeps revoke_delay_ms (at least 1: the member then reports
        # "released" when the callback returns)
        self._proc = subprocess.Popen(
            ["java", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-cp", _classpath(), "RebalanceMember", bootstrap, group_id, topic,
             f"consumer:{assignor}", str(max(1, revoke_delay_ms)), "6000", "1000"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            encoding="utf-8")
        self._log = log
        self._lock = threading.Lock()
        self.assignment: dict[str, frozenset[TP]] = {}
        #: (mono, member, partitions it provably held then)
        self.proofs: list[tuple[float, str, frozenset[TP]]] = []
        self.records: dict[str, dict[tuple[str, int, int], int]] = {}
        self.calls: dict[str, list[tuple[str, frozenset[TP]]]] = {}
        self.errors: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True, name="java-848")
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                event: dict[str, Any] = json.loads(line)
            except json.JSONDecodeError:
                continue
            self._apply(event)

    def _apply(self, event: dict[str, Any]) -> None:
        kind, name, mono = event["event"], str(event["member"]), float(event["mono"])
        with self._lock:
            if kind == "record":
                tp = (str(event["topic"]), int(event["partition"]))
                key = (*tp, int(event["offset"]))
                records = self.records.setdefault(name, {})
                records[key] = records.get(key, 0) + 1
                self.proofs.append((mono, name, frozenset({tp})))
            elif kind in ("assigned", "revoked", "lost", "state"):
                held = frozenset((str(t), int(p)) for t, p in event["assignment"])
                self.assignment[name] = held
                # a lost partition may already be another member's: no proof of holding it
                if kind != "lost":
                    self.proofs.append((mono, name, held))
                if kind != "state":
                    self.calls.setdefault(name, []).append(
                        (kind, frozenset((str(t), int(p)) for t, p in event["partitions"])))
            elif kind == "released":
                gone = frozenset((str(t), int(p)) for t, p in event["partitions"])
                self.assignment[name] = self.assignment.get(name, frozenset()) - gone
            elif kind == "closed":
                self.assignment.pop(name, None)
            elif kind == "error":
                self.errors.append(f"{name}: {event.get('message')}")

    def _send(self, line: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()

    def add(self, name: str) -> None:
        with self._lock:
            self.assignment[name] = frozenset()
        self._send(f"add {name}")

    def remove(self, name: str, timeout: float = 30.0) -> None:
        """Close one member (commit, leave) and wait until it reports closed."""
        self._send(f"remove {name}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if name not in self.assignment:
                    return
            time.sleep(0.05)
        pytest.fail(f"Java member {name} did not close in {timeout} s: {self.errors}")

    def members(self) -> dict[str, frozenset[TP]]:
        with self._lock:
            return dict(self.assignment)

    def read(self) -> dict[str, dict[tuple[str, int, int], int]]:
        with self._lock:
            return {name: dict(r) for name, r in self.records.items()}

    def calls_of(self, name: str) -> list[tuple[str, frozenset[TP]]]:
        """The member's listener calls, in order: (kind, partitions)."""
        with self._lock:
            return list(self.calls.get(name, []))

    def held_at(self) -> list[tuple[float, str, frozenset[TP]]]:
        with self._lock:
            return list(self.proofs)

    def kill(self) -> None:
        """SIGKILL the JVM: every member in it crashes (no commit, no leave)."""
        if self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
        self._proc.wait(timeout=30)
        with self._lock:
            self.assignment.clear()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._send("stop")
                self._proc.wait(timeout=40)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait(timeout=30)
        self._reader.join(timeout=10)
        self._log.close()
