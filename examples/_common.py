"""What every example shares: where the broker is, and a topic to read.

``BOOTSTRAP_SERVERS`` (default ``localhost:9092``) names the broker; each example creates the
topic it reads (3 partitions) if it is missing, so it runs against an empty test broker.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError

BOOTSTRAP = os.environ.get("BOOTSTRAP_SERVERS", "localhost:9092")


def ensure_topic(name: str, partitions: int = 3) -> str:
    """Create the topic if it does not exist yet (another example may create it first)."""
    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    try:
        if name not in admin.list_topics():
            admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    except TopicAlreadyExistsError:
        pass
    finally:
        admin.close()
    return name


def poll_until(done: Callable[[], bool], poll: Callable[[], object], timeout_s: float = 60,
               what: str = "the group to settle") -> None:
    """Poll until ``done()``; fail loudly after ``timeout_s`` (examples never hang)."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what} after {timeout_s:.0f} s")
        poll()
