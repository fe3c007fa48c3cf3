"""What the broker says about a group, for tests that wait for it to settle.

A group of KIP-848 members is settled only when the broker says so (state Stable: the
target assignment is computed for the current group epoch and every member reconciled to
it); a quiet period proves nothing, as the broker computes a new target only on a
heartbeat after its assignment interval (KIP-1263) and heartbeats are 5 s apart by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TP = tuple[str, int]


@dataclass(frozen=True)
class BrokerView:
    state: str  # confluent_kafka.ConsumerGroupState name: STABLE, EMPTY, UNKNOWN, ...
    group_type: str  # CLASSIC or CONSUMER
    assignor: str
    members: dict[str, frozenset[TP]]  # client id -> partitions

    @property
    def stable(self) -> bool:
        return self.state == "STABLE"


def describe(admin: Any, group_id: str, timeout: float = 10.0) -> BrokerView | str:
    """The broker's view of the group, or why there is none yet (a retriable error such as
    NOT_COORDINATOR while the coordinator loads, or a group not created yet, or no answer
    within ``timeout`` seconds: the callers poll until their own deadline)."""
    from confluent_kafka import KafkaException

    try:
        group = admin.describe_consumer_groups([group_id])[group_id].result(timeout)
    except KafkaException as exc:
        return f"describe failed: {exc.args[0] if exc.args else exc}"
    except TimeoutError:  # a starved broker: one slow answer is not the caller's verdict
        return f"describe not answered within {timeout} s"
    members = {
        m.client_id: frozenset((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
        for m in group.members
    }
    return BrokerView(group.state.name, group.type.name, group.partition_assignor, members)
