"""The usage matrix for kafka-python (integration_tests/usage_matrix): every way kafka-python's
docs and users consume, with our eager and cooperative assignors (with the runtime, and as the
plain one line), each beside kafka-python alone (range / cooperative-sticky) on the same broker
and workload at the same moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .usage_matrix import kafka_python
from .usage_matrix.verdict import assert_never_worse


@pytest.mark.timeout(1800)  # three sides per cell
def test_ours_is_never_worse_than_kafka_python_alone(kafka_broker: Any, tmp_path: Path) -> None:
    """In every cell of the matrix, kafka-python with our assignor (with the runtime and as the
    plain one line) raises no more exceptions,
    expels, loses and (on clean rebalances) re-reads no more records, and settles no later
    (within the stated tolerance) than kafka-python with its own strategy of that protocol."""
    assert_never_worse(kafka_broker, kafka_python.client(), tmp_path,
                       alone="kafka-python alone")


@pytest.mark.timeout(1800)  # three sides per cell
def test_on_the_oldest_kafka_python_3(
        kafka_broker: Any, tmp_path: Path) -> None:
    """The same matrix, both protocols, with the members on the oldest kafka-python 3 release
    the runtime supports (3.0.2), each beside that release alone."""
    oldest = kafka_python.OLDEST_KAFKA_PYTHON_3
    assert_never_worse(kafka_broker, kafka_python.oldest_client(), tmp_path,
                       alone=f"kafka-python {oldest} alone")
