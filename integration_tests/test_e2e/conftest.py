"""Options of the end-to-end scenarios.

``--soak`` runs the chaos scenario for longer (more membership events, more traffic);
``--chaos-seed N`` replays another seed. This conftest sits in a ``test_*`` directory so
that pytest loads it at start-up (it does so for ``test*`` subdirectories of the paths
given on the command line): ``pytest integration_tests --soak`` and ``make test
PYTEST_ARGS=--soak`` both work. The same switches exist as environment variables,
``KAFKA_ASSIGNORS_SOAK=1`` and ``KAFKA_ASSIGNORS_CHAOS_SEED=N``.

The ``e2e_summary`` fixture keeps one-line results (the chaos run's, the triggers') and
this conftest prints them in their own section at the end of the terminal report, passing
or failing, whatever the capture and ``-r`` options: ``make test`` shows them.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

_SUMMARIES = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-assignors end-to-end")
    group.addoption(
        "--soak",
        action="store_true",
        default=os.environ.get("KAFKA_ASSIGNORS_SOAK", "") not in ("", "0"),
        help="run the chaos scenario as a long soak (env KAFKA_ASSIGNORS_SOAK=1)",
    )
    group.addoption(
        "--chaos-seed",
        type=int,
        default=int(os.environ.get("KAFKA_ASSIGNORS_CHAOS_SEED", "20240604")),
        help="seed of the chaos scenario's random events (env KAFKA_ASSIGNORS_CHAOS_SEED)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A soak outlasts the suite's per-test timeout: give the chaos test an hour."""
    if not config.getoption("--soak"):
        return
    for item in items:
        if item.nodeid.startswith("integration_tests/test_e2e/test_chaos.py"):
            item.add_marker(pytest.mark.timeout(3600))


@pytest.fixture
def e2e_summary(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """``e2e_summary(line)``: print the line (seen with ``-s``) and keep it for the
    end-of-run section "kafka-assignors end-to-end summaries"."""
    lines = request.config.stash.setdefault(_SUMMARIES, [])

    def add(line: str) -> None:
        line = line.strip()
        print(f"\n{line}")
        lines.append(f"{request.node.name}: {line}")

    return add


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = terminalreporter.config.stash.get(_SUMMARIES, [])
    if lines:
        terminalreporter.write_sep("=", "kafka-assignors end-to-end summaries")
        for line in lines:
            terminalreporter.write_line(line)
