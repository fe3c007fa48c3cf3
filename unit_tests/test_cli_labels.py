"""What the command line prints says truly how each input is known, in one unit throughout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_assignors.cli import main

RATES = ["--target", "5M", "--producer-rate", "1M", "--consumer-rate", "500k"]


def test_sizing_says_headroom_and_growth_are_assumed_unless_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not given: 'assumed' (text and JSON); given: 'given: --headroom'."""
    out = tmp_path / "s.json"
    assert main(["sizing", *RATES, "--out", str(out)]) == 0
    assert "headroom: 1.5x (assumed: the default, 1.5x; --headroom sets it)" in (
        capsys.readouterr().out
    )
    kinds = {i["name"]: i["kind"] for i in json.loads(out.read_text())["inputs"]}
    assert kinds["headroom"] == "assumed"
    assert main(["sizing", *RATES, "--headroom", "2", "--out", str(out)]) == 0
    assert "headroom: 2x (given: --headroom)" in capsys.readouterr().out
    kinds = {i["name"]: i["kind"] for i in json.loads(out.read_text())["inputs"]}
    assert kinds["headroom"] == "given"


def test_simulate_times_are_milliseconds_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The text's 'ms' column and the JSON's 'ms' key hold the same milliseconds."""
    argv = ["simulate", "--topics", "a:6", "--members", "2", "--assignor", "range"]
    assert main([*argv, "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["results"][0]["steps"]
    assert "seconds" not in steps[0] and steps[0]["ms"] >= 0
    assert main(argv) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "spread" in line)
    assert header.split()[-1] == "ms"
