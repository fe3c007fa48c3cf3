"""`kafka-assignors simulate`: group descriptions, and the command's text and JSON output."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kafka_assignors.cli import main
from kafka_assignors.simulate_cli import SimulateError, build, parse_topics


def test_topics_are_parsed_from_text_and_mappings() -> None:
    """'orders:12,payments:6' and {'orders': 12} give partition counts; bad counts are errors."""
    assert parse_topics("orders:12, payments:6,") == {"orders": 12, "payments": 6}
    assert parse_topics({"orders": 12}) == {"orders": 12}
    with pytest.raises(SimulateError):
        parse_topics("orders:0")
    with pytest.raises(SimulateError):
        parse_topics("orders")


def test_explicit_subscriptions_cycle_over_members() -> None:
    """'a,b;a' gives members 0, 2 both topics and members 1, 3 only 'a'."""
    scenario, assignors = build({"topics": "a:4,b:2", "members": 4, "subscriptions": "a,b;a"})
    assert [m.topics for m in scenario.members] == [("a", "b"), ("a",), ("a", "b"), ("a",)]
    assert assignors == ["range", "cooperative-sticky", "cooperative-balanced-sticky"]
    with pytest.raises(SimulateError):
        build({"topics": "a:4", "subscriptions": "a;zzz"})


def test_json_output_has_complete_assignments_per_step(capsys: pytest.CaptureFixture[str]) -> None:
    """Every step of every assignor assigns each partition exactly once."""
    code = main([
        "simulate", "--topics", "orders:12,payments:6", "--members", "4",
        "--subscriptions", "unequal", "--assignor", "range", "--assignor", "balanced-sticky",
        "--churn", "scale-out 2", "--churn", "crash", "--weights", "zipf:1.1", "--json",
    ])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["assignor"] for r in doc["results"]] == ["range", "balanced-sticky"]
    for result in doc["results"]:
        assert [s["label"] for s in result["steps"]] == ["initial", "scale-out 2", "crash"]
        for step in result["steps"]:
            owned = [(t, p) for by in step["assignment"].values() for t, ps in by.items()
                     for p in ps]
            assert len(owned) == len(set(owned)) == 18
            assert step["error"] is None and step["members"] == len(step["assignment"])


def test_text_output_and_a_file_description(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A YAML file describes the group; the text table names each assignor and member."""
    path = tmp_path / "group.yaml"
    path.write_text("topics: {orders: 6}\nmembers: 3\nassignors: [cooperative-sticky]\n")
    assert main(["simulate", "--file", str(path)]) == 0
    out = capsys.readouterr().out
    assert "== cooperative-sticky" in out and "initial" in out
    assert all(f"  c{i} " in out for i in range(3))


def test_errors_exit_non_zero_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown assignor or a missing group description is a one-line error, exit 2."""
    assert main(["simulate", "--topics", "a:3", "--assignor", "nope"]) == 2
    assert "unknown assignor 'nope'" in capsys.readouterr().err
    assert main(["simulate"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_build_reads_a_measured_profile(tmp_path: Path) -> None:
    """A load profile gives the partition counts and weights."""
    profile = {
        "format": "kafka-assignors/load-profile", "version": 1, "weight_metric": "bytes_per_s",
        "partitions": [{"topic": "t", "partition": p, "weight": w} for p, w in enumerate([9, 1])],
    }
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    scenario, _ = build(vars(argparse.Namespace(profile=str(path), members=2)))
    assert dict(scenario.topics) == {"t": 2} and scenario.weights is not None
