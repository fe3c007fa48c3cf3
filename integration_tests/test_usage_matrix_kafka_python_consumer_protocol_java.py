"""The usage matrix for kafka-python on the consumer group protocol (KIP-848) beside Kafka's
Java consumer on the same protocol: ours with ``group_protocol="consumer"``, alone the Java
``KafkaConsumer`` with ``group.protocol=consumer``, both assigned by the broker's
balanced-sticky, on the same broker and workload at the same moment (every cell the Java
consumer has an idiom for: ``usage_matrix/java_consumer.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .consumer_protocol_group import require_balanced_sticky
from .usage_matrix import java_consumer
from .usage_matrix.verdict import assert_never_worse


@pytest.mark.timeout(1800)
def test_ours_on_the_consumer_protocol_is_never_worse_than_the_java_consumer(
        kafka_broker: Any, tmp_path: Path) -> None:
    """In every cell, kafka-python on the consumer group protocol raises no more exceptions,
    expels, loses and (on clean rebalances) re-reads no more records, and settles no later
    (within the stated tolerance) than Kafka's Java consumer on the same protocol."""
    require_balanced_sticky(kafka_broker.bootstrap)
    try:
        java_consumer.classpath()
    except (RuntimeError, FileNotFoundError, OSError) as exc:  # a test that cannot run fails
        pytest.fail(f"the Java members need javac and the kafka-clients jar: {exc}")
    assert_never_worse(kafka_broker, java_consumer.client(), tmp_path,
                       alone="Kafka's Java consumer (group.protocol=consumer)",
                       protocols=("cooperative",))
