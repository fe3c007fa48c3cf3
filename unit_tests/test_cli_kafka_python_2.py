"""On kafka-python 2.x every command works or says in one line that it needs kafka-python 3.

Runs where kafka-python 2.x is installed: ``make unit-kafka-python-2`` runs it in venvs holding
2.2 and 2.3 (the checkout through ``PYTHONPATH``); on kafka-python 3 it is skipped.
"""

from __future__ import annotations

from pathlib import Path

import kafka
import pytest

from kafka_assignors.cli import main

pytestmark = pytest.mark.skipif(
    not kafka.__version__.startswith("2."),
    reason="checks kafka-python 2.x (make unit-kafka-python-2 runs it there)",
)

B = ["--bootstrap", "127.0.0.1:9"]
NEEDS_3 = [
    ["simulate", "--topics", "a:4", "--members", "2"],
    ["explain", "--group", "g", *B],
    ["demo", *B, "--no-report"],
    ["profile", "--topic", "t", *B],
    ["evaluate"],
    ["analyze", "--topic", "t", *B],
    ["sizing", "--target", "5M", "--measure", *B],
]


@pytest.mark.parametrize("argv", NEEDS_3, ids=[" ".join(a) for a in NEEDS_3])
def test_commands_on_kafka_python_3_internals_say_so(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The command stops at once with one line naming kafka-python 3 and the pip install."""
    assert main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "needs kafka-python 3" in lines[0] and "pip install 'kafka-python>=3,<4'" in lines[0]
    assert captured.out == ""


def test_sizing_from_given_rates_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sizing with the rates given needs no client at all: it answers on 2.x too."""
    out = tmp_path / "sizing.json"
    assert main(["sizing", "--target", "5M", "--producer-rate", "1M", "--consumer-rate", "1M",
                 "--out", str(out)]) == 0
    assert "Partitions needed: 5" in capsys.readouterr().out and out.exists()
