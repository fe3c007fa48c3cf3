"""The Java column's translation of the matrix (no broker, no JVM): member configs into the
Java consumer's properties, the cells it runs, commands into the JVM's lines, and the log
lines that count as a lost membership."""

from __future__ import annotations

import json
from typing import Any

import pytest

from integration_tests.usage_matrix import java_consumer
from integration_tests.usage_matrix.java_consumer import (
    EXPELLED,
    LEFT_OUT,
    JavaMember,
    java_cells,
    properties,
)
from integration_tests.usage_matrix.kafka_python import CELLS

CONFIG = {"bootstrap": "host:9092", "group_id": "g", "strategy": "consumer:balanced-sticky",
          "name": "m1", "usage": "poll", "topics": ["t"]}


def test_properties_are_the_java_consumers_on_the_consumer_protocol() -> None:
    props = properties({**CONFIG, "static_id": "m1", "options": {
        "auto_offset_reset": "earliest", "enable_auto_commit": False,
        "auto_commit_interval_ms": 1000, "max_poll_interval_ms": 20000,
        "session_timeout_ms": 6000, "heartbeat_interval_ms": 2000}})
    assert props == {"bootstrap.servers": "host:9092", "group.id": "g",
                     "group.protocol": "consumer", "group.remote.assignor": "balanced-sticky",
                     "group.instance.id": "m1", "auto.offset.reset": "earliest",
                     "enable.auto.commit": "false", "auto.commit.interval.ms": "1000",
                     "max.poll.interval.ms": "20000"}  # session and heartbeat: the broker's


def test_an_option_without_a_java_property_is_an_error() -> None:
    with pytest.raises(KeyError):
        properties({**CONFIG, "options": {"consumer_timeout_ms": 1000}})
    with pytest.raises(ValueError, match="consumer group protocol only"):
        properties({**CONFIG, "strategy": "kafka_assignors:BalancedStickyAssignor"})


def test_every_cell_but_the_iterators_runs_with_its_java_idiom() -> None:
    cells = java_cells()
    assert {c.key for c in cells} == {c.key for c in CELLS} - set(LEFT_OUT)
    assert set(LEFT_OUT) == {"iterator", "iterator-timeout"}
    for cell in cells:
        assert "; Java: " in cell.title
        assert not cell.not_judged  # the Java consumer can commit in its listener
    for cell in cells:  # every cell's options map to Java properties (or the broker's)
        properties({**CONFIG, "options": dict(cell.options)})


class _Host:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str) -> None:
        self.lines.append(line)


@pytest.mark.parametrize(("cmd", "line"), [
    ({"do": "stop"}, "do m1 stop"),
    ({"do": "go"}, "do m1 go"),
    ({"do": "subscribe", "topics": ["a", "b"]}, "do m1 subscribe a,b"),
    ({"do": "unsubscribe", "seconds": 2}, "do m1 unsubscribe 2"),
    ({"do": "slow", "seconds": 25}, "do m1 slow 25"),
])
def test_commands_become_the_jvms_lines(cmd: dict[str, Any], line: str) -> None:
    host = _Host()
    member = JavaMember(host, "m1", None)  # type: ignore[arg-type]  # a fake host, no log
    member.stdin.write(json.dumps(cmd) + "\n")
    assert host.lines == [line]


def test_a_member_ends_once_with_its_exit_code() -> None:
    member = JavaMember(_Host(), "m1", None)  # type: ignore[arg-type]
    member.stdout.put('{"event": "started"}\n')
    member.exited(1)
    member.kill()  # already gone: keeps its code
    assert list(member.stdout) == ['{"event": "started"}\n']
    assert member.wait(0) == 1 and member.poll() == 1


@pytest.mark.parametrize(("line", "member"), [
    ("12:00:00.000 INFO ConsumerHeartbeatRequestManager [Consumer clientId=m2, groupId=g] "
     "ConsumerGroupHeartbeatRequest failed for member X because epoch 5 is fenced. in 3ms: x",
     "m2"),
    ("12:00:00.000 INFO ConsumerHeartbeatRequestManager [Consumer clientId=m1, groupId=g] "
     "ConsumerGroupHeartbeatRequest failed because member X is unknown. in 85ms: x", "m1"),
    ("12:00:00.000 WARN ConsumerHeartbeatRequestManager [Consumer clientId=m3, groupId=g] "
     "Consumer poll timeout has expired. This means ...", "m3"),
    ("12:00:00.000 WARN NetworkClient [Consumer clientId=m3, groupId=g] Connection to node 1 "
     "could not be established.", None),
])
def test_lost_membership_lines(line: str, member: str | None) -> None:
    found = EXPELLED.search(line)
    assert (found.group(1) if found else None) == member


def test_the_log4j_filter_passes_the_fencing_lines() -> None:
    import re

    regex = next(v for k, v in (ln.split(" = ", 1) for ln in java_consumer.LOG4J.splitlines()
                                if " = " in ln) if k.endswith("filter.only.regex"))
    assert re.fullmatch(regex, "[Consumer clientId=m1, groupId=g] Heartbeat failed because "
                        "member X is unknown. in 85ms: y")
    assert not re.fullmatch(regex, "[Consumer clientId=m1, groupId=g] Subscribed to topic t")
