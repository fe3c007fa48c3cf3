"""``evaluate``: every scenario of a grid under every assignor, in parallel on Spark.

The driver expands the grid into scenarios (plain data), Spark spreads
(scenario, assignor) tasks over its executors, and each task runs the real
assignor code through :mod:`kafka_assignors.simulator`.  One output row per
rebalance step; written as Parquet.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..simulator import Scenario, resolve_assignor, simulate

#: The grid coordinates every row carries (see simulator.grid).
TAGS = ("cluster", "consumers", "subscription", "weights", "racks", "static", "churn", "seed")
#: (column, Spark SQL type) of each step row after the tags.
STEP_COLUMNS = (
    ("scenario", "string"),
    ("assignor", "string"),
    ("step", "int"),
    ("kind", "string"),
    ("label", "string"),
    ("members", "int"),
    ("partitions", "int"),
    ("rounds", "int"),
    ("seconds", "double"),
    ("count_imbalance", "int"),
    ("topic_spread", "int"),
    ("load_imbalance", "double"),
    ("moved", "int"),
    ("moved_weight", "double"),
    ("moved_from_stayers", "int"),
    ("rack_locality", "double"),
    ("copartition_violations", "int"),
    ("idle_members", "int"),
    ("unassigned", "int"),
    ("duplicated", "int"),
    ("error", "string"),
)


@dataclass(frozen=True, slots=True)
class Summary:
    output: Path
    scenarios: int
    assignors: int
    steps: int
    errors: int
    seconds: float
    #: CPU seconds the executors' Python spent simulating (independent of machine load).
    cpu_seconds: float = 0.0

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0


def schema_ddl() -> str:
    cols = [(t, "string") for t in TAGS] + list(STEP_COLUMNS)
    return ", ".join(f"`{name}` {kind}" for name, kind in cols)


def run_task(task: tuple[Scenario, str], cpu: Any = None) -> Iterator[tuple[Any, ...]]:
    """All steps of one scenario under one assignor, as rows (runs on an executor).

    ``cpu``, a Spark accumulator, collects the CPU time spent.
    """
    scenario, assignor = task
    tags = tuple(scenario.tags.get(t, "") for t in TAGS)
    started = time.process_time()
    for step in simulate(scenario, assignor):
        row = step.row()
        row["scenario"], row["assignor"] = scenario.name, assignor
        yield tags + tuple(row[name] for name, _ in STEP_COLUMNS)
    if cpu is not None:
        cpu.add(time.process_time() - started)


def evaluate(
    spark: Any,
    scenarios: Sequence[Scenario],
    assignors: Sequence[str],
    output: str | Path,
    *,
    slices: int | None = None,
) -> Summary:
    """Simulate every scenario under every assignor and write ``output`` (Parquet)."""
    from .session import progress

    if not scenarios or not assignors:
        raise ValueError("evaluate needs at least one scenario and one assignor")
    for name in assignors:
        resolve_assignor(name)  # fail here, before Spark starts the job
    tasks = [(s, a) for s in scenarios for a in assignors]
    sc = spark.sparkContext
    # enough slices for a steady progress count and no long straggler at the end
    n = slices or min(len(tasks), max(sc.defaultParallelism * 8, len(tasks) // 10))
    # parallelize() cuts the list into contiguous slices: deal the tasks out like
    # cards so each slice gets a fair share of the big scenarios
    tasks.sort(key=lambda t: -t[0].steps * sum(t[0].topics.values()))
    dealt = [t for i in range(n) for t in tasks[i::n]]
    started = time.perf_counter()
    cpu = sc.accumulator(0.0)
    rows = sc.parallelize(dealt, n).flatMap(lambda task: run_task(task, cpu))
    frame = spark.createDataFrame(rows, schema=schema_ddl())
    with progress(spark, "evaluate"):
        frame.write.mode("overwrite").parquet(str(output))
    seconds = time.perf_counter() - started
    return Summary(
        Path(output),
        len(scenarios),
        len(assignors),
        *count_rows(spark, output),
        seconds,
        float(cpu.value),
    )


def count_rows(spark: Any, output: str | Path) -> tuple[int, int]:
    """(rows, rows with an error) of a written result."""
    if "://" not in str(output):  # local: read the small error column in the driver
        import pyarrow.parquet as pq

        errors = pq.read_table(str(output), columns=["error"]).column("error")
        return len(errors), len(errors) - errors.null_count
    row = spark.read.parquet(str(output)).selectExpr("count(*)", "count(error)").first()
    return int(row[0]), int(row[1])
