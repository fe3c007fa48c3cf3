"""How a parallel run (``pytest -n N``, pytest-xdist) spreads the integration tests.

Work units. Every test is a unit of its own, except tests that must run in one worker, one
after the other, which form a group (each worker writes the groups of its collection to the
run directory, ``groups.json``; the controller's scheduler reads it):

* ``usage-matrix``: the usage matrices. Their judge compares timings of two clients run at the
  same moment; each already runs 8 pairs at once, so two matrices at once would be 16 and the
  machine's stall, not the client, would decide. One after the other, never two at once.
* ``cluster``: the tests of the 3-broker cluster (``kafka_cluster``): they stop, pause and
  restart its brokers, so they cannot share it at the same time; one cluster per run.
* ``spark``: the pipeline's tests on a Spark session in the test process (one JVM, shared by
  ``getOrCreate``) and on the Spark servers (``spark_standalone``, ``spark_connect``).
* ``compat``: the compatibility cells (one broker per other Kafka version, started together).
* a file whose tests share a module-scoped fixture (e.g. a broker of its own) is one unit.

Everything else (``kafka_broker``, ``make_topic``, ``make_group``) shares the run's single
broker (``shared_broker.py``) with per-test topics and groups, in any worker, at any time.

Order. Units are handed out longest first (the expected seconds of each test, from
``durations.json``, else :data:`DEFAULT_S`; a group's is the sum of its tests'), one at a time,
to the worker that asks: a worker holds the unit it runs and the next one only (xdist runs a
test once it knows the next), so nothing long waits behind something long.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DURATIONS = HERE / "durations.json"
#: expected seconds of an integration test not in durations.json
DEFAULT_S = 20.0
#: a worker busy for longer than this gets the shortest unit as its next one
SHORT_S = 45.0

#: node id prefixes (from the repository root) whose tests form one serial group
FILE_GROUPS = {
    "integration_tests/test_usage_matrix_": "usage-matrix",
    "integration_tests/test_compat/": "compat",
    # both measure throughput through kafka-assignors-measure-* topics of the shared broker, and
    # the sizing test checks that none is left: not at the same time as the demo's
    "integration_tests/test_pipeline_sizing.py": "measure-topics",
    "integration_tests/test_cli.py::test_demo_short": "measure-topics",
    # the other judges that compare timings side by side (ours beside the client alone): one
    # at a time, beside the rest of the run but not beside each other (chaos is one of the
    # cluster's tests: that group already runs one at a time)
    "integration_tests/test_e2e/test_migration.py": "timing-sensitive",
    "integration_tests/test_kafka_python_runtime_live.py": "timing-sensitive",
    "integration_tests/test_confluent_bridge.py": "timing-sensitive",
    "integration_tests/test_aiokafka_cooperative_live.py": "timing-sensitive",
}
#: fixtures whose tests form one serial group (the fixture is then started once per run)
FIXTURE_GROUPS = {
    "kafka_cluster": "cluster",
    "spark_standalone": "spark",
    "spark_connect": "spark",
    "spark": "spark",
    "broker_pool": "compat",
}
#: fixtures shared by every worker (or per worker and cheap): no group needed
SHAREABLE = {"kafka_broker", "tmp_path_factory", "pytestconfig", "worker_id", "testrun_uid",
             "record_testsuite_property", "_session_faker"}


def group_of(item: pytest.Item) -> str | None:
    """The serial group of a test, None for a test that may run anywhere at any time."""
    path = item.nodeid.split("::", 1)[0]
    for prefix, group in FILE_GROUPS.items():
        if path.startswith(prefix):
            return group
    names = getattr(item, "fixturenames", ())
    for name in names:
        if name in FIXTURE_GROUPS:
            return FIXTURE_GROUPS[name]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        for name, defs in info.name2fixturedefs.items():
            if name in SHAREABLE or not defs:
                continue
            scope = defs[-1].scope
            if scope in ("module", "class", "package"):
                return path
            if scope == "session":
                return str(name)
    return None


GROUPS_FILE = "groups.json"


def write_groups(run_dir: Path, items: Iterable[pytest.Item]) -> None:
    """A worker's collection: each grouped test's group, for the controller's scheduler (it
    sees node ids only). Written atomically; every worker writes the same."""
    groups = {item.nodeid: g for item in items if (g := group_of(item)) is not None}
    partial = run_dir / f"{GROUPS_FILE}.{os.getpid()}"
    partial.write_text(json.dumps(groups))
    os.replace(partial, run_dir / GROUPS_FILE)


def read_groups(run_dir: Path | None) -> dict[str, str]:
    if run_dir is None:
        return {}
    try:
        return {str(k): str(v) for k, v in json.loads((run_dir / GROUPS_FILE).read_text()).items()}
    except (OSError, ValueError):
        return {}


def expected_seconds() -> dict[str, float]:
    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.get("tests", {}).items()}


def make_scheduler(config: pytest.Config, log: Any, run_dir: Path) -> Any:
    """xdist's LoadScopeScheduling with our units (a group or a test), longest first."""
    from xdist.scheduler import LoadScopeScheduling

    seconds = expected_seconds()

    class LongestFirst(LoadScopeScheduling):  # type: ignore[misc]
        _holding = False
        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                self._groups = read_groups(run_dir)
            return self._groups.get(nodeid, nodeid)

        def schedule(self) -> None:
            if self.collection is not None:
                super().schedule()
                return
            self._holding = True  # let xdist build the work queue, then order it
            try:
                super().schedule()
            finally:
                self._holding = False
            weight = {scope: sum(seconds.get(n, _default(n)) for n in unit)
                      for scope, unit in self.workqueue.items()}
            units = sorted(self.workqueue.items(), key=lambda su: -weight[su[0]])
            self.workqueue.clear()
            self.workqueue.update(units)
            for _ in range(2):  # one unit each, then a second one each (see _give)
                for node in self.nodes:
                    if self.workqueue and self._pending(node) < 2:
                        self._give(node)
            if not self.workqueue:
                for node in self.nodes:
                    node.shutdown()

        def _pending(self, node: Any) -> int:
            return int(self._pending_of(self.assigned_work[node]))

        def _give(self, node: Any) -> None:
            """The next unit (longest first), or the shortest when the node is busy for a
            while yet: xdist holds the next unit in the worker until the current test ends,
            so something long must not wait there behind something long."""
            busy = sum(seconds.get(n, _default(n)) for unit in self.assigned_work[node].values()
                       for n, done in unit.items() if not done)
            if busy > SHORT_S and len(self.workqueue) > 1:
                self.workqueue.move_to_end(next(reversed(self.workqueue)), last=False)
            self._assign_work_unit(node)

        def _assign_work_unit(self, node: Any) -> None:
            if not self._holding:
                super()._assign_work_unit(node)

        def _reschedule(self, node: Any) -> None:
            if self._holding or node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            # xdist runs a test once the worker knows the next: keep two tests there, no more
            while self.workqueue and self._pending(node) < 2:
                self._give(node)

    config.option.loadscopereorder = False  # LongestFirst orders the work queue itself
    return LongestFirst(config, log)


def _default(nodeid: str) -> float:
    return DEFAULT_S if nodeid.startswith("integration_tests/") else 0.5


def write_durations(path: Path, reports: Sequence[tuple[str, float]]) -> None:
    """Write the run's test durations (setup + call + teardown, by node id) for the order."""
    tests: dict[str, float] = {}
    for nodeid, seconds in reports:
        tests[nodeid] = round(tests.get(nodeid, 0.0) + seconds, 1)
    note = ("expected seconds per integration test, for the parallel run's order only "
            "(scheduling.py), written by a run with KAFKA_ASSIGNORS_WRITE_DURATIONS set")
    path.write_text(json.dumps({"note": note, "tests": dict(sorted(tests.items()))},
                               indent=1) + "\n")


class LoadSampler:
    """The machine's 1-minute load average, sampled every few seconds for the whole run, so
    that a timing-sensitive test's report can say how loaded the machine was meanwhile."""

    def __init__(self, every: float = 5.0) -> None:
        self.samples: list[tuple[float, float]] = []  # (epoch time, 1-minute load)
        self._every = every
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="load-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                self.samples.append((time.time(), os.getloadavg()[0]))
            if self._stop.wait(self._every):
                return

    def between(self, start: float, stop: float) -> list[float]:
        with self._lock:
            inside = [load for t, load in self.samples if start <= t <= stop]
            before = [load for t, load in self.samples if t < start]
        return ([before[-1]] if before else []) + inside

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)


def describe(loads: Sequence[float]) -> str:
    if not loads:
        return "no sample"
    return (f"1-min load {loads[0]:.1f} at start, mean {sum(loads) / len(loads):.1f}, "
            f"max {max(loads):.1f}")
