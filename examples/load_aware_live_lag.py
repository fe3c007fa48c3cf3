"""Load-aware from live lag: at each rebalance the leader reads the group's lag per partition
(log end offset - committed offset) and balances total lag per member, not partition counts.
If the lag cannot be read it logs why and counts partitions instead.

    BOOTSTRAP_SERVERS=localhost:9092 python examples/load_aware_live_lag.py
"""

from __future__ import annotations

from _common import BOOTSTRAP, ensure_topic, poll_until
from kafka import KafkaProducer
from kafka.structs import OffsetAndMetadata

from kafka_assignors import LiveLag, LoadAwareAssignor
from kafka_assignors.kafka_python import KafkaConsumer  # gives LiveLag the connection settings

topic = ensure_topic("examples-lag", partitions=4)
producer = KafkaProducer(bootstrap_servers=BOOTSTRAP)
for partition, count in enumerate([300, 10, 10, 10]):  # partition 0 is the hot one
    for _ in range(count):
        producer.send(topic, b"x", partition=partition)
producer.flush()
producer.close()


def member() -> KafkaConsumer:
    return KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-lag",
                         enable_auto_commit=False,
                         partition_assignment_strategy=[LoadAwareAssignor(LiveLag())])


first = member()
poll_until(lambda: len(first.assignment()) == 4, lambda: first.poll(timeout_ms=300))
# the group has read nothing yet: commit offset 0 everywhere, so the lag is what was produced
first.commit({tp: OffsetAndMetadata(0, "", -1) for tp in first.assignment()})
second = member()  # joins: the leader weighs the partitions by their lag


def both_poll() -> None:
    first.poll(timeout_ms=100, max_records=1)
    second.poll(timeout_ms=100, max_records=1)


def settled() -> bool:
    """Both members hold partitions, together all 4, none twice: the rebalance is over."""
    mine, theirs = first.assignment(), second.assignment()
    return bool(mine) and bool(theirs) and not mine & theirs and len(mine | theirs) == 4


poll_until(settled, both_poll)
hot = next(c for c in (first, second) if any(tp.partition == 0 for tp in c.assignment()))
print("first:", sorted(tp.partition for tp in first.assignment()))
print("second:", sorted(tp.partition for tp in second.assignment()))
print("the hot partition 0 shares its member with:",
      sorted(tp.partition for tp in hot.assignment() if tp.partition != 0))
second.close()
first.close()
