"""The command line against the real broker: demo (short, with the pipeline), explain on live
groups, simulate."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.cli import main

from .browser import check_report

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


def test_demo_short_runs_the_groups_then_the_pipeline_and_cleans_up(
    kafka_broker: Any, tmp_path: Path
) -> None:
    """`demo --short` (the README's main command) on the session broker: live lines, the
    summary, no rebalance that failed to settle, then profile -> evaluate -> sizing ->
    report (analyze) with the report's path printed and its PNGs written; the demo's
    consumer groups and topics are gone afterwards."""
    started = time.monotonic()
    report_dir = tmp_path / "demo-report"
    proc = run_cli(
        ["demo", "--short", "--bootstrap", kafka_broker.bootstrap, "--dwell", "1",
         "--timeout", "45", "--rate", "60", "--report-dir", str(report_dir),
         "--max-time", "840"],
        timeout=900,
    )
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}"
    assert "live group [range]" in out and "live group [cooperative-balanced-sticky]" in out
    assert "live   member m0" in out
    assert "summary (per assignor" in out
    table = out[out.index("summary (per assignor"):]
    assert "range" in table and "cooperative-balanced-sticky" in table and "peak lag" in table
    # the members' own rebalance metrics: live, in the second table and in the report
    assert re.search(r"live   metrics: rebalances=[1-9]\d* failed=\d+ latency avg/max=", out)
    metrics_table = out[out.index("rebalance metrics (the consumers' own"):]
    ours = next(line for line in metrics_table.splitlines()
                if line.startswith("cooperative-balanced-sticky"))
    assert int(ours.split()[1]) >= 4  # start, scale up, scale down, kill: one rebalance each
    live = json.loads((report_dir / "live_metrics.json").read_text())
    assert [g["label"] for g in live["groups"]] == ["range", "cooperative-balanced-sticky"]
    assert live["groups"][1]["metrics"]["rebalances"] == int(ours.split()[1])
    # every rebalance reached a stable group (a timeout would be a "note [...]" line)
    assert "note [" not in out and "did not reach a stable group" not in proc.stderr
    # the pipeline ran and the printed path is the report it wrote
    report = (report_dir / "report" / "report.html").resolve()
    assert f"HTML report: {report}\n" in out, out[-3000:]
    page = report.read_text()
    for png in ("imbalance", "movement", "tradeoff", "partition_load", "consumer_load"):
        path = report_dir / "report" / f"{png}.png"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert path.stat().st_size > 5_000 and f'src="{png}.png"' in page, png
    assert "Recommendation: " in page
    assert '<section id="sizing">' in page and "partitions needed = ceil(max(" in page
    assert "<pre" not in page and (report_dir / "report" / "sizing.json").exists()
    sizing = json.loads((report_dir / "sizing.json").read_text())
    assert sizing["unit"] == "messages/s" and sizing["target"] > 0
    # Tp and Tc measured on the demo's broker; Tc at the members' pace (15 records per poll,
    # 100 ms after each): at most 150 records/s, however loaded the machine
    kinds = {i["name"]: i["kind"] for i in sizing["inputs"] if i["used"]}
    assert kinds["target throughput (Tt)"] == "measured"
    assert kinds["producer throughput per partition (Tp)"] == "measured"
    assert kinds["consumer throughput per partition (Tc)"] == "measured"
    assert 0 < sizing["consumer_per_partition"] <= 150
    tc = next(i for i in sizing["inputs"] if i["name"].startswith("consumer throughput"))
    assert tc["detail"].startswith("one kafka-python consumer paced like the demo's members "
                                   "(max_poll_records 15, 100 ms of processing after each poll)")
    assert "100 ms of processing after each poll" in page
    assert "assumed, not measured" not in page and "Warning" not in page
    # in a real browser: no console error, every image loads, every section of the contents
    # is there, no JSON printed; the screenshot is left beside the report
    seen = check_report(report)
    assert seen.images == 5 and seen.sections[-1] == "Sizing: partitions and consumers"
    assert "Live groups: the consumers' own rebalance metrics" in seen.sections
    assert '<section id="live">' in page
    profile = json.loads((report_dir / "profile" / "profile.json").read_text())
    assert {e["topic"] for e in profile["partitions"]} == set(re.findall(
        r"topics: (demo-orders-\w+) \(8 partitions\), (demo-payments-\w+)", out)[0])
    assert (report_dir / "evaluate" / "steps.parquet").exists()
    # Spark's console output is kept in the log, not shown; our progress lines are shown
    spark_log = (report_dir / "pipeline.log").read_text()
    assert "log4j" in spark_log and "log4j" not in proc.stderr + out
    assert "[kafka-assignors] profile:" in proc.stderr
    # cleanup: the demo's groups and topics are deleted from the (bring-your-own) cluster
    removed = re.search(r"removed consumer groups (\S+), (\S+) and topics", out)
    assert removed is not None, out[-2000:]
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap)
    try:
        groups = {g["group_id"] for g in client.list_groups()}
        topics = set(client.list_topics())
    finally:
        client.close()
    assert not {removed.group(1), removed.group(2)} & groups
    assert not {e["topic"] for e in profile["partitions"]} & topics
    assert "demo finished" in out
    assert time.monotonic() - started < 900


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
            # the member's mode, and its owned partitions and generation for leaders that
            # read only version-0 subscriptions (kafka-python 2.x)
            decoded = member["subscription_user_data"]["decoded"]
            assert decoded["mode"] == "cooperative"
            # (what it owned when it last joined, so possibly fewer than it holds now)
            assert set(decoded["owned"]) <= {topic}
            assert isinstance(decoded["generation"], int)
            # none, so that the group can move online to the consumer protocol
            assert member["assignment_user_data"] is None
        else:
            assert member["subscription_user_data"] is None
    owned = [(t, p) for m in doc["members"] for t, ps in m["assignment"].items() for p in ps]
    assert sorted(owned) == [(topic, p) for p in range(6)]
    views = [v for v in group.members() if v.alive]
    # no assignment names its leader; the members' subscriptions (version 2+, which
    # kafka-python's own range does not send) carry the generation of what they held when
    # they joined: an earlier one than the group's
    assert doc["leader"] is None and doc["leader_source"] is None
    if strategy == OURS and doc["generation_source"] is not None:
        assert doc["generation_source"] == "subscriptions"
        assert 0 < doc["generation"] < views[0].generation == views[1].generation
    elif strategy == OURS:
        # both joined the generation they hold now without one (a first generation cut
        # short by the second member's join leaves both at generation 2 owning nothing)
        assert doc["generation"] is None
    assert doc["count_imbalance"] == 0 and doc["unassigned"] == []
    # the last rebalance's figures: an even split; every partition either moved or was
    # claimed by nobody at the join (a first join, or the second member's arrival)
    last = doc["last_rebalance"]
    assert last["members"] == 2 and last["count_spread"] == 0 and last["topic_spread"] == 0
    assert 0 <= last["moved"] <= 6 and 0 <= last["newly_owned"] <= 6
    text = run_cli(["explain", "--bootstrap", kafka_broker.bootstrap, "--group",
                    group.group_id], timeout=120)
    assert text.returncode == 0 and "partitions per member: max - min = 0" in text.stdout
    assert "last rebalance (members' claims at the join -> what they hold now)" in text.stdout


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
