"""Every Python example of the documentation runs as written (integration_tests/docs_examples.py
says how blocks are found and what they may say they need); those that name a broker run
against the suite's broker."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from .conftest import BrokerHandle
from .docs_examples import ROOT, Example, all_examples, for_broker

EXAMPLES = all_examples()
#: The topics the examples read.
TOPICS = ("orders", "payments")
#: Blocks that are not runnable yet, with what they need (none today): strict,
#: so a block that starts to run fails here until its entry is removed.
AWAITING: dict[str, str] = {}


def _params(broker: bool) -> list[object]:
    params: list[object] = []
    for example in EXAMPLES:
        if example.uses_broker != broker:
            continue
        marks = []
        if example.id in AWAITING:
            marks.append(pytest.mark.xfail(reason=AWAITING[example.id], strict=True))
        elif not example.available():
            marks.append(pytest.mark.xfail(
                reason=f"needs {example.needs}, which this checkout lacks", strict=True))
        params.append(pytest.param(example, id=example.id, marks=marks))
    return params


def _run(code: str, example: Example) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, (
        f"{example.page}, the Python block at line {example.line}, exit {proc.returncode}:\n"
        f"{proc.stderr[-3000:]}")


@pytest.fixture(scope="module")
def example_topics(kafka_broker: BrokerHandle) -> str:
    """The examples' topics on the suite's broker (kept if they exist)."""
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap)
    try:
        missing = [t for t in TOPICS if t not in admin.list_topics()]
        if missing:
            admin.create_topics([NewTopic(t, num_partitions=3, replication_factor=1)
                                 for t in missing])
    finally:
        admin.close()
    return kafka_broker.bootstrap


@pytest.mark.parametrize("example", _params(broker=False))
def test_example_runs(example: Example) -> None:
    """A block that needs no broker runs to the end without an error."""
    _run(example.code, example)


@pytest.mark.parametrize("example", _params(broker=True))
def test_example_runs_against_the_broker(example: Example, example_topics: str) -> None:
    """A block that names a broker runs to the end against the suite's broker."""
    _run(for_broker(example.code, example_topics, uuid.uuid4().hex[:8]), example)


def test_every_page_example_is_collected() -> None:
    """The extraction finds the blocks (a broken fence pattern would silently run nothing)."""
    pages = {e.page for e in EXAMPLES}
    assert {"README.md", "docs/index.md", "docs/assignors.md", "docs/metrics.md"} <= pages
    assert len(EXAMPLES) >= 15, [e.id for e in EXAMPLES]
