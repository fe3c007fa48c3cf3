"""Every subcommand given a user's mistake answers in one line naming it, exit 2, no traceback.

The table runs the command line in this process (``kafka_assignors.cli.main``): an exception
escaping it fails the test as a traceback would show one to a user. None of these inputs
reaches a broker, Docker or Spark: each is refused before the command starts its work.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafka_assignors.cli import build_parser, main

NOPE = "/nonexistent/kafka-assignors/nope"
B = ["--bootstrap", "127.0.0.1:9"]

#: (argv, what the one line on stderr must name)
BAD: list[tuple[list[str], str]] = [
    # the command line itself
    (["--log-level", "LOUD", "simulate", "--topics", "a:1"], "--log-level"),
    (["simulate", "--topics", "a:1", "--log-level", "LOUD"], "--log-level"),
    (["nosuchcommand"], "invalid choice"),
    ([], "COMMAND"),
    # simulate
    (["simulate", "--topics", "a:4", "--members", "0"], "--members"),
    (["simulate", "--topics", "a:4", "--members", "-1"], "--members"),
    (["simulate", "--topics", "a:4", "--members", "three"], "--members"),
    (["simulate", "--topics", "a:0"], "--topics"),
    (["simulate", "--topics", "a"], "--topics"),
    (["simulate", "--topics", "a:4", "--weights", "zipf"], "--weights"),
    (["simulate", "--topics", "a:4", "--weights", "zipf:x"], "--weights"),
    (["simulate", "--topics", "a:4", "--weights", "zipf:-1"], "--weights"),
    (["simulate", "--topics", "a:4", "--weights", "hot:2"], "--weights"),
    (["simulate", "--topics", "a:4", "--weights", "pareto:1"], "--weights"),
    (["simulate", "--topics", "a:4", "--racks", "0"], "--racks"),
    (["simulate", "--topics", "a:4", "--seed", "x"], "--seed"),
    (["simulate", "--profile", f"{NOPE}.json"], "--profile"),
    (["simulate", "--file", f"{NOPE}.yaml"], "--file"),
    (["simulate"], "--topics"),
    (["simulate", "--topics", "a:4", "--subscriptions", "b"], "subscription"),
    (["simulate", "--topics", "a:4", "--assignor", "no-such-assignor"], "no-such-assignor"),
    (["simulate", "--topics", "a:4", "--churn", "explode"], "explode"),
    # explain
    (["explain"], "--group"),
    (["explain", "--group", "g", *B, "--timeout", "-1"], "--timeout"),
    (["explain", "--group", "g", *B, "--timeout", "0"], "--timeout"),
    (["explain", "--group", "g", *B, "--timeout", "soon"], "--timeout"),
    (["explain", "--group", "g", "--bootstrap", "host:"], "--bootstrap"),
    (["explain", "--group", "g", "--bootstrap", "h:99999"], "--bootstrap"),
    (["explain", "--group", "g", *B, "--command-config", NOPE], "--command-config"),
    (["explain", "--group", "g", *B, "--ssl-cafile", NOPE], "--ssl-cafile"),
    # demo
    (["demo", "--rate", "0"], "--rate"),
    (["demo", "--timeout", "-1"], "--timeout"),
    (["demo", "--max-time", "0"], "--max-time"),
    (["demo", "--dwell", "-1"], "--dwell"),
    (["demo", "--report-timeout", "0"], "--report-timeout"),
    (["demo", "--bootstrap", "localhost:port"], "--bootstrap"),
    (["demo", "--bootstrap", ":9092"], "--bootstrap"),
    # profile
    (["profile", *B], "--topic"),
    (["profile", "--topic", "t"], "--bootstrap"),
    (["profile", "--topic", "t", "--bootstrap", "x:0"], "--bootstrap"),
    (["profile", "--topic", "t", *B, "--since", "yesterday"], "--since"),
    (["profile", "--topic", "t", *B, "--until", "-1h"], "--until"),
    (["profile", "--topic", "t", *B, "--since", "-1h", "--until", "-2h"], "--since"),
    (["profile", "--topic", "t", *B, "--from-offsets", "first"], "--from-offsets"),
    (["profile", "--topic", "t", *B, "--to-offsets", "[1]"], "--to-offsets"),
    (["profile", "--topic", "t", *B, "--kafka-option", "novalue"], "--kafka-option"),
    (["profile", "--topic", "t", *B, "--conf", "novalue"], "--conf"),
    (["profile", "--topic", "t", *B, "--weight", "heat"], "--weight"),
    # evaluate
    (["evaluate", "--scenarios", f"{NOPE}.yaml"], "--scenarios"),
    (["evaluate", "--profile", f"{NOPE}.json"], "--profile"),
    (["evaluate", "--conf", "=x"], "--conf"),
    # sizing
    (["sizing", "--producer-rate", "1M", "--consumer-rate", "1M"], "--target"),
    (["sizing", "--target", "0", "--producer-rate", "1M", "--consumer-rate", "1M"], "--target"),
    (["sizing", "--target", "-5", "--producer-rate", "1M", "--consumer-rate", "1M"], "--target"),
    (["sizing", "--target", "lots", "--producer-rate", "1M", "--consumer-rate", "1M"], "--target"),
    (["sizing", "--target", "5M", "--producer-rate", "0", "--consumer-rate", "1M"],
     "--producer-rate"),
    (["sizing", "--target", "5M", "--producer-rate", "1M"], "--consumer-rate"),
    (["sizing", "--target", "5M", "--producer-rate", "1M", "--consumer-rate", "1M",
      "--headroom", "0.5"], "--headroom"),
    (["sizing", "--target", "5M", "--producer-rate", "1M", "--consumer-rate", "1M",
      "--growth", "0"], "--growth"),
    (["sizing", "--profile", f"{NOPE}.json", "--producer-rate", "1M", "--consumer-rate", "1M"],
     "--profile"),
    (["sizing", "--target", "5M", "--measure"], "--bootstrap"),
    (["sizing", "--target", "5M", "--measure", *B, "--measure-records", "0"],
     "--measure-records"),
    # report
    (["report", "--evaluate", NOPE], "--evaluate"),
    (["report", "--sizing", f"{NOPE}.json"], "--sizing"),
    (["report", "--profile", f"{NOPE}.json"], "--profile"),
    (["report", "--live-metrics", f"{NOPE}.json"], "--live-metrics"),
    (["report", "--consumers", "0"], "--consumers"),
    (["report", "--out", "r"], "nothing to report"),
    # analyze
    (["analyze", "--topic", "t", *B, "--consumers", "0,2"], "--consumers"),
    (["analyze", "--topic", "t", *B, "--consumers", "two"], "--consumers"),
    (["analyze", "--topic", "t", *B, "--headroom", "0"], "--headroom"),
    (["analyze", "--topic", "t", *B, "--subscriptions", "some"], "--subscriptions"),
    (["analyze", "--topic", "t", *B, "--paced-seconds", "0"], "--paced-seconds"),
    (["analyze", "--topic", "t", *B, "--processing-ms", "-1"], "--processing-ms"),
    (["analyze", "--topic", "t", *B, "--live-metrics", NOPE], "--live-metrics"),
    (["analyze", "--topic", "t", *B, "--producer-rate", "-1"], "--producer-rate"),
]


def _ids() -> list[str]:
    return [" ".join(argv) or "(nothing)" for argv, _ in BAD]


@pytest.mark.parametrize(("argv", "named"), BAD, ids=_ids())
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mistake is refused with exit 2 and one line on stderr that names the argument."""
    monkeypatch.chdir(tmp_path)  # report's defaults (reports/...) do not exist here
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0] and named in lines[0], err
    assert "Traceback" not in err
    assert out == ""


def test_every_subcommand_has_bad_input_rows() -> None:
    """The table covers every subcommand the command line has."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a.choices, dict))
    assert isinstance(subparsers.choices, dict)
    covered = {argv[0] for argv, _ in BAD if argv and not argv[0].startswith("-")}
    assert set(subparsers.choices) <= covered


def test_file_values_are_checked_like_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group file with members: 0 or weights: zipf is refused as the options would be."""
    for body, named in (("members: 0", "members"), ("weights: zipf", "weights"),
                        ("racks: -2", "racks")):
        path = tmp_path / "g.json"
        key, _, value = body.partition(": ")
        path.write_text(f'{{"topics": {{"a": 4}}, "{key}": "{value}"}}')
        assert main(["simulate", "--file", str(path)]) == 2
        err = capsys.readouterr().err
        assert named in err and err.count("\n") == 1, err


@pytest.mark.parametrize("where", ["before", "after"])
def test_log_level_before_or_after_the_subcommand(
    where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--log-level is taken on either side of the subcommand."""
    argv = ["simulate", "--topics", "a:2", "--members", "1", "--assignor", "range"]
    argv = ["--log-level", "debug", *argv] if where == "before" else [*argv, "--log-level", "ERROR"]
    assert main(argv) == 0
    assert "range" in capsys.readouterr().out


def test_python_dash_m_runs_the_command_line() -> None:
    """``python -m kafka_assignors`` is the command; a mistake there is one line too."""
    ok = subprocess.run([sys.executable, "-m", "kafka_assignors", "--version"],
                        capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0 and ok.stdout.startswith("kafka-assignors "), ok
    bad = subprocess.run([sys.executable, "-m", "kafka_assignors", "simulate", "--members", "0"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--members" in bad.stderr, bad.stderr


def test_a_missing_extra_is_named_with_its_pip_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without PyYAML, a YAML group file and the Spark commands name the pip install to run."""
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml -> ModuleNotFoundError
    path = tmp_path / "g.yaml"
    path.write_text("topics: {a: 2}\n")
    assert main(["simulate", "--file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'kafka-assignors[yaml]'" in err and err.count("\n") == 1, err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else real(name, *a))
    assert main(["profile", "--topic", "t", "--bootstrap", "127.0.0.1:9"]) == 1
    err = capsys.readouterr().err
    assert "pip install 'kafka-assignors[spark]'" in err and err.count("\n") == 1, err


def test_files_that_are_not_what_they_claim_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A profile that is not JSON and a grid that is not a mapping: one line, exit 2."""
    bad_profile = tmp_path / "profile.json"
    bad_profile.write_text("{not json")
    bad_grid = tmp_path / "grid.yaml"
    bad_grid.write_text("- just\n- a list\n")
    for argv, named in (
        (["simulate", "--profile", str(bad_profile)], "profile.json"),
        (["sizing", "--profile", str(bad_profile), "--producer-rate", "1M",
          "--consumer-rate", "1M", "--out", str(tmp_path / "s.json")], "profile.json"),
        (["evaluate", "--scenarios", str(bad_grid)], "grid.yaml"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and named in err and "Traceback" not in err, err
