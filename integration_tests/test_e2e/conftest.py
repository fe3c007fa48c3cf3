"""Options of the end-to-end scenarios.

``--soak`` runs the chaos scenario for longer (more membership events, more traffic);
``--chaos-seed N`` replays another seed. This conftest sits in a ``test_*`` directory so
that pytest loads it at start-up (it does so for ``test*`` subdirectories of the paths
given on the command line): ``pytest integration_tests --soak`` and ``make test
PYTEST_ARGS=--soak`` both work. The same switches exist as environment variables,
``KAFKA_ASSIGNORS_SOAK=1`` and ``KAFKA_ASSIGNORS_CHAOS_SEED=N``.
"""

from __future__ import annotations

import os

import pytest


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
