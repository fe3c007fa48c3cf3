"""The shapes the installed kafka-python (2.x or 3.x) hands an assignor, built with its own
classes, so one test file runs unchanged on every kafka-python version."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_assignors.kafka_python.compat import KAFKA_PYTHON_2, wire_types

from .fakes import FakeMember

SUBSCRIPTION, ASSIGNMENT = wire_types()


def sent(assignor: Any, topics: Sequence[str]) -> bytes:
    """The bytes a member puts in its JoinGroup request (encode() as kafka-python does)."""
    metadata = assignor.metadata(set(topics))
    return metadata if isinstance(metadata, bytes) else bytes(metadata.encode())


def decode_subscription(raw: bytes) -> Any:
    """A subscription as the installed kafka-python's leader decodes it (2.x: version 0)."""
    return SUBSCRIPTION.decode(raw)


def members_arg(joined: Sequence[tuple[str, bytes, str | None]]) -> Any:
    """``assign()``'s members argument as the installed kafka-python builds it from
    (member id, metadata bytes, group instance id) triples."""
    if not KAFKA_PYTHON_2:
        return [FakeMember(m, decode_subscription(raw), iid) for m, raw, iid in joined]
    try:
        from kafka.coordinator.subscription import Subscription  # 2.3+
    except ImportError:
        return {m: decode_subscription(raw) for m, raw, _iid in joined}
    return {m: Subscription(decode_subscription(raw), iid) for m, raw, iid in joined}


def assignment_of(result: Mapping[str, Any], member: str) -> Any:
    """A member's assignment as it receives it: encoded by the leader, decoded by the member."""
    value = result[member]
    raw = value if isinstance(value, bytes) else value.encode()
    return ASSIGNMENT.decode(raw)


def partitions_of(assignment: Any) -> dict[str, list[int]]:
    return {tp.topic: sorted(p.partition for p in assignment.partitions()
                             if p.topic == tp.topic)
            for tp in assignment.partitions()}


class Coordinator:
    """One consumer's coordinator as far as an assignor sees it: it asks for metadata, leads,
    and hands the member its assignment the way the installed kafka-python does (3.x
    ``on_assignment(assignment, generation)``; 2.x ``on_assignment(assignment)`` from
    ``_on_join_complete(generation, ...)``), with the assignors where that version keeps
    them (3.x ``_assignors``, 2.x ``config["assignors"]``)."""

    def __init__(self, assignor: Any) -> None:
        self.assignor = assignor
        if KAFKA_PYTHON_2:
            self.config = {"assignors": [assignor]}
        else:
            self._assignors = {assignor.name: assignor}

    def join(self, topics: Sequence[str]) -> bytes:
        return sent(self.assignor, topics)

    def lead(self, cluster: Any, joined: Sequence[tuple[str, bytes, str | None]]) -> Any:
        return self.assignor.assign(cluster, members_arg(joined))

    def _on_join_complete(self, generation: int, member_id: str, protocol: str,
                          member_assignment_bytes: bytes) -> None:
        assignment = ASSIGNMENT.decode(member_assignment_bytes)
        if KAFKA_PYTHON_2:
            self.assignor.on_assignment(assignment)
        else:
            self.assignor.on_assignment(assignment, generation)

    def complete(self, result: Mapping[str, Any], member: str, generation: int) -> None:
        value = result[member]
        raw = value if isinstance(value, bytes) else bytes(value.encode())
        self._on_join_complete(generation, member, self.assignor.name, raw)

    def owned(self) -> tuple[dict[str, list[int]], int]:
        """What the assignor remembers for this consumer: owned partitions and generation."""
        state = self.assignor.metadata.__self__._state()  # (a class: its default instance)
        return {t: sorted(ps) for t, ps in state.owned.items()}, state.generation


def round_trip(coordinators: Mapping[str, Coordinator], topics: Sequence[str], cluster: Any,
               generation: int, leader: str | None = None) -> Any:
    """One rebalance: every member joins, ``leader`` (default: the first) assigns, every
    member completes with ``generation``; returns the leader's answer."""
    joined = [(m, c.join(topics), None) for m, c in sorted(coordinators.items())]
    result = coordinators[leader or min(coordinators)].lead(cluster, joined)
    for m, c in coordinators.items():
        c.complete(result, m, generation)
    return result
