"""The command line against the real broker: demo (short), explain on live groups, simulate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafka_assignors.cli import main

CLI = [sys.executable, "-m", "kafka_assignors.cli"]
OURS = "kafka_assignors:CooperativeBalancedStickyAssignor"


def run_cli(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    for p in range(partitions):
        for i in range(per_partition):
            producer.send(topic, value=f"r{i}".encode(), partition=p)
    producer.flush(timeout=30)
    producer.close(timeout=10)


def test_demo_short_shows_the_live_view_and_the_summary(kafka_broker: Any) -> None:
    """`demo --short --no-report` on the session broker prints live lines and the summary."""
    started = time.monotonic()
    proc = run_cli(
        ["demo", "--short", "--no-report", "--bootstrap", kafka_broker.bootstrap,
         "--dwell", "1", "--timeout", "45", "--rate", "60"],
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}"
    assert "live group [range]" in out and "live group [cooperative-balanced-sticky]" in out
    assert "live   member m0" in out
    assert "summary (per assignor" in out
    table = out[out.index("summary (per assignor"):]
    assert "range" in table and "cooperative-balanced-sticky" in table and "peak lag" in table
    assert "demo finished" in out
    assert time.monotonic() - started < 300


@pytest.mark.parametrize("strategy", [OURS, "range"])
def test_explain_json_matches_the_groups_own_view(
    strategy: str,
    kafka_broker: Any,
    make_topic: Callable[..., str],
    make_group: Callable[..., Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """explain --json lists every member with the assignment it reports itself, and sane lag."""
    topic = make_topic(6)
    produce(kafka_broker.bootstrap, topic, 6, 5)
    group = make_group([topic], [strategy], members=2, commit="sync", report_records=True)
    group.wait_stable(timeout=90)
    group.wait_for(
        lambda views: sum(v.records for v in views) >= 30, timeout=60, what="30 records read"
    )
    own = group.wait_stable(timeout=60)
    code = main(["explain", "--bootstrap", kafka_broker.bootstrap, "--group", group.group_id,
                 "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["group"] == group.group_id and doc["state"] == "Stable"
    assert doc["protocol_type"] == "consumer"
    assert doc["strategy"] == ("cooperative-balanced-sticky" if strategy == OURS else "range")
    by_client = {m["client_id"]: m for m in doc["members"]}
    assert set(by_client) == set(own)
    for name, tps in own.items():
        member = by_client[name]
        listed = {(t, p) for t, ps in member["assignment"].items() for p in ps}
        assert listed == set(tps)
        assert member["partitions"] == len(tps) and member["topics"] == [topic]
        lags = [v for v in member["lag"].values() if v is not None]
        assert all(0 <= v <= 5 for v in lags)
        assert member["total_lag"] == sum(lags)
        if strategy == OURS:
            assert member["subscription_user_data"] == {"decoded": {"mode": "cooperative"}}
            decoded = member["assignment_user_data"]["decoded"]
            assert decoded["assignor"] == "cooperative-balanced-sticky"
        else:
            assert member["subscription_user_data"] is None
    owned = [(t, p) for m in doc["members"] for t, ps in m["assignment"].items() for p in ps]
    assert sorted(owned) == [(topic, p) for p in range(6)]
    assert doc["count_imbalance"] == 0 and doc["unassigned"] == []
    text = run_cli(["explain", "--bootstrap", kafka_broker.bootstrap, "--group",
                    group.group_id], timeout=120)
    assert text.returncode == 0 and "partitions per member: max - min = 0" in text.stdout


def test_explain_errors_are_one_line_and_non_zero(kafka_broker: Any) -> None:
    """An unknown group and an unreachable cluster each give exit 2 and a one-line message."""
    unknown = run_cli(["explain", "--bootstrap", kafka_broker.bootstrap, "--group",
                       f"no-such-group-{time.time_ns()}"], timeout=120)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().count("\n") == 0 and "unknown group" in unknown.stderr
    started = time.monotonic()
    down = run_cli(["explain", "--bootstrap", "127.0.0.1:1", "--group", "g", "--timeout", "3"],
                   timeout=120)
    assert down.returncode == 2
    assert "cannot reach the cluster at 127.0.0.1:1" in down.stderr
    assert down.stderr.strip().count("\n") == 0
    assert time.monotonic() - started < 60


def test_simulate_json_as_a_command() -> None:
    """simulate --json prints complete assignments and figures for each assignor and step."""
    proc = run_cli(
        ["simulate", "--topics", "orders:12,payments:6", "--members", "4", "--subscriptions",
         "orders,payments;orders", "--assignor", "range", "--assignor",
         "cooperative-balanced-sticky", "--churn", "scale-out 2", "--churn", "crash", "--json"],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    figures = {}
    for result in doc["results"]:
        for step in result["steps"]:
            owned = [(t, p) for by in step["assignment"].values() for t, ps in by.items()
                     for p in ps]
            assert sorted(owned) == sorted(set(owned)) and len(owned) == 18
        figures[result["assignor"]] = [s["count_imbalance"] for s in result["steps"]]
    assert set(figures) == {"range", "cooperative-balanced-sticky"}
    assert max(figures["cooperative-balanced-sticky"]) <= max(figures["range"])
