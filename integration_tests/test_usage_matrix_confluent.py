"""The usage matrix for confluent-kafka (integration_tests/usage_matrix): every way its docs and
users consume, through our bridge with our eager and cooperative assignors, each beside
a plain confluent-kafka consumer (range / cooperative-sticky) on the same broker and workload at
the same moment; plus a group mixing bridged, kafka-python and aiokafka members."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .usage_matrix import confluent
from .usage_matrix.report import write
from .usage_matrix.runner import run_matrix, summary


@pytest.mark.timeout(1200)
def test_the_bridge_is_never_worse_than_plain_confluent_kafka(
        kafka_broker: Any, tmp_path: Path) -> None:
    """In every cell, bridged consumers raise no more exceptions, expel, lose and (on clean
    rebalances) re-read no more records, and settle no later (within the stated tolerance) than
    plain confluent-kafka consumers; and they read nothing twice on a clean rebalance."""
    client = confluent.client()
    broker_log = kafka_broker.cluster.logs if kafka_broker.cluster is not None else None
    pairs = run_matrix(kafka_broker.bootstrap, client, broker_log=broker_log)
    meta = {"client": client.name, **client.describe()}
    _, md_path = write(pairs, meta, tmp_path, "usage_matrix_confluent_kafka")
    print(f"usage matrix: {summary(pairs)}; {md_path}")
    failures = [f"{p.cell.key} ({p.protocol}): {'; '.join(p.worse)}\n"
                + "\n".join(f"[{side}]\n{tail}" for side, tail in p.logs.items())
                for p in pairs if p.worse]
    twice = [f"{p.cell.key} ({p.protocol}): {p.ours.duplicates}" for p in pairs
             if p.cell.clean and p.ours.duplicates]
    assert not failures, (f"the bridge worse than plain confluent-kafka (results: {md_path}):\n"
                          + "\n\n".join(failures))
    assert not twice, f"read twice on a clean rebalance: {twice}"
