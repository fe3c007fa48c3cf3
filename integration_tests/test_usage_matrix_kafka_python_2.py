"""The usage matrix on kafka-python 2.3.3 (integration_tests/usage_matrix): every way
kafka-python's docs and users consume, eager (2.x has no cooperative protocol), with our
BalancedStickyAssignor beside kafka-python 2.3.3's range alone, on the same broker and
workload at the same moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .usage_matrix import kafka_python_2
from .usage_matrix.report import write
from .usage_matrix.runner import run_matrix, summary


@pytest.mark.timeout(1200)
def test_ours_is_never_worse_than_kafka_python_2_alone(kafka_broker: Any, tmp_path: Path) -> None:
    """In every eager cell on kafka-python 2.3.3, our assignor raises no more exceptions,
    expels, loses and (on clean rebalances) re-reads no more records, and settles no later
    (within the stated tolerance) than kafka-python 2.3.3's range."""
    client = kafka_python_2.client()
    broker_log = kafka_broker.cluster.logs if kafka_broker.cluster is not None else None
    pairs = run_matrix(kafka_broker.bootstrap, client, protocols=("eager",),
                       broker_log=broker_log)
    meta = {"client": client.name, **client.describe()}
    _, md_path = write(pairs, meta, tmp_path, "usage_matrix_kafka_python_2")
    print(f"usage matrix (kafka-python {client.version}): {summary(pairs)}; {md_path}")
    failures = [f"{p.cell.key} ({p.protocol}): {'; '.join(p.worse)}\n"
                + "\n".join(f"[{side}]\n{tail}" for side, tail in p.logs.items())
                for p in pairs if p.worse]
    assert not failures, (f"ours worse than kafka-python 2.3.3 alone (results: {md_path}):\n"
                          + "\n\n".join(failures))
