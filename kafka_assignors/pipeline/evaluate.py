"""``evaluate``: every scenario of a grid under every assignor, in parallel on Spark.

The driver expands the grid into scenarios (plain data) and deals the
(scenario, assignor) tasks into slices; Spark runs one slice per partition of
``spark.range(slices)`` through ``mapInArrow`` on its executors (the DataFrame API,
so the same job runs on a classic session and on Spark Connect), and each task runs
the real assignor code through :mod:`kafka_assignors.simulator`.  One output row
per rebalance step; written as Parquet, with the CPU seconds each step took in a
column that the summary sums (no accumulator: Connect has none).
"""

from __future__ import annotations

import pickle
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
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
#: Written after the step columns: CPU seconds the simulation of the step took (all rounds,
#: wire encoding included), which does not depend on what else the machine runs.
CPU_COLUMN = ("cpu_seconds", "double")
#: Rows per Arrow batch a task hands back to Spark.
BATCH_ROWS = 2_000
ARROW_TYPES = {"string": "string", "int": "int32", "double": "float64"}


@dataclass(frozen=True, slots=True)
class Summary:
    output: Path | str
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


def columns() -> list[tuple[str, str]]:
    return [(t, "string") for t in TAGS] + list(STEP_COLUMNS) + [CPU_COLUMN]


def schema_ddl() -> str:
    return ", ".join(f"`{name}` {kind}" for name, kind in columns())


def run_task(task: tuple[Scenario, str]) -> Iterator[tuple[Any, ...]]:
    """All steps of one scenario under one assignor, as rows (runs on an executor)."""
    scenario, assignor = task
    tags = tuple(scenario.tags.get(t, "") for t in TAGS)
    started = time.process_time()
    for step in simulate(scenario, assignor):
        row = step.row()
        row["scenario"], row["assignor"] = scenario.name, assignor
        now = time.process_time()
        yield (*tags, *(row[name] for name, _ in STEP_COLUMNS), now - started)
        started = now


class SliceRunner:
    """The ``mapInArrow`` function: runs the slices whose numbers arrive (one per partition).

    The slices travel inside this object (pickled and compressed, so a task unpacks only
    its own); a class of this package, which the session ships to the executors.
    """

    def __init__(self, slices: Sequence[Sequence[tuple[Scenario, str]]]) -> None:
        self.packed = [zlib.compress(pickle.dumps(list(s)), 1) for s in slices]

    def __call__(self, batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = pa.schema([(n, getattr(pa, ARROW_TYPES[k])()) for n, k in columns()])
        names = [n for n, _ in columns()]
        for batch in batches:
            for number in batch.column(0).to_pylist():
                rows: list[tuple[Any, ...]] = []
                for task in pickle.loads(zlib.decompress(self.packed[number])):
                    rows.extend(run_task(task))
                    if len(rows) >= BATCH_ROWS:
                        yield _batch(pa, schema, names, rows)
                        rows = []
                if rows:
                    yield _batch(pa, schema, names, rows)


def _batch(pa: Any, schema: Any, names: list[str], rows: list[tuple[Any, ...]]) -> Any:
    return pa.RecordBatch.from_arrays(
        [pa.array([r[i] for r in rows], type=schema.field(i).type) for i in range(len(names))],
        schema=schema,
    )


def evaluate(
    spark: Any,
    scenarios: Sequence[Scenario],
    assignors: Sequence[str],
    output: str | Path,
    *,
    slices: int | None = None,
) -> Summary:
    """Simulate every scenario under every assignor and write ``output`` (Parquet).

    ``spark`` is a :class:`~kafka_assignors.pipeline.session.Session` or a SparkSession
    (classic or Connect).
    """
    from .session import Session

    session = spark if isinstance(spark, Session) else Session.wrap(spark)
    if not scenarios or not assignors:
        raise ValueError("evaluate needs at least one scenario and one assignor")
    for name in assignors:
        resolve_assignor(name)  # fail here, before Spark starts the job
    tasks = [(s, a) for s in scenarios for a in assignors]
    cores = (
        session.spark.sparkContext.defaultParallelism if session.mode != "connect" else 8
    )
    # enough slices for a steady progress count and no long straggler at the end
    n = slices or min(len(tasks), max(cores * 8, len(tasks) // 10))
    # deal the tasks out like cards so each slice gets a fair share of the big scenarios
    tasks.sort(key=lambda t: -t[0].steps * sum(t[0].topics.values()))
    dealt = [tasks[i::n] for i in range(n)]
    target = session.output_path(output)
    started = time.perf_counter()
    frame = session.spark.range(0, n, 1, n).mapInArrow(SliceRunner(dealt), schema_ddl())
    with session.progress("evaluate"):
        frame.write.mode("overwrite").parquet(target)
    seconds = time.perf_counter() - started
    rows, errors, cpu = read_totals(session, target)
    out: Path | str = target if "://" in target else Path(output)
    return Summary(out, len(scenarios), len(assignors), rows, errors, seconds, cpu)


def read_totals(session: Any, output: str) -> tuple[int, int, float]:
    """(rows, rows with an error, CPU seconds) of a written result."""
    if session.mode == "local" and "://" not in output:
        # local: read two small columns in the driver (no Spark job)
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        table = pq.read_table(output, columns=["error", CPU_COLUMN[0]])
        errors = table.column("error")
        cpu = pc.sum(table.column(CPU_COLUMN[0])).as_py() or 0.0
        return len(errors), len(errors) - errors.null_count, float(cpu)
    row = (
        session.spark.read.parquet(output)
        .selectExpr("count(*)", "count(error)", f"coalesce(sum({CPU_COLUMN[0]}), 0D)")
        .first()
    )
    return int(row[0]), int(row[1]), float(row[2])
