"""aiokafka: the same assignors, from `kafka_assignors.aiokafka`.

    pip install '.[aiokafka]'
    BOOTSTRAP_SERVERS=localhost:9092 python examples/one_line_aiokafka.py
"""

from __future__ import annotations

import asyncio

from _common import BOOTSTRAP, ensure_topic
from aiokafka import AIOKafkaConsumer

from kafka_assignors.aiokafka import BalancedStickyAssignor


async def main() -> None:
    topic = ensure_topic("examples-orders")
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=BOOTSTRAP,
                                group_id="examples-aiokafka",
                                partition_assignment_strategy=(BalancedStickyAssignor(),))
    await consumer.start()
    try:
        async with asyncio.timeout(60):
            while not consumer.assignment():
                await consumer.getmany(timeout_ms=500)
        print("assigned:", sorted(tp.partition for tp in consumer.assignment()))
    finally:
        await consumer.stop()


asyncio.run(main())
