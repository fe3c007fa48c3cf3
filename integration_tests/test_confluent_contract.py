"""confluent-kafka's ``Consumer`` contract, on plain confluent-kafka (the control) and on ours.

Every test runs one scenario twice on the same broker at the same time, once with a plain
``confluent_kafka.Consumer`` and once with ``kafka_assignors.confluent.Consumer`` built from
the same configuration dict, and records what the application sees (return values, which
exception type and Kafka error code, which callbacks ran) as an *observation*.  The two
observations must be equal, except where ``docs/confluent.md`` lists the difference (its
"Differences the contract test observes" table, each line with its reason): a listed
difference that is not observed fails too, so the list is the observed one.

Parametrised over the group protocol: ``classic`` (our bridge, cooperative-balanced-sticky,
beside librdkafka's cooperative-sticky) and ``consumer`` (KIP-848: the broker assigns; ours
is ``BrokerAssignedConsumer`` on the broker's balanced-sticky beside librdkafka with the
broker's default assignor).  The same scenarios run again under confluent-kafka's oldest
supported release (:func:`test_contract_under_the_oldest_supported_confluent_kafka`, in a
venv of its own); this environment's is the newest.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import gc
import json
import os
import re
import struct
import subprocess
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kafka_assignors.confluent import Consumer as OurConsumer
from kafka_assignors.confluent import DeserializingConsumer as OurDeserializingConsumer

from .conftest import BrokerHandle

PARTITIONS = 2
PER_PARTITION = 10
#: short group timeouts keep the suite fast (the broker's minimum session timeout is 6 s);
#: max.poll.interval.ms is short only where a scenario stalls (STALL_POLL_MS): elsewhere a
#: scenario's synchronous calls without a poll() between them may take longer on a loaded
#: machine, and the member would leave its group in the middle of the scenario
FAST = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
        "max.poll.interval.ms": 30000, "topic.metadata.refresh.interval.ms": 2000}
STALL_POLL_MS = 6000
#: librdkafka's session.timeout.ms default: before some release, librdkafka refuses a
#: ``max.poll.interval.ms`` below it also with ``group.protocol=consumer``, where the session
#: timeout is the broker's and is not set on the client.
LIBRDKAFKA_SESSION_MS = 45000
DOC = Path(__file__).resolve().parent.parent / "docs" / "confluent.md"
PROTOCOLS = ("classic", "consumer")
SIDES = ("plain", "ours")

Obs = dict[str, Any]
Make = Callable[..., Any]


# --- the two sides ------------------------------------------------------------------------


def side_config(side: str, protocol: str, bootstrap: str, group: str,
                extra: dict[str, Any]) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group,
                            "auto.offset.reset": "earliest", **FAST, **extra}
    if protocol == "consumer":
        conf["group.protocol"] = "consumer"
        conf["max.poll.interval.ms"] = max(int(conf["max.poll.interval.ms"]),
                                           consumer_protocol_min_poll_ms())
        for key in ("session.timeout.ms", "heartbeat.interval.ms"):
            conf.pop(key, None)  # set on the broker in this protocol (librdkafka refuses them)
        if side == "plain":
            conf["group.remote.assignor"] = "uniform"
    elif side == "plain":
        conf["partition.assignment.strategy"] = "cooperative-sticky"
    return conf


@functools.cache
def consumer_protocol_min_poll_ms() -> int:
    """The lowest ``max.poll.interval.ms`` this librdkafka takes with the consumer protocol."""
    try:
        confluent_kafka.Consumer({"bootstrap.servers": "localhost:9", "group.id": "probe",
                                  "group.protocol": "consumer",
                                  "max.poll.interval.ms": STALL_POLL_MS}).close()
    except KafkaException:
        return LIBRDKAFKA_SESSION_MS
    return STALL_POLL_MS


class WeaklyReferable(confluent_kafka.Consumer):
    """Plain confluent-kafka, with the ``__weakref__`` slot a Python subclass gets."""


def maker(side: str, protocol: str, bootstrap: str, group: str, made: list[Any]) -> Make:
    """Builds one side's consumers; each goes into ``made``, for :func:`observe` to close."""
    cls = confluent_kafka.Consumer if side == "plain" else OurConsumer
    deserializing = (confluent_kafka.DeserializingConsumer if side == "plain"
                     else OurDeserializingConsumer)

    def make(*, as_keywords: bool = False, deserializer: bool = False, tracked: bool = True,
             **extra: Any) -> Any:
        conf = side_config(side, protocol, bootstrap, group, extra)
        consumer: Any
        if not tracked and side == "plain":  # cimpl.Consumer takes no weak reference
            consumer = WeaklyReferable(conf)
        elif deserializer:
            consumer = deserializing({**conf, "value.deserializer": lambda v, ctx: v})
        else:
            consumer = cls(**conf) if as_keywords else cls(conf)
        if tracked:
            made.append(consumer)
        return consumer

    return make


def observe(case: str, protocol: str, side: str, bootstrap: str, topic: str) -> Obs:
    """One side's observation of one scenario, in a group of its own.  Every consumer the
    scenario made is closed afterwards, also when the scenario raised: a consumer left open
    would stay in its group, keep its threads and librdkafka instance, and weigh on the
    scenarios that run beside it."""
    made: list[Any] = []
    group = f"contract-{case}-{protocol}-{side}-{uuid.uuid4().hex[:6]}"
    try:
        return SCENARIOS[case](maker(side, protocol, bootstrap, group, made), topic)
    finally:
        for consumer in made:
            with contextlib.suppress(Exception):  # already closed by the scenario itself
                consumer.close()


# --- helpers ---------------------------------------------------------------------------------


def outcome(call: Callable[[], Any]) -> Any:
    """What a call gives the application: a summary of its value, or of its exception."""
    try:
        value = call()
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        name = err.name() if isinstance(err, KafkaError) else "?"
        return f"raises {type(exc).__name__}({name})"
    except Exception as exc:
        return f"raises {type(exc).__name__}"
    return summary(value)


def bounded(call: Callable[[], Any], seconds: float = 5.0) -> Any:
    """:func:`outcome` of a call that may block for ever (a wrong argument taken as "no
    timeout"), on a thread of its own: one still blocked after ``seconds`` says so."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(outcome(call)), daemon=True)
    thread.start()
    thread.join(seconds)
    return box[0] if box else f"still blocked after {seconds:.0f} s"


def summary(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str, float)):
        return value
    if isinstance(value, TopicPartition):
        return (value.topic, value.partition, value.offset, value.metadata,
                None if value.error is None else value.error.name())
    if isinstance(value, (list, tuple)):
        return [summary(v) for v in value]
    if isinstance(value, confluent_kafka.Message) or hasattr(value, "error"):
        error = value.error()
        if error is not None:
            return f"error message {error.name()}"
        return ("message", value.partition(), value.offset())
    return type(value).__name__


def member_identity(value: Any) -> Any:
    """What ``consumer_group_metadata()`` tells a transactional producer: librdkafka's
    serialized form (``CGMDv2:``, generation, group id, member id, ...) naming a member of
    a generation; anything else as it is."""
    if not (isinstance(value, bytes) and value.startswith(b"CGMDv2:")):
        return value
    generation = struct.unpack("=i", value[7:11])[0]
    _group, member = value[11:].split(b"\x00")[:2]
    return {"form": "CGMDv2", "generation joined": generation > 0, "member id": bool(member)}


def poll_until(consumer: Any, want: int, timeout_s: float = 60.0) -> list[Any]:
    """Messages (no error events) until ``want`` arrived or ``timeout_s`` passed."""
    got: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < want and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg)
    return got


def wait_assigned(consumer: Any, timeout_s: float = 30.0) -> list[Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        consumer.poll(0.2)
        if consumer.assignment():
            return sorted(consumer.assignment(), key=lambda tp: tp.partition)
    return []


def recorder(events: list[Any]) -> dict[str, Callable[[Any, list[Any]], None]]:
    def cb(name: str) -> Callable[[Any, list[Any]], None]:
        def run(consumer: Any, partitions: list[Any]) -> None:
            events.append((name, sorted(tp.partition for tp in partitions)))
        return run
    return {"on_assign": cb("assign"), "on_revoke": cb("revoke"), "on_lost": cb("lost")}


# --- scenarios: each returns the observation of one side ------------------------------------


def sc_subscribe(make: Make, topic: str) -> Obs:
    events: list[Any] = []
    c = make()
    obs: Obs = {}
    obs["subscribe"] = outcome(lambda: c.subscribe([topic], **recorder(events)))
    obs["read"] = len(poll_until(c, 2 * PER_PARTITION))
    obs["assignment"] = summary(sorted(c.assignment(), key=lambda tp: tp.partition))
    obs["on_assign"] = [e for e in events if e[0] == "assign"][:1]
    obs["memberid is a string"] = isinstance(c.memberid(), str)
    obs["assign outside a callback"] = outcome(lambda: c.assign([TopicPartition(topic, 0)]))
    obs["consumer_group_metadata"] = member_identity(outcome(c.consumer_group_metadata))
    obs["unsubscribe"] = outcome(c.unsubscribe)
    for _ in range(5):  # librdkafka hands the partitions back in the next poll()
        c.poll(0.2)
    obs["revoked on unsubscribe"] = sorted({p for e in events if e[0] == "revoke" for p in e[1]})
    obs["assignment after unsubscribe"] = summary(c.assignment())
    obs["assign after unsubscribe"] = outcome(lambda: c.assign([TopicPartition(topic, 0)]))
    obs["incremental_assign after unsubscribe"] = outcome(
        lambda: c.incremental_assign([TopicPartition(topic, 1)]))
    obs["close"] = outcome(c.close)
    return obs


def sc_consume(make: Make, topic: str) -> Obs:
    c = make()
    c.subscribe([topic])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < 2 * PER_PARTITION and time.monotonic() < deadline:
        got.extend(m for m in c.consume(50, 0.5) if m.error() is None)
    obs: Obs = {"consumed": len(got),
                "consume(0)": outcome(lambda: c.consume(0, 0.1)),
                "consume(-1 messages)": outcome(lambda: c.consume(-1, 0.1))}
    c.close()
    return obs


def sc_commits(make: Make, topic: str) -> Obs:
    c = make(**{"enable.auto.commit": False})
    c.subscribe([topic])
    msgs = poll_until(c, 2 * PER_PARTITION)
    obs: Obs = {"read": len(msgs)}
    by_part = {m.partition(): m for m in msgs if m.offset() == 4}
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    def committed() -> Any:
        return summary(sorted(c.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)],
                                          timeout=10), key=lambda tp: tp.partition))

    obs["commit(message)"] = outcome(lambda: c.commit(message=by_part[0], asynchronous=False))
    obs["committed after commit(message)"] = committed()
    obs["commit(offsets, metadata)"] = outcome(lambda: c.commit(
        offsets=[TopicPartition(topic, 1, 3, metadata="note")], asynchronous=False))
    obs["committed with metadata"] = committed()
    obs["commit(offsets, metadata '')"] = outcome(lambda: c.commit(
        offsets=[TopicPartition(topic, 1, 4, metadata="")], asynchronous=False))
    obs["committed with metadata ''"] = committed()
    obs["commit() sync"] = outcome(lambda: c.commit(asynchronous=False))
    obs["committed after commit()"] = committed()
    obs["commit(message and offsets)"] = outcome(
        lambda: c.commit(message=msgs[0], offsets=[tp0], asynchronous=False))
    c.seek(TopicPartition(topic, 0, 2))
    again = poll_until(c, 1)
    obs["after seek"] = summary(again[:1])
    obs["commit() async"] = outcome(lambda: c.commit())
    obs["position"] = summary(sorted(c.position([tp0, tp1]), key=lambda tp: tp.partition))
    obs["pause"] = outcome(lambda: c.pause([tp0]))
    obs["resume"] = outcome(lambda: c.resume([tp0]))
    obs["watermarks"] = outcome(lambda: c.get_watermark_offsets(tp0, timeout=10))
    obs["offsets_for_times"] = outcome(
        lambda: [tp.offset for tp in c.offsets_for_times([TopicPartition(topic, 0, 0)],
                                                          timeout=10)])
    obs["list_topics has the topic"] = topic in c.list_topics(topic, timeout=10).topics
    c.close()
    obs["memberid after close"] = outcome(c.memberid)
    obs["poll after close"] = outcome(lambda: c.poll(0.1))
    obs["consume after close"] = outcome(lambda: c.consume(1, 0.1))
    obs["commit after close"] = outcome(lambda: c.commit(offsets=[tp0]))
    obs["assignment after close"] = outcome(c.assignment)
    obs["consumer_group_metadata after close"] = outcome(c.consumer_group_metadata)
    obs["close again"] = outcome(c.close)
    return obs


def sc_store_offsets(make: Make, topic: str) -> Obs:
    c = make(**{"enable.auto.commit": False, "enable.auto.offset.store": False})
    c.subscribe([topic])
    msgs = poll_until(c, 2 * PER_PARTITION)
    obs: Obs = {"read": len(msgs)}
    third = [m for m in msgs if m.partition() == 0 and m.offset() == 2]
    obs["store_offsets(message)"] = outcome(lambda: c.store_offsets(message=third[0]))
    obs["store_offsets(offsets)"] = outcome(
        lambda: c.store_offsets(offsets=[TopicPartition(topic, 1, 7)]))
    obs["commit()"] = outcome(lambda: c.commit(asynchronous=False))
    obs["committed"] = summary(sorted(c.committed(
        [TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10),
        key=lambda tp: tp.partition))
    c.close()
    return obs


def sc_manual(make: Make, topic: str) -> Obs:
    """Manual assignment with a group.id: no subscribe(), commits to the group."""
    c = make(**{"enable.auto.commit": False})
    obs: Obs = {}
    obs["assign"] = outcome(lambda: c.assign([TopicPartition(topic, 0, 0)]))
    obs["read"] = len(poll_until(c, PER_PARTITION))
    obs["incremental_assign"] = outcome(
        lambda: c.incremental_assign([TopicPartition(topic, 1, 5)]))
    obs["read after incremental_assign"] = len(poll_until(c, PER_PARTITION - 5))
    obs["assignment"] = summary(sorted(c.assignment(), key=lambda tp: tp.partition))
    obs["commit()"] = outcome(lambda: c.commit(asynchronous=False))
    obs["committed"] = summary(sorted(c.committed(
        [TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10),
        key=lambda tp: tp.partition))
    obs["memberid"] = type(outcome(c.memberid)).__name__
    obs["consumer_group_metadata"] = outcome(c.consumer_group_metadata)
    obs["incremental_unassign"] = outcome(
        lambda: c.incremental_unassign([TopicPartition(topic, 1)]))
    obs["unassign"] = outcome(c.unassign)
    obs["assignment after unassign"] = summary(c.assignment())
    c.close()
    return obs


def sc_manual_auto_commit(make: Make, topic: str) -> Obs:
    """Manual assignment with automatic commits: close() commits what was read."""
    c = make(**{"auto.commit.interval.ms": 500})
    c.assign([TopicPartition(topic, 0, 0)])
    obs: Obs = {"read": len(poll_until(c, PER_PARTITION))}
    c.close()
    check = make(**{"enable.auto.commit": False})
    obs["committed"] = summary(check.committed([TopicPartition(topic, 0)], timeout=10))
    check.close()
    return obs


def sc_context_manager(make: Make, topic: str) -> Obs:
    if not hasattr(confluent_kafka.Consumer, "__enter__"):
        # confluent-kafka before 2.? has no context manager; ours has one on every release
        return {"context manager": "not in this confluent-kafka"}
    with make() as c:
        c.subscribe([topic])
        read = len(poll_until(c, 1))
    return {"read": read, "poll after with": outcome(lambda: c.poll(0.1))}


def sc_invalid(make: Make, topic: str) -> Obs:
    obs: Obs = {"unknown config key": outcome(lambda: make(**{"no.such.key": 1}))}
    c = make()
    obs["subscribe([])"] = outcome(lambda: c.subscribe([]))
    obs["subscribe(non-callable on_assign)"] = outcome(
        lambda: c.subscribe([topic], on_assign=3))
    obs["commit() before any assignment"] = outcome(lambda: c.commit(asynchronous=False))
    obs["store_offsets() with auto store"] = outcome(
        lambda: c.store_offsets(offsets=[TopicPartition(topic, 0, 1)]))
    c.close()
    return obs


def sc_session_below_minimum(make: Make, topic: str) -> Obs:
    """session.timeout.ms 100: constructs; the broker refuses the join, poll() reports it."""
    obs: Obs = {}
    try:
        c = make(**{"session.timeout.ms": 100, "heartbeat.interval.ms": 3000,
                    "max.poll.interval.ms": 6000})
    except Exception as exc:
        return {"constructor": f"raises {type(exc).__name__}"}
    try:
        c.subscribe([topic])
        event: Any = None
        raised = None
        deadline = time.monotonic() + 20
        while event is None and raised is None and time.monotonic() < deadline:
            try:
                msg = c.poll(0.5)
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                name = err.name() if isinstance(err, KafkaError) else "?"
                raised = f"raises KafkaException({name})"
                break
            if msg is not None and msg.error() is not None:
                event = msg
        obs["poll"] = raised if raised is not None else summary(event)
        if event is not None:
            obs["commit(error message)"] = outcome(lambda: c.commit(message=event))
            obs["store_offsets(error message)"] = outcome(lambda: c.store_offsets(message=event))
    finally:
        c.close()
    return obs


def stall(make: Make, topic: str, api: str, deserializer: bool = False) -> Obs:
    """Stall past max.poll.interval.ms, then poll()/consume(): the error, on_lost, rejoin,
    in the order the application sees them."""
    events: list[Any] = []
    c = make(deserializer=deserializer, **{"max.poll.interval.ms": STALL_POLL_MS})
    callbacks = recorder(events)
    if deserializer:  # as confluent-kafka's own test: no on_lost, on_revoke gets the loss
        del callbacks["on_lost"]
    c.subscribe([topic], **callbacks)
    obs: Obs = {"assigned": summary(wait_assigned(c))}
    events.clear()
    # past max.poll.interval.ms (the consumer protocol's may be longer: see side_config), and
    # a few heartbeats more
    time.sleep(max(STALL_POLL_MS, consumer_protocol_min_poll_ms()) / 1000 + 3)
    outcomes: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(outcomes) < 60:
        result = outcome(lambda: c.poll(0.3) if api == "poll" else c.consume(1, 0.3))
        if isinstance(result, list):
            result = result[0] if result else None
        if isinstance(result, str):  # an exception or an error message
            outcomes.append(result)
            events.append((result, []))
        if [e for e in events if e[0] == "assign"]:
            break
    obs["raised"] = outcomes
    obs["callbacks"] = [e[0] for e in events if e[0] in ("assign", "revoke", "lost")]
    obs["order"] = [e[0] for e in events]
    c.close()
    return obs


def sc_stall_poll(make: Make, topic: str) -> Obs:
    return stall(make, topic, "poll")


def sc_stall_consume(make: Make, topic: str) -> Obs:
    return stall(make, topic, "consume")


def sc_stall_deserializing(make: Make, topic: str) -> Obs:
    """The same with a ``DeserializingConsumer``: its ``poll()`` raises ``ConsumeError``."""
    return stall(make, topic, "poll", deserializer=True)


def sc_commit_paths_after_rebalance(make: Make, topic: str) -> Obs:
    """After a rebalance, every way to commit commits what the application consumed."""
    a = make(**{"enable.auto.commit": False})
    a.subscribe([topic])
    msgs = poll_until(a, 2 * PER_PARTITION)
    b = make(**{"enable.auto.commit": False})
    b.subscribe([topic])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (a.assignment() and b.assignment()):
        a.poll(0.1)
        b.poll(0.1)
    obs: Obs = {"read": len(msgs), "a holds": len(a.assignment()), "b holds": len(b.assignment())}
    mine = a.assignment()
    held = [m for m in msgs if (m.topic(), m.partition()) in
            {(tp.topic, tp.partition) for tp in mine}]

    def committed() -> Any:
        # (which partition each keeps is the assignor's choice: only the offsets are compared)
        return [tp.offset for tp in a.committed(mine, timeout=10)]

    obs["commit() sync"] = outcome(lambda: [tp.offset for tp in a.commit(asynchronous=False)])
    obs["committed after commit() sync"] = committed()
    obs["commit(offsets)"] = outcome(lambda: [tp.offset for tp in a.commit(
        offsets=[TopicPartition(tp.topic, tp.partition, 7) for tp in mine],
        asynchronous=False)])
    obs["committed after commit(offsets)"] = committed()
    obs["commit(message)"] = outcome(lambda: [tp.offset for tp in a.commit(
        message=held[-1], asynchronous=False)] if held else "nothing held")
    obs["committed after commit(message)"] = committed()
    obs["commit(offsets) before commit() async"] = outcome(lambda: [tp.offset for tp in a.commit(
        offsets=[TopicPartition(tp.topic, tp.partition, 3) for tp in mine], asynchronous=False)])
    obs["commit() async"] = outcome(a.commit)
    for _ in range(10):  # its result arrives while polling
        a.poll(0.1)
    obs["committed after commit() async"] = committed()
    b.close()
    a.close()
    return obs


def rebalanced_pair(make: Make, topic: str, **a_conf: Any) -> tuple[Any, Any, Obs]:
    """``a`` reads the whole topic, then ``b`` joins: each ends up holding partitions."""
    a = make(**a_conf)
    a.subscribe([topic])
    obs: Obs = {"read": len(poll_until(a, 2 * PER_PARTITION))}
    b = make(**{"enable.auto.commit": False})
    b.subscribe([topic])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (a.assignment() and b.assignment()):
        a.poll(0.1)
        b.poll(0.1)
    obs["a holds"] = len(a.assignment())
    obs["b holds"] = len(b.assignment())
    return a, b, obs


def sc_auto_commit_after_rebalance(make: Make, topic: str) -> Obs:
    """After a rebalance, the automatic commit commits what the application consumed (the
    end of what ``a`` keeps: it read the whole topic before ``b`` joined), never less."""
    a, b, obs = rebalanced_pair(make, topic, **{"auto.commit.interval.ms": 500})
    mine = a.assignment()
    deadline = time.monotonic() + 3  # six automatic commit intervals
    while time.monotonic() < deadline:
        a.poll(0.1)
    obs["committed by the automatic commit"] = [tp.offset for tp in a.committed(mine, timeout=10)]
    b.close()
    a.close()
    return obs


def sc_close_commit_after_rebalance(make: Make, topic: str) -> Obs:
    """After a rebalance, close() commits what the application consumed (no automatic
    commit comes first: its interval is longer than the scenario)."""
    a, b, obs = rebalanced_pair(make, topic, **{"auto.commit.interval.ms": 600_000})
    mine = [TopicPartition(tp.topic, tp.partition) for tp in a.assignment()]
    obs["committed before close()"] = [tp.offset for tp in b.committed(mine, timeout=10)]
    a.close()
    obs["committed by close()"] = [tp.offset for tp in b.committed(mine, timeout=10)]
    b.close()
    return obs


def sc_fenced(make: Make, topic: str) -> Obs:
    """A second static member with the same group.instance.id fences the first: its next
    poll() reports ``_FATAL``, as confluent-kafka's, from the heartbeat alone (no automatic
    commit, whose refusal would also tell the bridge: the heartbeat must)."""
    instance = {"group.instance.id": f"static-{uuid.uuid4().hex[:6]}",
                "enable.auto.commit": False}
    first = make(**instance)
    first.subscribe([topic])
    obs: Obs = {"assigned": len(wait_assigned(first))}
    second = make(**instance)
    second.subscribe([topic])
    errors: list[Any] = []
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline and not errors:
        second.poll(0.1)
        result = outcome(lambda: first.poll(0.1))
        if isinstance(result, str):
            errors.append(result)
    obs["first's poll"] = errors
    obs["first's commit after"] = outcome(
        lambda: first.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False))
    obs["second assigned"] = len(wait_assigned(second))
    for consumer in (second, first):
        outcome(consumer.close)
    return obs


# --- one scenario per way the bridge once differed, called as a new user would ---------------


def sc_assign_in_on_assign(make: Make, topic: str) -> Obs:
    """``assign()`` inside ``on_assign`` (what the docs once suggested): refused in a
    cooperative group (librdkafka's ``_STATE``); ``incremental_assign()``, which its message
    names, is taken, and every partition held is fetched through a second member's join and
    leave; ``close()`` succeeds."""
    said: list[Any] = []

    def on_assign(consumer: Any, partitions: list[Any]) -> None:
        if not partitions:  # (librdkafka also calls it with none: that is listed elsewhere)
            return
        at_start = [TopicPartition(tp.topic, tp.partition, 0) for tp in partitions]
        said.append(outcome(lambda: consumer.assign(at_start)))
        said.append(outcome(lambda: consumer.incremental_assign(at_start)))

    a = make()
    a.subscribe([topic], on_assign=on_assign)
    obs: Obs = {"read": len(poll_until(a, 2 * PER_PARTITION))}
    b = make()
    b.subscribe([topic])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (a.assignment() and b.assignment()):
        a.poll(0.1)
        b.poll(0.1)
    obs["both hold"] = bool(a.assignment() and b.assignment())
    b.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(a.assignment()) < PARTITIONS:
        a.poll(0.1)
    obs["assign(), incremental_assign() in on_assign"] = sorted(set(map(str, said)))
    obs["fetched after the rebalances"] = len(a.assignment())
    obs["close"] = outcome(a.close)
    return obs


def sc_assign_outside_callbacks(make: Make, topic: str) -> Obs:
    """While subscribed, the assignment calls outside a callback are confluent-kafka's:
    the incremental ones change what is fetched, ``assign()`` is refused (cooperative)."""
    c = make(**{"enable.auto.commit": False})
    c.subscribe([topic])
    obs: Obs = {"assigned": len(wait_assigned(c))}
    poll_until(c, 2 * PER_PARTITION)
    tp0 = TopicPartition(topic, 0)
    obs["incremental_unassign"] = outcome(lambda: c.incremental_unassign([tp0]))
    obs["assignment after"] = len(c.assignment())
    obs["incremental_assign"] = outcome(
        lambda: c.incremental_assign([TopicPartition(topic, 0, 0)]))
    obs["read again"] = sorted({m.partition() for m in poll_until(c, PER_PARTITION, 20)})
    obs["assign"] = outcome(lambda: c.assign([TopicPartition(topic, 0, 0)]))
    obs["unassign"] = outcome(c.unassign)
    obs["close"] = outcome(c.close)
    return obs


def sc_keyword_construction(make: Make, topic: str) -> Obs:
    """``Consumer(**conf)``: confluent-kafka takes the configuration as keywords too."""
    try:
        c = make(as_keywords=True)
    except Exception as exc:
        return {"constructor": f"raises {type(exc).__name__}"}
    c.subscribe([topic])
    obs: Obs = {"read": len(poll_until(c, 2 * PER_PARTITION))}
    obs["close"] = outcome(c.close)
    return obs


def sc_store_offsets_unassigned(make: Make, topic: str) -> Obs:
    """``store_offsets()`` of a partition another member holds: refused, stored nowhere,
    so not committed when that partition comes to this member later."""
    a, b, obs = rebalanced_pair(make, topic, **{"enable.auto.commit": False,
                                                "enable.auto.offset.store": False})
    mine = a.assignment()
    if len(mine) != 1:
        return obs
    other = [TopicPartition(topic, p) for p in range(PARTITIONS) if p != mine[0].partition]
    obs["store_offsets(other's)"] = outcome(lambda: a.store_offsets(
        offsets=[TopicPartition(tp.topic, tp.partition, 5) for tp in other]))
    obs["store_offsets(mine and other's)"] = outcome(lambda: a.store_offsets(offsets=[
        TopicPartition(mine[0].topic, mine[0].partition, 3),
        *(TopicPartition(tp.topic, tp.partition, 6) for tp in other)]))
    obs["commit()"] = outcome(lambda: [tp.offset for tp in a.commit(asynchronous=False)])
    b.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(a.assignment()) < PARTITIONS:
        a.poll(0.1)
    obs["commit() once it holds both"] = outcome(lambda: a.commit(asynchronous=False))
    obs["committed for the other partition"] = [
        tp.offset for tp in a.committed(other, timeout=10)]
    a.close()
    return obs


def sc_subscribe_not_a_list(make: Make, topic: str) -> Obs:
    """``subscribe()`` takes a list: a string (not its letters) or a tuple is a TypeError."""
    c = make()
    obs: Obs = {"subscribe(str)": outcome(lambda: c.subscribe(topic)),
                "subscribe(tuple)": outcome(lambda: c.subscribe((topic,)))}
    obs["close"] = outcome(c.close)
    return obs


def sc_auto_commit_interval(make: Make, topic: str) -> Obs:
    """``auto.commit.interval.ms``: 0 disables periodic commits, -1 is refused."""
    obs: Obs = {"interval -1": outcome(lambda: make(**{"auto.commit.interval.ms": -1}))}
    c = make(**{"auto.commit.interval.ms": 0})
    c.subscribe([topic])
    obs["read"] = len(poll_until(c, 2 * PER_PARTITION))
    deadline = time.monotonic() + 2  # long past any interval but 0
    while time.monotonic() < deadline:
        c.poll(0.1)
    parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    obs["committed while polling"] = [tp.offset for tp in c.committed(parts, timeout=10)]
    c.close()
    return obs


def sc_on_commit(make: Make, topic: str) -> Obs:
    """``on_commit`` is called for asynchronous commits, not for synchronous ones."""
    calls: list[Any] = []

    def on_commit(err: Any, partitions: list[Any]) -> None:
        calls.append((None if err is None else err.name(),
                      sorted((tp.partition, tp.offset) for tp in partitions)))

    c = make(**{"enable.auto.commit": False, "on_commit": on_commit})
    c.subscribe([topic])
    obs: Obs = {"read": len(poll_until(c, 2 * PER_PARTITION))}
    obs["commit sync"] = outcome(lambda: c.commit(
        offsets=[TopicPartition(topic, 0, 2)], asynchronous=False))
    for _ in range(10):
        c.poll(0.1)
    obs["on_commit after the sync commit"] = list(calls)
    calls.clear()
    obs["commit async"] = outcome(lambda: c.commit(offsets=[TopicPartition(topic, 0, 3)]))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not calls:
        c.poll(0.1)
    obs["on_commit after the async commit"] = list(calls)
    c.close()
    return obs


def sc_call_arguments(make: Make, topic: str) -> Obs:
    """Arguments confluent-kafka refuses or still takes."""
    c = make(**{"enable.auto.commit": False, "enable.auto.offset.store": False})
    c.subscribe([topic])
    obs: Obs = {"read": len(poll_until(c, 2 * PER_PARTITION))}
    obs["poll(None)"] = bounded(lambda: c.poll(None))
    obs["consume(timeout=None)"] = bounded(lambda: c.consume(timeout=None))
    obs["store_offsets()"] = outcome(c.store_offsets)
    obs["commit(async=False)"] = outcome(lambda: [tp.offset for tp in c.commit(
        offsets=[TopicPartition(topic, 0, 1)], **{"async": False})])
    c.close()
    return obs


def sc_dropped_without_close(make: Make, topic: str) -> Obs:
    """A subscribed consumer the application drops without ``close()`` is collected (plain:
    through a subclass that adds nothing but the weak reference slot)."""
    c = make(tracked=False)
    c.subscribe([topic])
    obs: Obs = {"read": len(poll_until(c, 1))}
    ref = weakref.ref(c)
    del c
    deadline = time.monotonic() + 10
    while ref() is not None and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.1)
    obs["collected"] = ref() is None
    return obs


def sc_unsubscribe_hand_back(make: Make, topic: str) -> Obs:
    """``unsubscribe()`` returns at once: the rebalance callbacks, in order, each with the
    call that ran it, and the offsets the hand-back committed (auto-commit, whose interval
    is too long to commit before)."""
    where = ["subscribe"]
    events: list[Any] = []

    def cb(name: str) -> Callable[[Any, list[Any]], None]:
        def run(consumer: Any, partitions: list[Any]) -> None:
            events.append((name, where[0], sorted(tp.partition for tp in partitions)))
        return run

    c = make(**{"auto.commit.interval.ms": 600_000})
    c.subscribe([topic], on_assign=cb("assign"), on_revoke=cb("revoke"), on_lost=cb("lost"))
    where[0] = "poll"
    obs: Obs = {"read": len(poll_until(c, 2 * PER_PARTITION))}
    where[0] = "unsubscribe"
    obs["unsubscribe"] = outcome(c.unsubscribe)
    where[0] = "poll after unsubscribe"
    deadline = time.monotonic() + 30  # until the revoke comes (bounded: a loaded machine)
    while time.monotonic() < deadline and not any(e[0] == "revoke" for e in events):
        c.poll(0.2)
    obs["callbacks"] = events
    parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    obs["committed"] = [tp.offset for tp in c.committed(parts, timeout=10)]
    where[0] = "close"
    obs["close"] = outcome(c.close)
    obs["callbacks in close"] = [e for e in events if e[1] == "close"]
    return obs


def sc_callback_errors(make: Make, topic: str) -> Obs:
    """An exception raised by ``on_revoke`` run for ``unsubscribe()``, then for ``close()``:
    where the application gets it."""
    def on_revoke(consumer: Any, partitions: list[Any]) -> None:
        if partitions:
            raise ValueError("on_revoke failed")

    c = make()
    c.subscribe([topic], on_revoke=on_revoke)
    obs: Obs = {"assigned": len(wait_assigned(c))}
    obs["unsubscribe"] = outcome(c.unsubscribe)
    obs["polls after"] = sorted({str(outcome(lambda: c.poll(0.2))) for _ in range(10)})
    c.subscribe([topic], on_revoke=on_revoke)
    obs["assigned again"] = len(wait_assigned(c))
    obs["close"] = outcome(c.close)
    return obs


def sc_identity_in_close_callback(make: Make, topic: str) -> Obs:
    """``on_revoke`` run by ``close()`` may still ask who the member is (an exactly-once
    ``on_revoke`` hands ``consumer_group_metadata()`` to ``send_offsets_to_transaction()``);
    after ``close()`` the same calls raise."""
    seen: list[Any] = []

    def on_revoke(consumer: Any, partitions: list[Any]) -> None:
        if partitions:
            seen.append(outcome(lambda: consumer.memberid() is not None))
            seen.append(outcome(lambda: member_identity(consumer.consumer_group_metadata())))

    c = make()
    c.subscribe([topic], on_revoke=on_revoke)
    obs: Obs = {"assigned": len(wait_assigned(c))}
    obs["close"] = outcome(c.close)
    obs["in on_revoke run by close()"] = seen
    obs["memberid() after close()"] = outcome(c.memberid)
    return obs


def sc_statistics(make: Make, topic: str) -> Obs:
    """librdkafka's statistics (``stats_cb``) show the group as its member sees it."""
    stats: list[str] = []
    c = make(**{"statistics.interval.ms": 500, "stats_cb": stats.append})
    c.subscribe([topic])
    obs: Obs = {"read": len(poll_until(c, 2 * PER_PARTITION))}
    deadline = time.monotonic() + 2  # a few more intervals, all of them after the join
    while time.monotonic() < deadline:
        c.poll(0.1)
    cgrp = json.loads(stats[-1]).get("cgrp", {}) if stats else {}
    obs["cgrp state"] = (cgrp.get("state"), cgrp.get("join_state"))
    obs["cgrp assignment_size"] = cgrp.get("assignment_size")
    obs["cgrp rebalanced"] = cgrp.get("rebalance_cnt", 0) > 0
    c.close()
    return obs


SCENARIOS: dict[str, Callable[[Make, str], Obs]] = {
    "statistics": sc_statistics,
    "identity-in-close-callback": sc_identity_in_close_callback,
    "callback-errors": sc_callback_errors,
    "unsubscribe-hand-back": sc_unsubscribe_hand_back,
    "dropped-without-close": sc_dropped_without_close,
    "assign-in-on-assign": sc_assign_in_on_assign,
    "assign-outside-callbacks": sc_assign_outside_callbacks,
    "keyword-construction": sc_keyword_construction,
    "store-offsets-unassigned": sc_store_offsets_unassigned,
    "subscribe-not-a-list": sc_subscribe_not_a_list,
    "auto-commit-interval": sc_auto_commit_interval,
    "on-commit": sc_on_commit,
    "call-arguments": sc_call_arguments,
    "fenced": sc_fenced,
    "subscribe": sc_subscribe,
    "consume": sc_consume,
    "commits": sc_commits,
    "store-offsets": sc_store_offsets,
    "manual-assignment": sc_manual,
    "manual-auto-commit": sc_manual_auto_commit,
    "context-manager": sc_context_manager,
    "invalid-arguments": sc_invalid,
    "session-below-minimum": sc_session_below_minimum,
    "max-poll-exceeded-poll": sc_stall_poll,
    "max-poll-exceeded-consume": sc_stall_consume,
    "max-poll-exceeded-deserializing": sc_stall_deserializing,
    "commit-after-rebalance": sc_commit_paths_after_rebalance,
    "auto-commit-after-rebalance": sc_auto_commit_after_rebalance,
    "close-commit-after-rebalance": sc_close_commit_after_rebalance,
}


# --- the listed differences ----------------------------------------------------------------

_ROW = re.compile(r"^\|\s*`(?P<protocol>classic|consumer|both)`\s*\|\s*`(?P<case>[a-z0-9-]+)`"
                  r"\s*\|\s*`(?P<key>[^`]+)`\s*\|(?P<rest>.*)\|\s*$")


def listed_differences() -> dict[tuple[str, str], set[str]]:
    """(protocol, case) -> observation keys docs/confluent.md lists as different."""
    text = DOC.read_text()
    start = text.index("<!-- contract-differences:start -->")
    end = text.index("<!-- contract-differences:end -->")
    out: dict[tuple[str, str], set[str]] = {}
    for line in text[start:end].splitlines():
        m = _ROW.match(line)
        if m is None:
            continue
        reason = m["rest"].split("|")[-1].strip()
        assert reason, f"docs/confluent.md: no reason given for {line!r}"
        protocols = PROTOCOLS if m["protocol"] == "both" else (m["protocol"],)
        for protocol in protocols:
            out.setdefault((protocol, m["case"]), set()).add(m["key"])
    return out


def test_the_listed_differences_name_known_cases() -> None:
    """Every line of the differences table names a scenario of this file and gives a reason."""
    listed = listed_differences()
    assert {case for _, case in listed} <= set(SCENARIOS)


# --- the contract --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def contract_topic(kafka_broker: BrokerHandle) -> Iterator[str]:
    from kafka_assignors.embedded.admin import create_topic, delete_topic

    name = f"contract-{uuid.uuid4().hex[:8]}"
    # The messages carry fixed timestamps of 2023 (offsets_for_times is observed): without
    # retention.ms=-1 the broker's retention check (every 5 minutes) deletes them all as
    # older than the default 7 days, and every scenario that starts after it reads nothing.
    create_topic(kafka_broker.bootstrap, name, PARTITIONS, 1, {"retention.ms": "-1"})
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for p in range(PARTITIONS):
        for i in range(PER_PARTITION):
            producer.produce(name, value=f"{p}-{i}".encode(), partition=p,
                             timestamp=1_700_000_000_000 + i)
    assert producer.flush(30) == 0
    yield name
    delete_topic(kafka_broker.bootstrap, name)


#: How many scenarios (each with its two sides) run at the same time: they are independent
#: (a group of their own each, the topic only read), and most of a scenario's time is spent
#: waiting for the broker (joins, session and poll-interval timeouts).
PARALLEL = 3
#: The scenarios that wait longest, started first.
SLOW_FIRST = ("max-poll-exceeded-poll", "max-poll-exceeded-consume",
              "max-poll-exceeded-deserializing", "fenced",
              "session-below-minimum", "commit-after-rebalance", "assign-in-on-assign",
              "store-offsets-unassigned")


@pytest.fixture(scope="module")
def observations(request: pytest.FixtureRequest, kafka_broker: BrokerHandle,
                 contract_topic: str) -> Iterator[dict[tuple[str, str, str], Any]]:
    """The observations of every selected (scenario, protocol), started all at once on first
    use and run ``PARALLEL`` scenarios at a time; each test waits for its own."""
    wanted = sorted(
        {(item.callspec.params["case"], item.callspec.params["protocol"])
         for item in request.session.items
         if getattr(item, "originalname", None) == "test_contract"
         and hasattr(item, "callspec")},
        key=lambda cp: (SLOW_FIRST.index(cp[0]) if cp[0] in SLOW_FIRST else len(SLOW_FIRST),
                        cp))
    pool = concurrent.futures.ThreadPoolExecutor(2 * PARALLEL, thread_name_prefix="contract")
    futures = {(case, protocol, side): pool.submit(observe, case, protocol, side,
                                                   kafka_broker.bootstrap, contract_topic)
               for case, protocol in wanted for side in SIDES}
    try:
        yield futures
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("case", sorted(SCENARIOS))
def test_contract(case: str, protocol: str,
                  observations: dict[tuple[str, str, str], Any]) -> None:
    """Ours gives the application what plain confluent-kafka gives it, but where listed."""
    observed = {side: observations[(case, protocol, side)].result(timeout=600)
                for side in SIDES}
    plain, ours = observed["plain"], observed["ours"]
    differing = {k for k in plain.keys() | ours.keys() if plain.get(k) != ours.get(k)}
    listed = listed_differences().get((protocol, case), set())
    shown = "\n".join(f"  {k}: plain {plain.get(k)!r} / ours {ours.get(k)!r}"
                      for k in sorted(plain.keys() | ours.keys()))
    assert differing == listed, (
        f"{protocol} {case}: differences observed {sorted(differing)}, listed in "
        f"docs/confluent.md {sorted(listed)}\n{shown}")


# --- other confluent-kafka releases ----------------------------------------------------------

#: set in the nested run under another confluent-kafka (it skips the test below)
IN_VENV_ENV = "KAFKA_ASSIGNORS_CONTRACT_IN_VENV"


def oldest_confluent() -> tuple[str, str]:
    """confluent-kafka's oldest supported release (the ``confluent`` extra's lower bound) and
    the Python of its venv: the one ``python -m integration_tests.prepare`` makes ahead for
    the compatibility cells (made here on first use otherwise).  The newest release the
    extra allows is the one this environment installs: the run above."""
    from .test_compat.client_envs import client_python
    from .test_compat.matrix import client_floor

    version = client_floor("confluent-kafka")
    return version, client_python("confluent-kafka", version)


def test_contract_under_the_oldest_supported_confluent_kafka(kafka_broker: BrokerHandle) -> None:
    """The same contract (both protocols) with confluent-kafka's oldest supported release."""
    if os.environ.get(IN_VENV_ENV):
        pytest.skip("already running under another confluent-kafka")
    from .client_venvs import child_env

    version, python = oldest_confluent()
    result = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--show-capture=no",
         "--tb=short", "-p", "no:logging", str(Path(__file__)), "-k", "test_contract["],
        env=child_env({"BOOTSTRAP_SERVERS": kafka_broker.bootstrap, IN_VENV_ENV: "1"}),
        capture_output=True, text=True, timeout=1800, check=False)
    shown = "\n".join(line for line in result.stdout.splitlines() if not line.startswith("%"))
    assert result.returncode == 0, f"confluent-kafka {version}:\n{shown[-8000:]}"
    assert " passed" in shown and " skipped" not in shown, shown[-2000:]
