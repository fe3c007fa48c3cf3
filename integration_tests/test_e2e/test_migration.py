"""The README's live migration recipes, run on a real broker while a producer writes and the
members commit: range -> balanced-sticky, and eager -> cooperative (two rolling restarts each)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.errors import KafkaConfigurationError

from kafka_assignors.embedded import GroupRunner
from kafka_assignors.negotiation import choose_strategy, describe_group_strategy

from ..conftest import BrokerHandle
from ..ledger import holdings, overlaps, spread
from .checks import member_modes, strategy_lists
from .traffic import SequencedProducer, consumed_records, delivery_report, wait_all_committed

BS = "kafka_assignors:BalancedStickyAssignor"
CBS = "kafka_assignors:CooperativeBalancedStickyAssignor"
PARTITIONS = 6
MEMBER_OPTIONS = {
    "session_timeout_ms": 6_000,
    "heartbeat_interval_ms": 500,
    "commit": "sync",
    "report_records": True,
}


def rolling_restart(group: GroupRunner, strategies: Sequence[str], prefix: str,
                    steps: list[tuple[str, str]]) -> None:
    """Replace every live member, one at a time (stop, then start its successor listing
    ``strategies``); after each stop and each start the group settles and the protocol the
    members and the coordinator report is the one the vote rule predicts for who is there."""

    def settle(what: str) -> None:
        state = group.wait_stable(timeout=120, settle=1.0)
        expected = choose_strategy(list(strategy_lists(group).values()))
        assert group.protocol() == expected, f"{what}: members report {group.protocols()}"
        assert describe_group_strategy(group.bootstrap, group.group_id).strategy == expected
        assert spread(state) <= 1, f"{what}: unbalanced {state}"
        steps.append((what, expected))

    for i, old in enumerate(group.live_indexes()):
        name = group.member(old).name
        group.stop_member(old)
        settle(f"{name} stopped")
        successor = f"{prefix}{i}"
        group.add_member(name=successor, strategies=tuple(strategies))
        settle(f"{successor} started")


def _drain_and_check(producer: SequencedProducer, group: GroupRunner, topic: str) -> str:
    producer.stop()
    committed = wait_all_committed(group.bootstrap, group.group_id,
                                   [(topic, p) for p in range(PARTITIONS)], timeout=120)
    report = delivery_report(producer, consumed_records([group]), committed)
    assert report.produced > 0 and report.failed_sends == 0
    assert report.lost == 0, (report.unconsumed[:20], report.uncommitted[:20])
    assert not report.mismatched, report.mismatched[:10]
    return report.summary()


def test_range_to_balanced_sticky_switches_when_the_last_range_only_member_leaves(
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """Recipe 1: range members are restarted one at a time with [balanced-sticky, range], then
    again with [balanced-sticky]; the group keeps range until the last range-only member is
    gone, switches to balanced-sticky at that moment, and no message is lost."""
    topic = make_topic(PARTITIONS)
    producer = SequencedProducer(kafka_broker.bootstrap, [topic], rate=40).start()
    try:
        group = make_group([topic], ["range"], members=3, **MEMBER_OPTIONS)
        group.wait_stable(timeout=120, settle=1.0)
        assert group.protocol() == "range"
        steps: list[tuple[str, str]] = []
        rolling_restart(group, [BS, "range"], "both", steps)
        rolling_restart(group, [BS], "new", steps)
        print(f"\nrecipe 1 steps: {steps}")
        assert [p for _w, p in steps] == ["range"] * 4 + ["balanced-sticky"] * 8
        assert steps[4] == ("m2 stopped", "balanced-sticky")  # the last range-only member
        print(f"recipe 1: {_drain_and_check(producer, group, topic)}")
    finally:
        producer.stop(timeout=10)


def test_eager_to_cooperative_in_two_rolling_restarts_never_double_owns(
    kafka_broker: BrokerHandle,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """Recipe 2 (the Java client's two-step upgrade): eager balanced-sticky members are
    restarted with [cooperative-balanced-sticky, balanced-sticky] (still eager), then with
    [cooperative-balanced-sticky] alone (cooperative); through the mixed phase no partition is
    ever held by two members, no message is lost, and in the end every member is cooperative.
    kafka-python's own cooperative-sticky cannot be listed beside an eager assignor at all."""
    with pytest.raises(KafkaConfigurationError, match="common RebalanceProtocol"):
        KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap.split(","), group_id="never",
                      partition_assignment_strategy=[CooperativeStickyAssignor,
                                                     RangePartitionAssignor])
    topic = make_topic(PARTITIONS)
    producer = SequencedProducer(kafka_broker.bootstrap, [topic], rate=40).start()
    try:
        # members take half a second to let go of revoked partitions, as committing ones do:
        # a hand-over that did not wait for that would show up as double ownership
        group = make_group([topic], [BS], members=3, revoke_delay_ms=500, **MEMBER_OPTIONS)
        group.wait_stable(timeout=120, settle=1.0)
        assert group.protocol() == "balanced-sticky"
        steps: list[tuple[str, str]] = []
        rolling_restart(group, [CBS, BS], "both", steps)
        assert set(member_modes(group.bootstrap, group.group_id).values()) == {"eager"}
        rolling_restart(group, [CBS], "coop", steps)
        print(f"\nrecipe 2 steps: {steps}")
        assert [p for _w, p in steps] == (
            ["balanced-sticky"] * 4 + ["cooperative-balanced-sticky"] * 8)
        assert set(member_modes(group.bootstrap, group.group_id).values()) == {"cooperative"}

        # now truly cooperative: a join moves partitions without stopping the others
        before = group.wait_stable(timeout=60)
        since = time.monotonic()
        group.add_member(name="late", strategies=(CBS,))
        after = group.wait_stable(timeout=120, settle=2.0)
        for v in group.members():
            if v.name in before and v.name in after:
                revoked = {tuple(tp) for e in v.events if e.get("event") == "revoked"
                           and float(e["mono"]) > since for tp in e.get("partitions", [])}
                assert not revoked & after[v.name], f"{v.name} was interrupted on kept ones"
        problems = overlaps(holdings(group))
        assert problems == [], problems
        print(f"recipe 2: {_drain_and_check(producer, group, topic)}")
    finally:
        producer.stop(timeout=10)
