"""co-partitioned, pinned and broadcast in live kafka-python groups on a real broker."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_assignors.embedded import GroupRunner, MemberView

from .conftest import BrokerHandle

# poll_timeout_ms: see test_rack_aware_live.MEMBER
MEMBER = {"session_timeout_ms": 6_000, "heartbeat_interval_ms": 500, "poll_timeout_ms": 1_000}
PINNED = "kafka_assignors:PinnedAssignor"
PINNED_FROM_ENV = "integration_tests.new_assignor_configs:PINNED_FROM_ENV"


def by_topic(tps: frozenset[tuple[str, int]], topic: str) -> set[int]:
    return {p for t, p in tps if t == topic}


@pytest.mark.parametrize("strategy", ["kafka_assignors:CoPartitionedAssignor",
                                      "kafka_assignors:CooperativeCoPartitionedAssignor"])
def test_co_partitioned_keeps_joined_partitions_together(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], strategy: str,
) -> None:
    """Partition i of both 5-partition topics is consumed by one member, through a join."""
    orders, payments = make_topic(5), make_topic(5)
    group = make_group([orders, payments], [strategy], members=2, **MEMBER)
    for shares in ([2, 3], [1, 2, 2]):  # two members, then a third joins
        if len(shares) == 3:
            group.add_member()
        state = group.wait_stable(timeout=90)
        assert sorted(len(by_topic(tps, orders)) for tps in state.values()) == shares
        for tps in state.values():
            assert by_topic(tps, orders) == by_topic(tps, payments)


def test_pinned_partitions_fail_over_and_come_back(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A member pinning two partitions gets them; when it stops they go to the others; when
    it starts again (same pins, its own subscription) they come back to it."""
    topic = make_topic(6)
    group = make_group([topic], [PINNED], **MEMBER)
    monkeypatch.setenv("KA_TEST_PINS", f"{topic}:4,{topic}:5")
    pinner = group.add_member(name="pinner", strategies=(PINNED_FROM_ENV,))
    monkeypatch.delenv("KA_TEST_PINS")
    group.add_member(name="a")
    group.add_member(name="b")
    state = group.wait_stable(timeout=90)
    assert by_topic(state["pinner"], topic) == {4, 5}
    assert sorted(len(tps) for tps in state.values()) == [2, 2, 2]

    group.stop_member(pinner)
    state = group.wait_stable(timeout=90)
    assert sorted(len(tps) for tps in state.values()) == [3, 3]

    monkeypatch.setenv("KA_TEST_PINS", f"{topic}:4,{topic}:5")
    group.add_member(name="pinner-again", strategies=(PINNED_FROM_ENV,))
    state = group.wait_stable(timeout=90)
    assert by_topic(state["pinner-again"], topic) == {4, 5}


@pytest.mark.parametrize("strategy", ["kafka_assignors:BroadcastAssignor",
                                      "kafka_assignors:CooperativeBroadcastAssignor"])
def test_broadcast_gives_every_member_every_partition(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], strategy: str,
) -> None:
    """Every member holds all 4 partitions, also after a third member joins."""
    topic = make_topic(4)
    group = make_group([topic], [strategy], members=2, commit="none", **MEMBER)
    everything = frozenset((topic, p) for p in range(4))

    def all_have_everything(views: list[MemberView]) -> bool:
        live = [v for v in views if v.alive and not v.stopping]
        return bool(live) and all(v.state == "STABLE" and v.assignment == everything
                                  for v in live) and len({v.generation for v in live}) == 1

    group.wait_for(all_have_everything, timeout=90, what="every member holding everything")
    group.add_member()
    group.wait_for(lambda views: len([v for v in views if v.assignment == everything]) == 3
                   and all_have_everything(views), timeout=90, what="the joiner too")
