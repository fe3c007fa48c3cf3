"""Every program in examples/ runs as a user runs it (``BOOTSTRAP_SERVERS=... python
examples/X.py``, from the repository's root) against the suite's broker, ends by itself and
prints what it promises. Each is a test of its own, so a parallel run spreads them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import BrokerHandle

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))
#: What each example's output shows when it did its job (a line that contains this).
SHOWS = {
    "cooperative_listener.py": "first keeps:",
    "custom_strategy.py": "assigned:",
    "explain_and_simulate.py": "examples-explain",
    "load_aware_live_lag.py": "the hot partition 0 shares its member with: []",
    "load_aware_profile.py": "the hot partition 0 shares its member with: []",
    "metrics_otel.py": "metrics, e.g.",
    "metrics_prometheus.py": "rebalance_total",
    "migrate_live_group.py": "b restarted with ours alone: the group uses balanced-sticky",
    "one_line_aiokafka.py": "assigned: [0, 1, 2]",
    "one_line_confluent.py": "assigned: [0, 1, 2]",
    "one_line_kafka_python.py": "assigned: [0, 1, 2]",
    "rack_aware.py": "assigned: [0, 1, 2]",
    "runtime.py": "assigned: [0, 1, 2]",
}


def test_every_example_says_what_it_shows() -> None:
    """A new example names what its output must show here (else it would run unchecked)."""
    assert sorted(SHOWS) == [p.name for p in EXAMPLES]


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_against_the_broker(example: Path, kafka_broker: BrokerHandle) -> None:
    """The example ends by itself, exit 0, and prints what it promises."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(BOOTSTRAP_SERVERS=kafka_broker.bootstrap, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(example.relative_to(ROOT))], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    output = f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, output
    assert SHOWS[example.name] in proc.stdout, output
    assert "Traceback" not in proc.stderr, output
