"""The usage matrix for kafka-python on the consumer group protocol (KIP-848): every way
kafka-python's users consume, ours with ``group_protocol="consumer"`` (the broker's
balanced-sticky assigning) beside kafka-python alone on the classic protocol with its
cooperative assignor, on the same broker and workload at the same moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .consumer_protocol_group import require_balanced_sticky
from .usage_matrix import kafka_python
from .usage_matrix.verdict import assert_never_worse


@pytest.mark.timeout(1800)
def test_ours_on_the_consumer_protocol_is_never_worse_than_kafka_python_alone(
        kafka_broker: Any, tmp_path: Path) -> None:
    """In every cell, kafka-python on the consumer group protocol raises no more exceptions,
    expels, loses and (on clean rebalances) re-reads no more records, and settles no later
    (within the stated tolerance) than kafka-python alone with its cooperative assignor."""
    require_balanced_sticky(kafka_broker.bootstrap)
    assert_never_worse(kafka_broker, kafka_python.consumer_protocol_client(), tmp_path,
                       alone="kafka-python alone (classic, cooperative)",
                       protocols=("cooperative",))
