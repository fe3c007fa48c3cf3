"""The usage matrix on kafka-python 2.3.3 (integration_tests/usage_matrix): every way
kafka-python's docs and users consume, eager (2.x has no cooperative protocol), with our
BalancedStickyAssignor beside kafka-python 2.3.3's range alone, on the same broker and
workload at the same moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .usage_matrix import kafka_python_2
from .usage_matrix.verdict import assert_never_worse


@pytest.mark.timeout(1200)
def test_ours_is_never_worse_than_kafka_python_2_alone(kafka_broker: Any, tmp_path: Path) -> None:
    """In every eager cell on kafka-python 2.3.3, our assignor raises no more exceptions,
    expels, loses and (on clean rebalances) re-reads no more records, and settles no later
    (within the stated tolerance) than kafka-python 2.3.3's range."""
    assert_never_worse(kafka_broker, kafka_python_2.client(), tmp_path,
                       alone="kafka-python 2.3.3 alone", protocols=("eager",))
