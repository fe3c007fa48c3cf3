"""Every rebalance trigger of the source documents, one after another on one live cooperative
group on the 3-broker cluster, with a producer writing and members committing throughout."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from kafka_assignors.embedded import GroupRunner, KafkaCluster

from ..ledger import TP, spread
from ..test_balanced_sticky_live import add_partitions
from .checks import coordinator_of
from .traffic import (
    SequencedProducer,
    committed_offsets,
    consumed_records,
    delivery_report,
    end_offsets,
    wait_all_committed,
)

COOPERATIVE = "kafka_assignors:CooperativeBalancedStickyAssignor"
TOPIC_CONFIG = {"min.insync.replicas": "2"}


def _resumed_from_committed(bootstrap: str, group: GroupRunner, since: float,
                            committed: dict[TP, int], what: str, timeout: float = 90.0) -> None:
    """Every partition committed before the trigger that received messages since is consumed
    again after it, starting at or after that committed offset (a group that lost its offsets
    would restart at 0)."""
    deadline = time.monotonic() + timeout
    while True:
        ends = end_offsets(bootstrap, committed)
        first: dict[TP, int] = {}
        for r in consumed_records([group]):
            tp = (r.topic, r.partition)
            if r.mono > since and tp in committed and tp not in first:
                first[tp] = r.offset
        missing = sorted(tp for tp, c in committed.items() if ends[tp] > c and tp not in first)
        if not missing:
            break
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: no consumption after the trigger on {missing}")
        time.sleep(0.5)
    rewound = {tp: (first[tp], c) for tp, c in committed.items() if tp in first and first[tp] < c}
    assert not rewound, f"{what}: consumption restarted before the committed offset {rewound}"


@pytest.mark.cluster
def test_every_rebalance_trigger_keeps_the_group_stable_balanced_and_on_its_offsets(
    kafka_cluster: KafkaCluster,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """After a join, a leave, a crash, a member stuck past max_poll_interval_ms, a subscription
    change, a partition increase, a static member's restart (no rebalance at all) and the
    coordinator broker stopping, the group is stable with a valid, balanced assignment and
    resumes every partition from its committed offset; in the end nothing was lost."""
    bootstrap = kafka_cluster.bootstrap
    a = make_topic(8, replication_factor=3, configs=TOPIC_CONFIG, bootstrap=bootstrap)
    b = make_topic(4, replication_factor=3, configs=TOPIC_CONFIG, bootstrap=bootstrap)
    producer = SequencedProducer(bootstrap, [a, b], rate=30).start()
    group = make_group(
        [a], [COOPERATIVE], bootstrap=bootstrap, commit="sync", report_records=True,
        session_timeout_ms=6_000, heartbeat_interval_ms=500,
        consumer_config={"metadata_max_age_ms": 2_000},
        # kafka-python 3.0.12 can wedge a member after a subscription or partition change
        fix_rejoin=True,
    )
    # a static member's session outlives a quick restart (that is what it is for)
    static = group.add_member(name="static", group_instance_id="static-0",
                              session_timeout_ms=30_000)
    group.add_member(name="m1")
    stuck = group.add_member(name="stuck", max_poll_interval_ms=6_000)
    group.add_member(name="m3")
    partitions = {a: 8}
    stopped_broker: int | None = None
    try:
        state = group.wait_stable(timeout=120, settle=1.0)
        assert group.protocol() == "cooperative-balanced-sticky"
        time.sleep(3.0)  # let every member commit a few times

        def trigger(what: str, action: Callable[[], None], *, rebalance: bool = True) -> None:
            nonlocal state
            committed = committed_offsets(bootstrap, group.group_id)
            assert committed, f"{what}: the group has not committed anything yet"
            generation = max(v.generation for v in group.members() if v.alive)
            since = time.monotonic()
            action()
            if rebalance:
                group.wait_for(
                    lambda vs: any(v.alive and not v.stopping and v.generation > generation
                                   for v in vs),
                    timeout=90, what=f"a rebalance after the {what}")
            state = group.wait_stable(timeout=120, expected=partitions, settle=2.0)
            assert spread(state) <= 1, f"{what}: unbalanced {state}"
            _resumed_from_committed(bootstrap, group, since, committed, what)
            after = committed_offsets(bootstrap, group.group_id)
            went_back = {tp: (c, after.get(tp)) for tp, c in committed.items()
                         if after.get(tp, -1) < c}
            assert not went_back, f"{what}: committed offsets went back {went_back}"
            print(f"{what}: stable, generation {max(v.generation for v in group.members())}, "
                  f"{ {n: len(p) for n, p in sorted(state.items())} }")

        trigger("join", lambda: group.add_member(name="m4"))
        trigger("leave", lambda: group.stop_member(1))
        trigger("crash", lambda: group.kill_member(3))

        def stall() -> None:
            generation = group.member(stuck).generation
            group.stall_member(stuck, 16.0)
            # past max_poll_interval_ms the stuck member leaves; the others go on without it
            group.wait_for(
                lambda vs: (
                    {tp for v in vs if v.alive and not v.stopping and v.index != stuck
                     and v.generation > generation for tp in v.assignment}
                    == {(a, p) for p in range(8)}
                ),
                timeout=60, what="the others to take over the stuck member's partitions")
            group.wait_for(lambda vs: any(e.get("event") == "resumed" for e in vs[stuck].events),
                           timeout=30, what="the stuck member to resume")

        trigger("stuck member", stall)

        def resubscribe() -> None:
            partitions[b] = 4
            for i in group.live_indexes():
                group.resubscribe(i, [a, b])

        trigger("subscription change", resubscribe)

        def grow() -> None:
            partitions[a] = 12
            add_partitions(bootstrap, a, 12)

        trigger("partition increase", grow)

        def restart_static() -> None:
            generations = {v.name: v.generation for v in group.members() if v.alive}
            held = group.member(static).assignment
            group.kill_member(static)
            again = group.add_member(name="static-again", group_instance_id="static-0",
                                     session_timeout_ms=30_000, topics=(a, b))
            group.wait_for(lambda vs: vs[again].state == "STABLE", timeout=60,
                           what="the restarted static member to rejoin")
            time.sleep(3.0)  # a rebalance, had there been one, would show as a new generation
            assert group.member(again).assignment == held
            for v in group.members():
                if v.alive and v.name in generations:
                    assert v.generation == generations[v.name], f"{v.name} saw a rebalance"

        trigger("static restart", restart_static, rebalance=False)

        def stop_coordinator() -> None:
            nonlocal stopped_broker
            stopped_broker = coordinator_of(bootstrap, group.group_id)
            kafka_cluster.stop_broker(stopped_broker)

        trigger("coordinator stop", stop_coordinator, rebalance=False)
        moved_to = coordinator_of(
            ",".join(n.bootstrap for n in kafka_cluster.nodes if n.node_id != stopped_broker),
            group.group_id)
        assert moved_to != stopped_broker
        print(f"coordinator moved from broker {stopped_broker} to {moved_to}")

        producer.stop()
        everything = [(t, p) for t, n in partitions.items() for p in range(n)]
        committed = wait_all_committed(bootstrap, group.group_id, everything, timeout=120)
        report = delivery_report(producer, consumed_records([group]), committed)
        print(f"triggers: {report.summary()}")
        assert report.lost == 0, (report.unconsumed[:20], report.uncommitted[:20])
        assert not report.mismatched, report.mismatched[:10]
    finally:
        producer.stop(timeout=10)
        if stopped_broker is not None:
            kafka_cluster.start_broker(stopped_broker)
