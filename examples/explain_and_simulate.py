"""`simulate` (what would each assignor do, without a broker) and `explain` (who owns what in
a live group, right now): the command line, here called from Python. From a shell:
`kafka-assignors simulate --topics orders:12 --members 3` and
`kafka-assignors explain --group G --bootstrap HOST:PORT`.

    BOOTSTRAP_SERVERS=localhost:9092 python examples/explain_and_simulate.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until

from kafka_assignors import BalancedStickyAssignor
from kafka_assignors.cli import main
from kafka_assignors.kafka_python import KafkaConsumer

# a what-if: 12 partitions over 3 members, then one leaves, under several assignors
assert main(["simulate", "--topics", "orders:12", "--members", "3"]) == 0

topic = ensure_topic("examples-orders")
consumer = KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-explain",
                         partition_assignment_strategy=[BalancedStickyAssignor])
poll_until(lambda: bool(consumer.assignment()), lambda: consumer.poll(timeout_ms=500))
# the live group: strategy, members, their partitions and lag
assert main(["explain", "--group", "examples-explain", "--bootstrap", BOOTSTRAP]) == 0
consumer.close()
