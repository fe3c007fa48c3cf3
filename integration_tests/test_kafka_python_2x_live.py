"""kafka-python 2.x on a real broker: installing the project keeps the user's kafka-python
2.3.3 and the README's one-line example runs there; a group upgraded member by member from
kafka-python 2.3.3 to 3 under traffic (either one leading) loses nothing, never has two
owners of a partition and moves only what balance requires.

The 2.x members run in a venv made by :mod:`.client_venvs` (kafka-python 2.3.3, this
checkout through ``PYTHONPATH``); the 3.x members in this interpreter.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.embedded import GroupRunner

from .client_venvs import ROOT, kafka_python_venv
from .conftest import BrokerHandle
from .ledger import holdings, minimal_moves, moved, overlaps, spread
from .test_e2e.traffic import (
    SequencedProducer,
    consumed_records,
    delivery_report,
    wait_all_committed,
)

#: the kafka-python 2.x versions the live tests run (``make test``: 2.3.3; the compatibility
#: results command may ask for more, e.g. KAFKA_ASSIGNORS_KP2_LIVE=2.2.21,2.3.3)
KP2_VERSIONS = tuple(os.environ.get("KAFKA_ASSIGNORS_KP2_LIVE", "2.3.3").split(","))
CBS = "kafka_assignors:CooperativeBalancedStickyAssignor"
PARTITIONS = 12
MEMBER_OPTIONS = {
    "session_timeout_ms": 6_000,
    "heartbeat_interval_ms": 500,
    "commit": "sync",
    "report_records": True,
    # members take half a second to let go of revoked partitions, as committing ones do:
    # a hand-over that did not wait for that shows up as double ownership
    "revoke_delay_ms": 500,
    "log_level": "INFO",
}
#: kafka-python 2.x probes the broker's version inside KafkaConsumer(...) with a 2 s timeout,
#: which a loaded 2-core machine can miss (NoBrokersAvailable before any assignor runs)
KP2_CONSUMER = {"api_version_auto_timeout_ms": 30_000}

README_EXAMPLE = """
import json, sys, time
import kafka, kafka_assignors
from kafka import KafkaConsumer
from kafka_assignors import CooperativeBalancedStickyAssignor

topic, bootstrap, group, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
consumer = KafkaConsumer(
    topic,
    bootstrap_servers=bootstrap,
    group_id=group,
    auto_offset_reset="earliest",
    partition_assignment_strategy=[CooperativeBalancedStickyAssignor()],
)
seen = 0
deadline = time.monotonic() + 90
while seen < want and time.monotonic() < deadline:
    seen += sum(len(r) for r in consumer.poll(timeout_ms=500).values())
print(json.dumps({"kafka": kafka.__version__, "package": kafka_assignors.__file__,
                  "assigned": sorted(tp.partition for tp in consumer.assignment()),
                  "seen": seen}))
consumer.close()
"""


def _copy_project(dest: Path) -> Path:
    """The files a build needs, copied out so that building writes nothing in the checkout."""
    src = dest / "kafka-assignors"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "kafka_assignors", src / "kafka_assignors",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return src


@pytest.mark.parametrize("kp2", KP2_VERSIONS)
def test_installing_keeps_kafka_python_2_and_the_readme_example_runs(
    kp2: str,
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """``pip install`` of the project into a fresh venv holding kafka-python 2.x (2.3.3)
    leaves it in place, and the README's one-line example there joins a group with
    CooperativeBalancedStickyAssignor on a live broker and consumes what was produced."""
    from kafka import KafkaProducer

    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", f"kafka-python=={kp2}"], check=True, timeout=600)
    subprocess.run([*pip, "install", str(_copy_project(tmp_path))], check=True, timeout=600)
    shown = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "kafka-python"],
                           check=True, timeout=120, capture_output=True, text=True).stdout
    assert re.search(r"^Version: (.*)$", shown, re.M).group(1) == kp2  # type: ignore[union-attr]

    topic = make_topic(3)
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap.split(","))
    for i in range(30):
        producer.send(topic, value=f"m{i}".encode(), partition=i % 3)
    producer.flush(timeout=30)
    producer.close()
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", README_EXAMPLE, topic, kafka_broker.bootstrap,
         unique_name("readme"), "30"],
        cwd=tmp_path, check=True, timeout=180, capture_output=True, text=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["kafka"] == kp2
    assert str(venv) in result["package"]  # the installed copy, not the checkout
    assert result["assigned"] == [0, 1, 2] and result["seen"] == 30


def _leaders(group: GroupRunner) -> dict[str, int]:
    """How many assignments each member computed as leader (from its log)."""
    return {v.name: len(re.findall(r"assigned \d+ partition\(s\) to",
                                   group.member_log(v.index)))
            for v in group.members()}


def _runs_2x(group: GroupRunner, name: str, kp2: str) -> bool:
    """The member said (once, in its log) that kafka-python ``kp2`` runs the strategy eager."""
    index = next(v.index for v in group.members() if v.name == name)
    return f"kafka-python {kp2} has no cooperative rebalance protocol" in group.member_log(index)


def _settle(group: GroupRunner, what: str, steps: list[str],
            before: dict[str, frozenset[tuple[str, int]]] | None) -> dict[str, Any]:
    """Wait for a stable, balanced group; check survivors gave up only what balance needs."""
    state = group.wait_stable(timeout=120, settle=1.5)
    assert spread(state) <= 1, f"{what}: unbalanced {state}"
    if before is not None:
        need = minimal_moves(before, state, PARTITIONS)
        assert moved(before, state) == need, f"{what}: moved more than {need}: {before} -> {state}"
    steps.append(what)
    return state


def _drain(producer: SequencedProducer, group: GroupRunner, topic: str) -> str:
    producer.stop()
    committed = wait_all_committed(group.bootstrap, group.group_id,
                                   [(topic, p) for p in range(PARTITIONS)], timeout=120)
    report = delivery_report(producer, consumed_records([group]), committed)
    assert report.produced > 0 and report.failed_sends == 0
    assert report.lost == 0, (report.unconsumed[:20], report.uncommitted[:20])
    assert not report.mismatched, report.mismatched[:10]
    return report.summary()


@pytest.mark.parametrize("kp2", KP2_VERSIONS)
def test_rolling_upgrade_from_kafka_python_2_to_3_under_traffic(
    kp2: str,
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """Three kafka-python 2.3.3 members of cooperative-balanced-sticky (eager there) are
    replaced one at a time by kafka-python 3 members (cooperative) while a producer writes:
    the 2.x leader leads the mixed group until it is replaced last; every step is balanced
    and moves only what balance needs; nothing is lost and no partition has two owners."""
    python2 = str(kafka_python_venv(kp2))
    topic = make_topic(PARTITIONS)
    producer = SequencedProducer(kafka_broker.bootstrap, [topic], rate=40).start()
    try:
        group = make_group([topic], [CBS], **MEMBER_OPTIONS)
        group.add_member(name="old0", python=python2, consumer_config=KP2_CONSUMER)
        group.wait_stable(timeout=120, settle=1.0)  # old0 formed the group: it leads
        for i in (1, 2):
            group.add_member(name=f"old{i}", python=python2, consumer_config=KP2_CONSUMER)
        steps: list[str] = []
        state = _settle(group, f"3 x kafka-python {kp2}", steps, None)
        assert group.protocol() == "cooperative-balanced-sticky"
        # the leader last, so that it leads the mixed group meanwhile
        for n, old in enumerate(("old1", "old2", "old0")):
            index = next(v.index for v in group.members() if v.name == old and v.alive)
            group.stop_member(index)
            state = _settle(group, f"{old} stopped", steps, state)
            group.add_member(name=f"new{n}")  # this interpreter: kafka-python 3
            state = _settle(group, f"new{n} started", steps, state)
        assert all(_runs_2x(group, f"old{i}", kp2) for i in range(3))
        assert not any(_runs_2x(group, f"new{i}", kp2) for i in range(3))
        led = _leaders(group)
        assert led["old0"] >= 3, led  # led with kafka-python 3 members in the group
        problems = overlaps(holdings(group))
        assert problems == [], problems
        print(f"\nrolling {kp2} -> 3 steps: {steps}; led: {led}")
        print(f"rolling {kp2} -> 3: {_drain(producer, group, topic)}")
    finally:
        producer.stop(timeout=10)


@pytest.mark.parametrize("kp2", KP2_VERSIONS)
def test_a_kafka_python_3_leader_with_kafka_python_2_members_under_traffic(
    kp2: str,
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """A kafka-python 3 member leads kafka-python 2.3.3 members joining and leaving under
    traffic: each step is balanced and moves only what balance needs (the 2.x members'
    ownership reaches it through their user data); nothing is lost, never two owners."""
    python2 = str(kafka_python_venv(kp2))
    topic = make_topic(PARTITIONS)
    producer = SequencedProducer(kafka_broker.bootstrap, [topic], rate=40).start()
    try:
        group = make_group([topic], [CBS], **MEMBER_OPTIONS)
        group.add_member(name="new0")
        steps: list[str] = []
        state = _settle(group, "new0 alone", steps, None)
        for name in ("old0", "old1"):
            group.add_member(name=name, python=python2, consumer_config=KP2_CONSUMER)
            state = _settle(group, f"{name} started", steps, state)
        group.stop_member(next(v.index for v in group.members() if v.name == "old0"))
        state = _settle(group, "old0 stopped", steps, state)
        group.add_member(name="old2", python=python2, consumer_config=KP2_CONSUMER)
        state = _settle(group, "old2 started", steps, state)
        assert all(_runs_2x(group, f"old{i}", kp2) for i in range(3))
        assert not _runs_2x(group, "new0", kp2)
        led = _leaders(group)
        assert led["new0"] >= 4 and led["old1"] == 0 and led["old2"] == 0, led
        problems = overlaps(holdings(group))
        assert problems == [], problems
        print(f"\n3 leading {kp2} steps: {steps}; led: {led}")
        print(f"3 leading {kp2}: {_drain(producer, group, topic)}")
    finally:
        producer.stop(timeout=10)
