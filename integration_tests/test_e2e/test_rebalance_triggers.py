"""Every rebalance trigger of the source documents, one after another on one live cooperative
group on the 3-broker cluster, with a producer writing and members committing throughout."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kafka_assignors.embedded import GroupRunner, KafkaCluster

from ..ledger import TP, spread
from ..test_balanced_sticky_live import add_partitions
from .checks import coordinator_of
from .traffic import (
    Consumed,
    SequencedProducer,
    committed_offsets,
    consumed_records,
    delivery_report,
    end_offsets,
    wait_all_committed,
)

COOPERATIVE = "kafka_assignors:CooperativeBalancedStickyAssignor"
TOPIC_CONFIG = {"min.insync.replicas": "2"}


@dataclass(frozen=True)
class Gain:
    """A member getting a partition it did not hold (its ``assigned`` callback)."""

    member: str
    tp: TP
    mono: float
    #: when the member let go of it again (revoked/lost callback); None while it holds it
    until: float | None


def _gains(events: list[dict[str, Any]], since: float) -> list[Gain]:
    """Every partition gained by a member after ``since``, from the members' own rebalance
    callbacks (assigned adds, revoked and lost remove; an eager member re-gains all)."""
    held: dict[str, set[TP]] = {}
    open_gains: dict[tuple[str, TP], float] = {}
    out: list[Gain] = []
    for e in events:  # merged and in time order
        kind = e.get("event")
        if kind not in ("assigned", "revoked", "lost"):
            continue
        member, mono = str(e["member"]), float(e["mono"])
        tps = {(str(t), int(p)) for t, p in e.get("partitions", [])}
        mine = held.setdefault(member, set())
        if kind == "assigned":
            for tp in tps - mine:
                open_gains[(member, tp)] = mono
            mine |= tps
        else:
            for tp in tps & mine:
                gained = open_gains.pop((member, tp), None)
                if gained is not None and gained > since:
                    out.append(Gain(member, tp, gained, mono))
            mine -= tps
    out += [Gain(m, tp, t, None) for (m, tp), t in open_gains.items() if t > since]
    return sorted(out, key=lambda g: g.mono)


def _committed_at(events: list[dict[str, Any]], before: dict[TP, int], tp: TP,
                  when: float) -> int:
    """The partition's committed offset at ``when``: the largest of the offset committed
    before the trigger and every successful commit a member reported by then (a commit is
    reported once the coordinator acknowledged it)."""
    best = before.get(tp, 0)
    for e in events:
        if float(e["mono"]) > when:
            break
        if e.get("event") == "commit" and e.get("ok"):
            for t, p, o in e.get("offsets", []):
                if (str(t), int(p)) == tp:
                    best = max(best, int(o))
    return best


def _resumed_from_committed(bootstrap: str, group: GroupRunner, since: float,
                            committed: dict[TP, int], what: str, *, handover: bool,
                            timeout: float = 90.0) -> dict[TP, int]:
    """Every partition that received messages is consumed after the trigger, and every
    member that gained a partition after it starts reading that partition at or after its
    committed offset at the time of the hand-over (records after the last commit may be read
    again: at least once; a rewind before the committed offset may not happen). The old owner
    of a cooperative hand-over goes on reading until it is revoked, so only the gaining
    member's first record tells where consumption resumed; with ``handover`` at least one
    such first record must exist. Returns the records read again after the trigger
    (at-least-once duplicates), per partition."""
    deadline = time.monotonic() + timeout
    while True:
        events = group.events()
        records = [r for r in consumed_records([group]) if r.mono > since]
        read_after = {(r.topic, r.partition) for r in records}
        gains = _gains(events, since)
        ends = end_offsets(bootstrap, set(committed) | {g.tp for g in gains})
        first: dict[Gain, Consumed] = {}
        for g in gains:
            first_read = next((r for r in records
                               if r.member == g.member and (r.topic, r.partition) == g.tp
                               and r.mono > g.mono and (g.until is None or r.mono < g.until)),
                              None)
            if first_read is not None:
                first[g] = first_read
        idle = sorted(tp for tp, c in committed.items() if ends[tp] > c and tp not in read_after)
        # a member still holding what it gained must read it once there is something to read
        live = {v.name for v in group.members() if v.alive}
        waiting = sorted((g.member, g.tp) for g in gains
                         if g.until is None and g not in first and g.member in live
                         and ends[g.tp] > _committed_at(events, committed, g.tp, g.mono))
        # a gained partition with nothing new on it yet is not waited for, but a hand-over
        # needs one first read to tell where it resumed: wait for the producer's next record
        # there (a fresh-clone run once looked before any had come, and failed)
        if not idle and not waiting and (first or not handover):
            break
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: no consumption after the trigger on {idle}; "
                                 f"gained but never read: {waiting}; gains: {gains}")
        time.sleep(0.5)
    rewound = {}
    for g, r in first.items():
        floor = _committed_at(events, committed, g.tp, g.mono)
        if r.offset < floor:
            rewound[f"{g.tp[0]}-{g.tp[1]} -> {g.member}"] = (r.offset, floor)
    assert not rewound, (
        f"{what}: a new owner started before the committed offset (first read, committed): "
        f"{rewound}")
    if handover:
        assert first, f"{what}: no member gained a partition and read it ({gains})"
    earlier = Counter((r.topic, r.partition, r.offset)
                      for r in consumed_records([group]) if r.mono <= since)
    again: Counter[TP] = Counter()
    for r in records:
        key = (r.topic, r.partition, r.offset)
        if earlier[key]:
            again[(r.topic, r.partition)] += 1
        earlier[key] += 1
    print(f"{what}: {len(gains)} partition(s) changed hands, {len(first)} checked against "
          f"the committed offset; read again: {sum(again.values())} "
          f"{ {f'{t}-{p}': n for (t, p), n in sorted(again.items())} }")
    return dict(again)


@pytest.mark.cluster
def test_every_rebalance_trigger_keeps_the_group_stable_balanced_and_on_its_offsets(
    kafka_cluster: KafkaCluster,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
    e2e_summary: Callable[[str], None],
) -> None:
    """After a join, a leave, a crash, a member stuck past max_poll_interval_ms, a subscription
    change, a partition increase, a static member's restart (no rebalance at all) and the
    coordinator broker stopping, the group is stable with a valid, balanced assignment, every
    member that gains a partition starts reading it at or after the offset committed when it
    got it (re-reads after the last commit are counted, a rewind fails), committed offsets
    never go back, the producer fails no send and in the end nothing was lost."""
    bootstrap = kafka_cluster.bootstrap
    a = make_topic(8, replication_factor=3, configs=TOPIC_CONFIG, bootstrap=bootstrap)
    b = make_topic(4, replication_factor=3, configs=TOPIC_CONFIG, bootstrap=bootstrap)
    producer = SequencedProducer(bootstrap, [a, b], rate=30).start()
    group = make_group(
        [a], [COOPERATIVE], bootstrap=bootstrap, commit="sync", report_records=True,
        session_timeout_ms=6_000, heartbeat_interval_ms=500,
        consumer_config={"metadata_max_age_ms": 2_000},
    )
    # a static member's session outlives a quick restart (that is what it is for)
    static = group.add_member(name="static", group_instance_id="static-0",
                              session_timeout_ms=30_000)
    group.add_member(name="m1")
    stuck = group.add_member(name="stuck", max_poll_interval_ms=6_000)
    group.add_member(name="m3")
    partitions = {a: 8}
    stopped_broker: int | None = None
    duplicates: dict[str, int] = {}
    try:
        state = group.wait_stable(timeout=120, settle=1.0)
        assert group.protocol() == "cooperative-balanced-sticky"
        time.sleep(3.0)  # let every member commit a few times

        def trigger(what: str, action: Callable[[], object], *, rebalance: bool = True,
                    handover: bool = True) -> None:
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
            again = _resumed_from_committed(bootstrap, group, since, committed, what,
                                            handover=handover)
            duplicates[what] = sum(again.values())
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

        # the members may keep every partition: nothing has to change hands
        trigger("coordinator stop", stop_coordinator, rebalance=False, handover=False)
        moved_to = coordinator_of(
            ",".join(n.bootstrap for n in kafka_cluster.nodes if n.node_id != stopped_broker),
            group.group_id)
        print(f"coordinator moved from broker {stopped_broker} to {moved_to}")

        producer.stop()
        everything = [(t, p) for t, n in partitions.items() for p in range(n)]
        committed = wait_all_committed(bootstrap, group.group_id, everything, timeout=120)
        report = delivery_report(producer, consumed_records([group]), committed)
        e2e_summary(f"TRIGGERS {report.summary()} read_again_after={duplicates}")
        assert report.produced > 0 and report.failed_sends == 0, (
            report.summary(), sorted(producer.failed.items())[:10])
        assert report.lost == 0, (report.unconsumed[:20], report.uncommitted[:20])
        assert not report.mismatched, report.mismatched[:10]
    finally:
        producer.stop(timeout=10)
        if stopped_broker is not None:
            kafka_cluster.start_broker(stopped_broker)
