"""confluent-kafka members of one consumer-protocol (KIP-848) group, polled from the test's
thread, and the wait for the broker's Stable state (shared by the live tests)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from .broker_view import describe

Assigned = dict[str, dict[str, list[int]]]


def by_topic(tps: Any) -> dict[str, list[int]]:
    """TopicPartitions as ``{topic: sorted partitions}``."""
    out: dict[str, list[int]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp.partition)
    return {t: sorted(ps) for t, ps in sorted(out.items())}


def broker_assignors(bootstrap: str) -> list[str]:
    """The assignor names the broker offers (its ``group.consumer.assignors``)."""
    from kafka_assignors.confluent._broker_config import broker_assignors as read

    found = read({"bootstrap.servers": bootstrap})
    if isinstance(found, str):
        pytest.fail(f"cannot read the broker's group.consumer.assignors: {found}")
    return found


def set_group_timing(bootstrap: str, group: str, *, session_ms: int, heartbeat_ms: int) -> None:
    """Give one consumer-protocol group its session timeout and heartbeat interval (the group
    configs ``consumer.session.timeout.ms`` and ``consumer.heartbeat.interval.ms``: on this
    protocol the broker sets both, not the member). The test broker allows sessions from 3 s
    and heartbeats from 1 s; Kafka's default minimums are 45 s and 5 s."""
    from confluent_kafka.admin import (  # type: ignore[attr-defined]  # not re-exported
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    entries = [ConfigEntry(name, str(value), incremental_operation=AlterConfigOpType.SET)
               for name, value in (("consumer.session.timeout.ms", session_ms),
                                   ("consumer.heartbeat.interval.ms", heartbeat_ms))]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.incremental_alter_configs([resource])[resource].result(30)


def require_balanced_sticky(bootstrap: str) -> None:
    """Skip unless the broker has our assignor (the project's image lists it first)."""
    if "balanced-sticky" not in broker_assignors(bootstrap):
        pytest.skip("needs a broker with our balanced-sticky in group.consumer.assignors "
                    "(the project's broker image)")


class ConsumerProtocolGroup:
    """Members of one ``group.protocol=consumer`` group, made by ``factory(config)``
    (``confluent_kafka.Consumer`` or ``kafka_assignors.confluent.Consumer``)."""

    def __init__(self, bootstrap: str, group: str, conf: Mapping[str, Any] | None = None,
                 factory: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.conf = {"bootstrap.servers": bootstrap, "group.id": group,
                     "group.protocol": "consumer", **(conf or {})}
        if factory is None:
            from confluent_kafka import Consumer

            factory = Consumer
        self.factory = factory
        self.members: dict[str, Any] = {}
        self.errors: list[str] = []

    @property
    def group_id(self) -> str:
        return str(self.conf["group.id"])

    def join(self, name: str, topics: list[str], **subscribe: Any) -> Any:
        def error(err: Any) -> None:
            self.errors.append(f"{name}: {err}")

        consumer = self.factory({**self.conf, "client.id": name, "error_cb": error})
        consumer.subscribe(topics, **subscribe)
        self.members[name] = consumer
        return consumer

    def leave(self, name: str) -> None:
        self.members.pop(name).close()

    def close(self) -> None:
        for consumer in self.members.values():
            consumer.close()
        self.members.clear()

    def describe(self, admin: Any) -> Any:
        return admin.describe_consumer_groups([self.group_id])[self.group_id].result()

    def stable(self, total: int, timeout: float = 60.0,
               on_message: Callable[[str, Any], None] | None = None) -> Assigned:
        """Poll until the broker calls the group Stable (target assignment computed for the
        current group epoch and every member reconciled to it), every member's own view
        matches the broker's, and every partition is held once.

        A quiet period is not enough: the broker computes a new target only on a heartbeat
        after its assignment interval, and heartbeats are 5 s apart by default, so a group
        can look settled for seconds on an old target (KIP-1263).  Messages polled meanwhile
        go to ``on_message(member, message)``.
        """
        from confluent_kafka import KafkaError
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.conf["bootstrap.servers"]})
        deadline = time.monotonic() + timeout
        now: Assigned = {}
        problem = "not described yet"
        while time.monotonic() < deadline:
            for name, consumer in self.members.items():
                msg = consumer.poll(0.1)
                error = None if msg is None else msg.error()
                if error is not None and (error.fatal() or error.code() == KafkaError._FATAL):
                    # a fatal error ends the member (librdkafka returns it from poll): say so
                    # now, with the broker's reason in the report, not after the timeout
                    pytest.fail(f"{name}: fatal error {error}; errors {self.errors}")
                if msg is not None and on_message is not None:
                    on_message(name, msg)
            now = {name: by_topic(consumer.assignment())
                   for name, consumer in self.members.items()}
            view = describe(admin, self.group_id)
            held = [(t, p) for a in now.values() for t, ps in a.items() for p in ps]
            if isinstance(view, str):
                problem = view  # e.g. a new broker's coordinator still loading: ask again
            elif not view.stable or {m: by_topic_set(tps) for m, tps in view.members.items()
                                     } != now:
                problem = f"state {view.state}, broker {view.members}"
            elif len(held) != total or len(set(held)) != total:
                problem = "not every partition held once"
            else:
                return now
        pytest.fail(f"no stable complete assignment in {timeout} s: {problem}; members {now}; "
                    f"errors {self.errors}")


def by_topic_set(tps: frozenset[tuple[str, int]]) -> dict[str, list[int]]:
    """(topic, partition) pairs as ``{topic: sorted partitions}``."""
    out: dict[str, list[int]] = {}
    for t, p in tps:
        out.setdefault(t, []).append(p)
    return {t: sorted(ps) for t, ps in sorted(out.items())}
