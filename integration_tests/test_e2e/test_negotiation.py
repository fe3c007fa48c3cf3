"""Strategy negotiation on a real broker: the coordinator's vote, a refused member, a leader
change, and one group mixing kafka-python, confluent-kafka and the Java client."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

from kafka_assignors.embedded import GroupRunner
from kafka_assignors.embedded.image import version_of_image
from kafka_assignors.negotiation import (
    StrategyMismatchError,
    choose_strategy,
    describe_group_strategy,
    explain_strategy_mismatch,
)

from ..conftest import BrokerHandle
from ..ledger import minimal_moves, moved, spread
from .checks import (
    leader_lines,
    live_names,
    produce_probes,
    range_layout,
    readers_of,
    roundrobin_layout,
    strategy_lists,
    wait_described,
)
from .clients import ConfluentMember, Event, JavaConsoleConsumer

BS = "kafka_assignors:BalancedStickyAssignor"
MEMBER_OPTIONS = {"session_timeout_ms": 6_000, "heartbeat_interval_ms": 500}


def _leader_lines(group: GroupRunner) -> dict[str, list[str]]:
    return {v.name: leader_lines(group, v.index) for v in group.members() if v.alive}


def test_vote_refusal_and_leader_change_in_a_kafka_python_group(
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """range is chosen while one member lists only range and our members run it exactly;
    balanced-sticky wins the vote once that member is gone; a member sharing no strategy is
    refused with a clear error and the group does not notice; when the leader leaves, another
    member leads and the assignment stays sticky."""
    bootstrap = kafka_broker.bootstrap
    topic = make_topic(7)
    group = make_group([topic], [BS, "range"], log_level="INFO", **MEMBER_OPTIONS)
    group.add_member(name="m0")
    group.add_member(name="m1")
    old = group.add_member(name="m2", strategies=("range",))

    # 1. [balanced-sticky, range] x2 + [range]: range is the only candidate
    state = group.wait_stable(timeout=90, settle=1.0)
    assert choose_strategy(list(strategy_lists(group).values())) == "range"
    assert group.protocol() == "range"
    assert describe_group_strategy(bootstrap, group.group_id).strategy == "range"
    ids = {v.name: v.member_id for v in group.members() if v.alive}
    assert state == range_layout(ids, topic, 7), "our members must run range exactly"

    # 2. a member preferring range joins: still only one candidate
    group.add_member(name="m3", strategies=("range", BS))
    state = group.wait_stable(timeout=90, settle=1.0)
    assert group.protocol() == "range"

    # 3. the range-only member leaves: balanced-sticky wins 2:1 over m3's range
    group.stop_member(old)
    state = group.wait_stable(timeout=90, settle=1.0)
    lists = strategy_lists(group)
    assert choose_strategy(list(lists.values())) == "balanced-sticky"
    assert group.protocol() == "balanced-sticky"
    assert describe_group_strategy(bootstrap, group.group_id).strategy == "balanced-sticky"
    assert spread(state) <= 1

    # 4. a member that shares no strategy is refused; the group is unaffected
    generations = {v.name: v.generation for v in group.members() if v.alive and not v.stopping}
    outsider = KafkaConsumer(
        topic, bootstrap_servers=bootstrap.split(","), group_id=group.group_id,
        client_id="outsider", partition_assignment_strategy=[RoundRobinPartitionAssignor],
        session_timeout_ms=6_000, heartbeat_interval_ms=500,
    )
    try:
        with pytest.raises(StrategyMismatchError) as refused:
            deadline = time.monotonic() + 60
            with explain_strategy_mismatch(outsider):
                while time.monotonic() < deadline:
                    outsider.poll(timeout_ms=500)
    finally:
        outsider.close()
    text = str(refused.value)
    print(f"\nrefused member's error: {text}")
    assert "INCONSISTENT_GROUP_PROTOCOL" in text and group.group_id in text
    assert "offers at least one strategy that every current member" in text
    assert "This consumer offered: ['roundrobin']" in text
    assert "protocol type 'consumer', current strategy 'balanced-sticky', state Stable" in text
    assert "['roundrobin', 'balanced-sticky']" in text  # the strategy list that would join
    assert refused.value.group_strategy == "balanced-sticky"
    time.sleep(2.0)
    assert group.wait_stable(timeout=30, settle=1.0) == state
    assert {v.name: v.generation for v in group.members()
            if v.alive and not v.stopping} == generations, "the refused join caused a rebalance"

    # 5. the leader leaves: another member leads, and only the leader's partitions move
    lines = _leader_lines(group)
    assert any(lines[n] for n in state), f"no member logged an assignment: {lines}"
    # the leader of the current generation is the one that assigned last
    leader = max((n for n in state if lines[n]), key=lambda n: lines[n][-1])
    before = state
    group.stop_member(next(v.index for v in group.members() if v.name == leader))
    state = group.wait_stable(timeout=90, settle=1.0)
    after = _leader_lines(group)
    new_leaders = [n for n in state if len(after[n]) > len(lines.get(n, []))]
    remaining = strategy_lists(group)
    expected = choose_strategy(list(remaining.values()))  # a 1:1 tie goes to balanced-sticky
    print(f"leader {leader} left; new leader {new_leaders}; vote {remaining} -> {expected}")
    if _ties_by_member_order(kafka_broker):
        # Kafka 3.9's coordinator (Scala) counts votes in a map ordered by member id: a 1:1
        # tie goes either way there; whichever won, every member runs it
        chosen = describe_group_strategy(bootstrap, group.group_id).strategy
        assert chosen in ("balanced-sticky", "range") and group.protocol() == chosen
        if chosen == "range":
            return
    assert new_leaders, f"no remaining member computed an assignment: {after}"
    assert group.protocol() == expected == "balanced-sticky"
    assert moved(before, state) == minimal_moves(before, live_names(group), 7)
    assert spread(state) <= 1


def _ties_by_member_order(broker: BrokerHandle) -> bool:
    """Whether the broker breaks a vote tie by member order (Kafka 3.x) rather than by the
    strategy names' hashes (4.x, what ``choose_strategy`` models)."""
    version = version_of_image(broker.cluster.image) if broker.cluster is not None else None
    return version is not None and int(version.split(".")[0]) < 4


def test_kafka_python_confluent_and_java_members_share_a_group(
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """kafka-python members with our assignors, confluent-kafka members and the Java console
    consumer in one group: the coordinator picks what the vote rule predicts (roundrobin, then
    range after two members leave), every library's leader lays partitions out the textbook
    way, and a message sent to each partition is read by its owner and nobody else."""
    if kafka_broker.cluster is None:
        pytest.skip("BOOTSTRAP_SERVERS is set: the Java client runs from the broker image")
    bootstrap, image = kafka_broker.bootstrap, kafka_broker.cluster.image
    partitions = 12
    topic = make_topic(partitions)
    tps = [(topic, p) for p in range(partitions)]
    group = make_group([topic], [BS, "range", "roundrobin"], report_records=True,
                       session_timeout_ms=10_000)
    gid = group.group_id
    group.add_member(name="kp-0")
    group.add_member(name="kp-1")
    confluent = [ConfluentMember(bootstrap, gid, [topic], "roundrobin,range", name=f"cf-{i}")
                 for i in range(2)]
    java: JavaConsoleConsumer | None = None
    try:
        java = JavaConsoleConsumer(image, bootstrap, gid, topic, ["roundrobin", "range"],
                                   name="java-0")
        lists = {**strategy_lists(group), **{c.name: c.strategies for c in confluent},
                 java.name: java.strategies}
        predicted = choose_strategy(list(lists.values()))
        assert predicted == "roundrobin"  # kafka-python's 2 votes for range lose 2:3

        described = wait_described(bootstrap, gid, lists, tps, timeout=150)
        assert described.strategy == predicted
        ids = {m.client_id: m.member_id for m in described.members}
        assert described.assignments() == roundrobin_layout(ids, topic, partitions)
        group.wait_for(lambda vs: all(v.protocol == predicted and v.state == "STABLE"
                                      for v in vs if v.alive), 60, "kafka-python agreeing")
        owners = {tp: name for name, parts in described.assignments().items() for tp in parts}
        for v in group.members():
            assert v.assignment == described.assignments()[v.name]
        for c in confluent:
            group_view = described.assignments()[c.name]

            def shows(_e: list[Event], c: ConfluentMember = c,
                      g: frozenset[tuple[str, int]] = group_view) -> bool:
                return c.assignment() == g

            c.events.wait_for(shows, 30, f"{c.name}'s callback to show its assignment")
        _check_probes(bootstrap, topic, partitions, "rr", owners, group, confluent, java)

        # two members leave: kafka-python's two votes for range now beat cf-0's roundrobin
        confluent[1].close()
        java.close()
        lists = {**strategy_lists(group), confluent[0].name: confluent[0].strategies}
        predicted = choose_strategy(list(lists.values()))
        assert predicted == "range"
        described = wait_described(bootstrap, gid, lists, tps, timeout=150)
        assert described.strategy == predicted
        ids = {m.client_id: m.member_id for m in described.members}
        assert described.assignments() == range_layout(ids, topic, partitions)
        owners = {tp: name for name, parts in described.assignments().items() for tp in parts}
        group.wait_for(lambda vs: all(v.protocol == predicted and v.state == "STABLE"
                                      for v in vs if v.alive), 60, "kafka-python agreeing")
        _check_probes(bootstrap, topic, partitions, "range", owners, group, confluent[:1], None)
        assert not any(c.errors() for c in confluent), [c.errors() for c in confluent]
    finally:
        for c in confluent:
            c.close()
        if java is not None:
            java.close()


def _check_probes(bootstrap: str, topic: str, partitions: int, tag: str,
                  owners: dict[tuple[str, int], str], group: GroupRunner,
                  confluent: list[ConfluentMember], java: JavaConsoleConsumer | None) -> None:
    """Send one message per partition; each is read by the partition's owner, exactly once."""
    values = produce_probes(bootstrap, topic, partitions, f"probe-{tag}-{time.monotonic_ns()}")

    def records() -> list[dict[str, object]]:
        out: list[dict[str, object]] = [e for e in group.events() if e.get("event") == "record"]
        for c in confluent:
            out += c.records()
        if java is not None:
            out += java.records()
        return out

    deadline = time.monotonic() + 60
    readers = readers_of(values, records())
    while not all(readers.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
        readers = readers_of(values, records())
    time.sleep(2.0)  # a second reader, if any, would show up now
    readers = readers_of(values, records())
    expected = {value: [owners[(topic, p)]] for value, p in values.items()}
    assert readers == expected, f"probe readers differ from owners: {readers} vs {expected}"
