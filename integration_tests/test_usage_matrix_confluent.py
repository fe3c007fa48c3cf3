"""The usage matrix for confluent-kafka (integration_tests/usage_matrix): every way its docs and
users consume, through our bridge with our eager and cooperative assignors, each beside
a plain confluent-kafka consumer (range / cooperative-sticky) on the same broker and workload at
the same moment; plus a group mixing bridged, kafka-python and aiokafka members."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .usage_matrix import confluent
from .usage_matrix.verdict import assert_never_worse


@pytest.mark.timeout(1200)
def test_the_bridge_is_never_worse_than_plain_confluent_kafka(
        kafka_broker: Any, tmp_path: Path) -> None:
    """In every cell, bridged consumers raise no more exceptions, expel, lose and (on clean
    rebalances) re-read no more records, and settle no later (within the stated tolerance) than
    plain confluent-kafka consumers; and they read nothing twice on a clean rebalance."""
    assert_never_worse(kafka_broker, confluent.client(), tmp_path,
                       alone="plain confluent-kafka", nothing_twice_on_clean=True)
