"""Assignors run outside a consumer (the simulator) log nothing: no word about the consumer
runtime, which only concerns consumers."""

from __future__ import annotations

import subprocess
import sys


def test_simulate_logs_nothing_at_the_default_level() -> None:
    """``simulate`` with cooperative assignors prints its tables and nothing on stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_assignors", "simulate", "--topics", "a:4,b:2",
         "--members", "2", "--churn", "join"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "cooperative-balanced-sticky" in proc.stdout
    assert proc.stderr == "", proc.stderr
