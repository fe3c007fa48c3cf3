"""OffsetCommit and OffsetFetch as a KIP-848 member sends them: version 9, the first to
carry the member id and epoch (v10 names topics by id, which kafka-python's response
handlers do not read), built with kafka-python's own message classes."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from typing import Any

from kafka.protocol.consumer import OffsetCommitRequest, OffsetFetchRequest

OFFSET_API_VERSION = 9


def commit_request(group_id: str, member_id: str | None, epoch: int,
                   instance_id: str | None, offsets: Mapping[Any, Any]) -> Any:
    """OffsetCommit v9 of ``offsets`` ({TopicPartition: OffsetAndMetadata})."""
    by_topic: dict[str, dict[int, Any]] = collections.defaultdict(dict)
    for tp, offset in offsets.items():
        by_topic[tp.topic][tp.partition] = offset
    topic_cls = OffsetCommitRequest.OffsetCommitRequestTopic
    partition_cls = topic_cls.OffsetCommitRequestPartition
    return OffsetCommitRequest(
        min_version=OFFSET_API_VERSION, max_version=OFFSET_API_VERSION,
        group_id=group_id, generation_id_or_member_epoch=epoch, member_id=member_id or "",
        group_instance_id=instance_id,
        topics=[topic_cls(name=topic, partitions=[
            partition_cls(partition_index=p, committed_offset=o.offset,
                          committed_leader_epoch=o.leader_epoch, committed_metadata=o.metadata)
            for p, o in parts.items()]) for topic, parts in by_topic.items()])


def fetch_request(group_id: str, member_id: str | None, epoch: int,
                  partitions: Iterable[Any] | None, require_stable: bool) -> Any:
    """OffsetFetch v9 of ``partitions`` (TopicPartitions; None: every partition)."""
    group_cls = OffsetFetchRequest.OffsetFetchRequestGroup
    topic_cls = group_cls.OffsetFetchRequestTopics
    topics = None
    if partitions is not None:
        by_topic: dict[str, set[int]] = collections.defaultdict(set)
        for tp in partitions:
            by_topic[tp.topic].add(tp.partition)
        topics = [topic_cls(name=t, partition_indexes=sorted(ps)) for t, ps in by_topic.items()]
    return OffsetFetchRequest(
        groups=[group_cls(group_id=group_id, member_id=member_id, member_epoch=epoch,
                          topics=topics)],
        require_stable=require_stable,
        min_version=OFFSET_API_VERSION, max_version=OFFSET_API_VERSION)
