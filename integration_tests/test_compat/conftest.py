"""Fixtures of the compatibility matrix: a broker per Kafka version, started in parallel.

``kafka_broker`` is overridden here: a test parametrized with ``broker_version`` gets a
single broker of that Apache Kafka version (our image, built once per version by
docker/build-image.sh and cached like the default one); every other test gets the suite's
own broker. The brokers of all the versions the session's tests need start together, on
first use, and live for the session.

Hooks: the default versions' cells are deselected unless KAFKA_ASSIGNORS_COMPAT_FULL=1
(the rest of the suite already runs those tests there); with KAFKA_ASSIGNORS_COMPAT_RESULTS
set, each cell's outcome is written to that JSON file at the end (``table.py`` reads it).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.embedded import KafkaCluster, start_single_broker

from ..conftest import BrokerHandle, byo_bootstrap
from .matrix import DEFAULT_KAFKA, RESULTS_ENV, cell_of, default_version, full_run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the default versions' cells (already covered by the suite) and the
    full-only ones, unless this is a full run."""
    if full_run():
        return
    keep: list[pytest.Item]
    drop: list[pytest.Item]
    keep, drop = [], []
    for item in items:
        cell = cell_of(item)
        leave_out = cell is not None and (cell[1] == default_version(cell[0])
                                          or item.get_closest_marker("compat_full_only"))
        (drop if leave_out else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class BrokerPool:
    """One single-broker cluster per Kafka version, all started at once when first asked."""

    def __init__(self, versions: set[str]) -> None:
        self.versions = versions
        self._clusters: dict[str, KafkaCluster] = {}
        self._errors: dict[str, str] = {}
        self._lock = threading.Lock()
        self._started = False

    def _start(self, version: str) -> None:
        t0 = time.monotonic()
        try:
            cluster = start_single_broker(version=version)
        except Exception as exc:  # reported to each test of that version
            self._errors[version] = f"{type(exc).__name__}: {exc}"
            return
        self._clusters[version] = cluster
        print(f"\n[compat] Kafka {version} ready in {time.monotonic() - t0:.1f} s")

    def get(self, version: str) -> KafkaCluster:
        with self._lock:
            if not self._started:
                self._started = True
                wanted = sorted(self.versions | {version})
                with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
                    list(pool.map(self._start, wanted))
            elif version not in self._clusters and version not in self._errors:
                self._start(version)
        if version in self._errors:
            pytest.fail(f"Kafka {version} broker did not start: {self._errors[version]}",
                        pytrace=False)
        return self._clusters[version]

    def close(self) -> None:
        for cluster in self._clusters.values():
            with contextlib.suppress(Exception):
                cluster.close()


@pytest.fixture(scope="session")
def broker_pool(request: pytest.FixtureRequest) -> Iterator[BrokerPool]:
    """The brokers of every non-default Kafka version this session's matrix tests use."""
    versions = {
        str(item.callspec.params["broker_version"])
        for item in request.session.items
        if hasattr(item, "callspec") and "broker_version" in item.callspec.params
    }
    pool = BrokerPool(versions - {DEFAULT_KAFKA})
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def broker_version() -> str:
    """The Kafka version of the test's broker (tests parametrize it; default: the suite's)."""
    return DEFAULT_KAFKA


@pytest.fixture
def kafka_broker(
    kafka_broker: BrokerHandle, broker_version: str, broker_pool: BrokerPool
) -> BrokerHandle:
    """A broker of ``broker_version``: the suite's own (session) broker for the default
    version, else the pool's (a bring-your-own cluster is one version: the others skip)."""
    if broker_version == DEFAULT_KAFKA:
        return kafka_broker
    if byo_bootstrap() is not None:
        pytest.skip(f"BOOTSTRAP_SERVERS is set: no Kafka {broker_version} broker is started")
    cluster = broker_pool.get(broker_version)
    return BrokerHandle(cluster.bootstrap, cluster)


# ---- results --------------------------------------------------------------------------------
_RESULTS = pytest.StashKey[dict[str, dict[str, Any]]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    cell = cell_of(item)
    if cell is not None:
        results = item.config.stash.setdefault(_RESULTS, {})
        entry = results.setdefault(item.nodeid, {
            "component": cell[0], "version": cell[1], "column": cell[2],
            "test": item.nodeid, "outcome": "passed", "seconds": 0.0,
        })
        entry["seconds"] = round(entry["seconds"] + report.duration, 1)
        if report.failed:
            entry["outcome"] = "failed"
        elif report.skipped and entry["outcome"] == "passed":
            entry["outcome"] = "skipped"
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get(RESULTS_ENV, "").strip()
    results = session.config.stash.get(_RESULTS, {})
    if path and results:
        Path(path).write_text(json.dumps(sorted(results.values(), key=lambda r: r["test"]),
                                         indent=1) + "\n")
