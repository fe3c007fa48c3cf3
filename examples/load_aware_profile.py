"""Load-aware from a load profile: weights per partition from a file (the pipeline's
`kafka-assignors profile` writes one from real traffic; here we write a small one by hand).

    BOOTSTRAP_SERVERS=localhost:9092 python examples/load_aware_profile.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from _common import BOOTSTRAP, ensure_topic, poll_until

from kafka_assignors import LoadAwareAssignor, ProfileFile
from kafka_assignors.kafka_python import (
    KafkaConsumer,  # the runtime: safe with two members in one thread
)

topic = ensure_topic("examples-profile", partitions=4)
profile = Path(tempfile.mkdtemp()) / "profile.json"
profile.write_text(json.dumps({
    "format": "kafka-assignors/load-profile", "version": 1, "weight_metric": "bytes_per_s",
    "partitions": [{"topic": topic, "partition": p, "weight": w}
                   for p, w in enumerate([900.0, 50.0, 30.0, 20.0])],
}))

consumers = [KafkaConsumer(topic, bootstrap_servers=BOOTSTRAP, group_id="examples-profile",
                           partition_assignment_strategy=[LoadAwareAssignor(ProfileFile(profile))])
             for _ in range(2)]


def everyone_polls() -> None:
    for c in consumers:
        c.poll(timeout_ms=200)


def settled() -> bool:
    """Both members hold partitions, together all 4, none twice: the rebalance is over."""
    mine, theirs = (c.assignment() for c in consumers)
    return bool(mine) and bool(theirs) and not mine & theirs and len(mine | theirs) == 4


poll_until(settled, everyone_polls)
for n, c in enumerate(consumers):
    print(f"member {n}:", sorted(tp.partition for tp in c.assignment()))
hot = next(c for c in consumers if any(tp.partition == 0 for tp in c.assignment()))
print("the hot partition 0 shares its member with:",
      sorted(tp.partition for tp in hot.assignment() if tp.partition != 0))
for c in consumers:
    c.close()
