"""What a group member is told (MemberConfig) and what it reports back (JSON-line events).

Every event is one JSON object with at least::

    {"event": ..., "member": "m0", "pid": 1234, "mono": <time.monotonic()>, "wall": <time.time()>}

``mono`` is CLOCK_MONOTONIC, shared by all processes of the machine, so events of
different members can be ordered and timed against each other.

Events:
    started                      the process is up
    subscribed  topics, strategies
    assigned    partitions + snapshot   kafka-python's on_partitions_assigned
    revoked     partitions + snapshot   on_partitions_revoked
    released    partitions              on_partitions_revoked returned (with revoke_delay_ms)
    lost        partitions + snapshot   on_partitions_lost
    state       snapshot                generation/state/protocol/assignment changed
    record      topic, partition, offset, key, value, value_size   (if report_records)
    commit      mode (auto|sync), ok, error, offsets [[topic, partition, offset], ...]
    metrics     values {group: {name: value}}  (if report_metrics: the consumer's
                kafka-assignors metrics, when a rebalance figure changed, at most once a
                second; non-finite values as null)
    closing / closed             clean stop in progress / done
    stall ms / resumed           GroupRunner.stall_member: not polling for ms / polling again
    subscribed topics            also after GroupRunner.resubscribe
    error       message [, traceback]

A snapshot is ``generation``, ``member_id``, ``state`` (kafka-python MemberState name:
UNJOINED, REBALANCING, STABLE), ``protocol`` (the chosen assignor's wire name, None
while not stable) and ``assignment`` (the member's full current assignment, sorted
``[topic, partition]`` pairs). Note that kafka-python passes only the *added*
partitions to on_partitions_assigned under the cooperative protocol; ``assignment``
is always the full set.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

CommitMode = Literal["auto", "sync", "none"]
TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class MemberConfig:
    """Everything one member process needs; crosses the process boundary as JSON."""

    name: str
    bootstrap: str
    group_id: str
    topics: tuple[str, ...]
    strategies: tuple[str, ...] = ("range",)
    group_instance_id: str | None = None
    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 1_000
    max_poll_interval_ms: int = 60_000
    poll_timeout_ms: int = 1_000
    close_timeout_ms: int = 10_000
    commit: CommitMode = "auto"
    auto_offset_reset: str = "earliest"
    report_records: bool = False
    #: emit ``metrics`` events: ``kafka_assignors.metrics.metrics_of(consumer).values()``
    report_metrics: bool = False
    processing_delay_ms: int = 0
    #: time spent in on_partitions_revoked, as an application committing or flushing would
    revoke_delay_ms: int = 0
    log_level: str = "WARNING"
    #: True: ``kafka_assignors.kafka_python.KafkaConsumer`` (the runtime, docs/runtime.md);
    #: False: a plain ``kafka.KafkaConsumer``: kafka-python's own join handling and poll()
    runtime: bool = True
    consumer_config: dict[str, Any] = field(default_factory=dict)
    #: the interpreter that runs this member (None: the runner's own); one from another
    #: venv (another kafka-python) imports this checkout and nothing else of the runner's
    python: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MemberConfig:
        data = json.loads(text)
        data["topics"] = tuple(data["topics"])
        data["strategies"] = tuple(data["strategies"])
        return cls(**data)


@dataclass
class MemberView:
    """The parent's picture of one member, updated from its events."""

    index: int
    name: str
    config: MemberConfig
    pid: int | None = None
    generation: int = -1
    member_id: str = ""
    state: str = "UNJOINED"
    protocol: str | None = None
    assignment: frozenset[TopicPartition] = frozenset()
    #: STABLE but about to join again (a cooperative member that revoked partitions, a
    #: changed subscription): the group is not settled yet
    rejoin_pending: bool = False
    alive: bool = True
    stopping: bool = False
    killed: bool = False
    exit_code: int | None = None
    last_error: str | None = None
    records: int = 0
    #: the last ``metrics`` event's values ({group: {name: value or None}}), kept after exit
    metrics: dict[str, dict[str, float | None]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, event: dict[str, Any]) -> None:
        """Update from one event (the event is also kept in ``events``)."""
        self.events.append(event)
        kind = event.get("event")
        if "pid" in event:
            self.pid = int(event["pid"])
        if kind in ("state", "assigned", "revoked", "lost") and "generation" in event:
            self.generation = int(event["generation"])
            self.member_id = str(event.get("member_id", ""))
            self.state = str(event.get("state", self.state))
            self.protocol = event.get("protocol")
            self.assignment = frozenset((str(t), int(p)) for t, p in event.get("assignment", []))
            if "rejoin_pending" in event:
                self.rejoin_pending = bool(event["rejoin_pending"])
        elif kind == "record":
            self.records += 1
        elif kind == "metrics":
            self.metrics = event.get("values") or {}
        elif kind == "error":
            self.last_error = str(event.get("message"))

    def describe(self) -> str:
        """One line for error messages."""
        status = (
            "killed"
            if self.killed
            else "stopping"
            if self.stopping and self.alive
            else "alive"
            if self.alive
            else f"exited({self.exit_code})"
        )
        parts = sorted(f"{t}-{p}" for t, p in self.assignment)
        text = (
            f"{self.name} [{status}, pid {self.pid}] generation={self.generation} "
            f"state={self.state} protocol={self.protocol} assignment={parts}"
        )
        if self.last_error:
            text += f" last_error={self.last_error!r}"
        return text
