"""The usage matrix for aiokafka (integration_tests/usage_matrix): every way aiokafka's docs and
users consume, with our eager and cooperative assignors through
``kafka_assignors.aiokafka.AIOKafkaConsumer``, each beside aiokafka alone (its ``roundrobin``)
on the same broker and workload at the same moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .usage_matrix import aiokafka_client
from .usage_matrix.verdict import assert_never_worse


@pytest.mark.timeout(1800)  # waits for CPU room on a loaded machine
def test_ours_is_never_worse_than_aiokafka_alone(kafka_broker: Any, tmp_path: Path) -> None:
    """In every cell, aiokafka with our consumer and assignor raises no more exceptions,
    expels, loses and (on clean rebalances) re-reads no more records, and settles no later
    (within the stated tolerance) than aiokafka with its own ``roundrobin``."""
    assert_never_worse(kafka_broker, aiokafka_client.client(), tmp_path, alone="aiokafka alone")
