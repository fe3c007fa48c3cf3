"""Plain fakes of what kafka-python hands an assignor: cluster metadata and group members."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class FakeCluster:
    def __init__(self, counts: Mapping[str, int]) -> None:
        self.counts = dict(counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.counts.get(topic)
        return None if n is None else set(range(n))

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self.counts)


@dataclass
class FakeMember:
    member_id: str
    metadata: Any
    group_instance_id: str | None = None


def subscription_of(assignor: Any, topics: Sequence[str]) -> Any:
    """What a member would send: encode and decode, as the broker round trip does."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription  # kafka-python 3

    return ConsumerProtocolSubscription.decode(assignor.metadata(set(topics)).encode())


def assigned(result: Mapping[str, Any]) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for member, a in result.items():
        out[member] = {t: list(ps) for t, ps in a.assigned_partitions}
    return out
