"""What the compatibility matrix runs: which versions, and which cell a test fills.

A cell is (component, version, column). Tests say theirs with the ``compat`` marker,
``@pytest.mark.compat("Kafka broker", "eager")``, and take their version from a parameter,
``broker_version`` or ``client_version`` (``compat_version`` in :func:`cell_of`). To add
rows (another client library, another version), parametrize a test here with more versions,
or mark a new test in this folder; the table (``table.py``) shows whatever was run.

The default versions (the broker image's Kafka, the client libraries installed in the
project's .venv) are what the rest of the suite runs on: ``make test`` deselects their cells
here, and the cells marked FULL_ONLY (time), and ``scripts/compat-matrix.sh``
(KAFKA_ASSIGNORS_COMPAT_FULL=1) runs every cell.
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from kafka_assignors.embedded.image import kafka_version

REPO = Path(__file__).resolve().parents[2]
FULL_ENV = "KAFKA_ASSIGNORS_COMPAT_FULL"  # also run the default versions' cells
RESULTS_ENV = "KAFKA_ASSIGNORS_COMPAT_RESULTS"  # write the run's cells to this JSON file

BROKER = "Kafka broker"
COLUMNS = ("eager", "cooperative", "KIP-848", "jar")
# rows in this order; components not listed here follow, by name
COMPONENTS = ("kafka-python", "confluent-kafka", "aiokafka", BROKER)

DEFAULT_KAFKA = kafka_version()
# classic groups: the last 3.x line, the oldest 4.x and the default (newest) 4.x
KAFKA_CLASSIC = ("3.9.2", "4.0.2", DEFAULT_KAFKA)
# the broker-side assignor (one jar, 4.0.0 api): every 4.x minor
KAFKA_PLUGIN = ("4.0.2", "4.1.2", "4.2.2", "4.3.1", DEFAULT_KAFKA)
# the online classic -> consumer-protocol upgrade: the oldest and newest 4.x
KAFKA_ONLINE_UPGRADE = ("4.0.2", DEFAULT_KAFKA)

# Cells no test fills on purpose: (component, version prefix, column) -> what the table says.
NOT_RUN: dict[tuple[str, str, str], str] = {
    (BROKER, "3.", "KIP-848"): "n/a: early access in 3.9, off by default",
    (BROKER, "3.", "jar"): "n/a: no plugin api before 4.0",
    (BROKER, "4.", "eager"): "not run (oldest and newest 4.x only)",
    (BROKER, "4.", "cooperative"): "not run (oldest and newest 4.x only)",
    ("confluent-kafka", "2.6.", "KIP-848"): "not run: librdkafka's KIP-848 is GA from 2.12",
    ("confluent-kafka", "", "jar"): "see KIP-848 (the broker's jar assigns)",
    ("aiokafka", "", "cooperative"): "n/a: aiokafka has no cooperative protocol",
    ("aiokafka", "", "KIP-848"): "n/a: aiokafka has no consumer protocol",
    ("aiokafka", "", "jar"): "n/a",
    ("kafka-python", "", "KIP-848"): "n/a: kafka-python has no consumer protocol",
    ("kafka-python", "", "jar"): "n/a",
}


# a cell's parameter that only scripts/compat-matrix.sh runs (make test leaves it out: time)
FULL_ONLY = pytest.mark.compat_full_only


def compat(component: str, column: str) -> pytest.MarkDecorator:
    """The marker that files a test under one cell of the table."""
    return pytest.mark.compat(component, column)


def client_floor(package: str) -> str:
    """The oldest version pyproject.toml allows for a client library (its ``>=`` bound)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs.extend(extra)
    for spec in specs:
        name = re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0]
        if name.lower() == package.lower():
            found = re.search(r">=\s*([0-9][0-9.]*)", spec)
            if found:
                parts = found.group(1).split(".")
                return ".".join([*parts, "0", "0"][:3])
    raise LookupError(f"pyproject.toml has no '>=' bound for {package}")


def installed(package: str) -> str:
    """The version of a package in this interpreter (the project's .venv: the newest the
    range allowed when bootstrap installed it)."""
    return metadata.version(package)


def default_version(component: str) -> str:
    """The version the rest of the suite runs this component on."""
    if component == BROKER:
        return DEFAULT_KAFKA
    return installed(component)


def cell_of(item: pytest.Item) -> tuple[str, str, str] | None:
    """(component, version, column) of a matrix test, None for other tests."""
    marker = item.get_closest_marker("compat")
    if marker is None:
        return None
    component, column = marker.args
    params = getattr(item, "callspec", None)
    values = params.params if params is not None else {}
    for name in ("compat_version", "broker_version", "client_version"):
        if name in values:
            return component, str(values[name]), column
    return component, default_version(component), column


def full_run() -> bool:
    return os.environ.get(FULL_ENV, "") not in ("", "0")
