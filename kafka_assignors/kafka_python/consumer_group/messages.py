"""ConsumerGroupHeartbeat (API key 68) as kafka-python message classes, and their plain data.

kafka-python 3 names the API key but has no class for it; its JSON-schema framework builds
the two classes below from ``schemas/`` (the same way ``explain`` builds ConsumerGroupDescribe).
The functions turn a response into plain data (:class:`HeartbeatResult`) for the state
machine in :mod:`.membership`, which imports nothing of kafka-python.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka.protocol.api_message import ApiMessage

from . import schemas
from .membership import Assignment, Heartbeat

#: the highest version this member speaks (v1: SubscribedTopicRegex, client-chosen MemberId)
MAX_VERSION = 1


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=schemas):  # type: ignore[misc,call-arg]
    """Join, heartbeat, acknowledge and leave a consumer-protocol group."""


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=schemas):  # type: ignore[misc,call-arg]
    """Member id and epoch, heartbeat interval, target assignment (by topic id)."""


@dataclass(frozen=True)
class HeartbeatResult:
    """One response as plain data; ``assignment`` is None when the target did not change."""

    error_code: int
    error_message: str | None
    member_id: str | None
    member_epoch: int
    interval_ms: int
    assignment: Assignment | None


def new_member_id() -> str:
    """A member id chosen by the client (ConsumerGroupHeartbeat v1+), as the Java consumer
    makes one: a random UUID."""
    return str(uuid.uuid4())


def heartbeat_request(group_id: str, beat: Heartbeat) -> Any:
    """The request for one heartbeat of the state machine (every field sent each time: the
    broker treats a full request as a no-op where nothing changed)."""
    topic = ConsumerGroupHeartbeatRequest.TopicPartitions
    owned = None if beat.owned is None else [
        topic(topic_id=uuid.UUID(str(tid)), partitions=sorted(ps))
        for tid, ps in sorted(_by_topic(beat.owned).items())]
    return ConsumerGroupHeartbeatRequest(
        group_id=group_id, member_id=beat.member_id, member_epoch=beat.member_epoch,
        instance_id=beat.instance_id, rack_id=beat.rack_id,
        rebalance_timeout_ms=beat.rebalance_timeout_ms,
        subscribed_topic_names=None if beat.topics is None else sorted(beat.topics),
        subscribed_topic_regex=beat.regex, server_assignor=beat.server_assignor,
        topic_partitions=owned, max_version=MAX_VERSION)


def result_of(response: Any) -> HeartbeatResult:
    """A decoded response as :class:`HeartbeatResult` (topic ids as strings)."""
    assignment: Assignment | None = None
    if response.assignment is not None:
        assignment = frozenset((str(tp.topic_id), int(p))
                               for tp in response.assignment.topic_partitions or ()
                               for p in tp.partitions or ())
    return HeartbeatResult(int(response.error_code), response.error_message,
                           response.member_id, int(response.member_epoch),
                           int(response.heartbeat_interval_ms), assignment)


def _by_topic(pairs: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tid, p in pairs:
        out.setdefault(tid, []).append(p)
    return out
