"""balanced-sticky and cooperative-balanced-sticky in live kafka-python groups on a real broker."""

from __future__ import annotations

import time
from collections.abc import Callable

from kafka.admin import KafkaAdminClient, NewPartitions

from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.embedded import GroupRunner, MemberView

from .conftest import BrokerHandle
from .ledger import holdings, minimal_moves, moved, overlaps, spread

EAGER = "kafka_assignors:BalancedStickyAssignor"
COOPERATIVE = "kafka_assignors:CooperativeBalancedStickyAssignor"
# short timeouts keep crash detection quick; frequent metadata refresh sees new partitions
MEMBER_OPTIONS = {
    "session_timeout_ms": 6_000,
    "heartbeat_interval_ms": 500,
    "consumer_config": {"metadata_max_age_ms": 2_000},
}
TP = tuple[str, int]


def core_answer(group: GroupRunner, before: dict[str, frozenset[TP]], topic: str,
                partitions: int) -> dict[str, frozenset[TP]]:
    """What the pure core computes for the live members, given what each owned before."""
    views = {v.name: v for v in group.members() if v.alive and not v.stopping}
    specs = [
        MemberSpec(
            member_id=v.member_id,
            topics=frozenset({topic}),
            owned={topic: sorted(p for _t, p in before.get(name, frozenset()))},
            generation=1 if before.get(name) else -1,
            instance_id=v.config.group_instance_id,
        )
        for name, v in views.items()
    ]
    result = balanced_sticky(GroupSpec.build(specs, {topic: partitions}))
    by_id = {v.member_id: name for name, v in views.items()}
    return {by_id[m]: frozenset((t, p) for t, ps in a.items() for p in ps)
            for m, a in result.items()}


def add_partitions(bootstrap: str, topic: str, total: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        admin.create_partitions({topic: NewPartitions(total_count=total)})
    finally:
        admin.close()


def test_eager_group_through_join_leave_crash_static_restart_and_partition_increase(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
) -> None:
    """Every stable state is exactly what the core computes: balanced, and only the partitions
    balance requires move; a static member's restart causes no rebalance at all."""
    topic = make_topic(12)
    group = make_group([topic], [EAGER], **MEMBER_OPTIONS)
    # a static member's session outlives a process restart (that is what it is for)
    group.add_member(name="static", group_instance_id="static-0", session_timeout_ms=45_000)
    group.add_member()
    group.add_member()
    state = group.wait_stable(timeout=90)
    assert group.protocol() == "balanced-sticky"
    assert spread(state) == 0

    steps: list[tuple[str, Callable[[], object], int]] = [
        ("join", lambda: group.add_member(name="joiner"), 12),
        ("leave", lambda: group.stop_member(1), 12),
        ("crash", lambda: group.kill_member(2), 12),
        ("partition increase", lambda: add_partitions(kafka_broker.bootstrap, topic, 16), 16),
    ]
    for what, action, partitions in steps:
        before = state
        expected_generation = max(v.generation for v in group.members() if v.alive)
        action()

        def rebalanced(views: list[MemberView], g: int = expected_generation) -> bool:
            return any(v.alive and not v.stopping and v.generation > g for v in views)

        group.wait_for(rebalanced, timeout=60, what=f"a rebalance after the {what}")
        state = group.wait_stable(timeout=90, expected={topic: partitions}, settle=1.0)
        assert spread(state) <= 1, f"{what}: unbalanced {state}"
        assert moved(before, state) == minimal_moves(before, state, partitions), what
        assert state == core_answer(group, before, topic, partitions), what

    # static member: killed and restarted within the session timeout -> no rebalance
    generation = {v.name: v.generation for v in group.members() if v.alive}
    held = state["static"]
    group.kill_member(0)
    restarted = group.add_member(name="static-again", group_instance_id="static-0",
                                 session_timeout_ms=45_000)
    group.wait_for(lambda views: views[restarted].state == "STABLE", timeout=60,
                   what="the restarted static member to rejoin")
    time.sleep(2.0)  # a rebalance, had there been one, would show as a new generation
    assert group.member(restarted).assignment == held
    for v in group.members():
        if v.alive and v.name in generation:
            assert v.generation == generation[v.name], f"{v.name} saw a rebalance"


def _timeline(group: GroupRunner, tp: TP) -> str:
    """Every member's rebalance events that mention ``tp``, in time order (for failures)."""
    rows = []
    for v in group.members():
        for e in v.events:
            pairs = {(str(t), int(p)) for t, p in e.get("assignment", []) + e.get("partitions", [])}
            if tp in pairs:
                rows.append((float(e["mono"]), v.name, e.get("event"), e.get("generation"),
                             e.get("state")))
    return "\n".join(f"{m:.3f} {n} {ev} generation={g} state={st}"
                     for m, n, ev, g, st in sorted(rows))


def test_cooperative_group_never_double_owns_and_does_not_interrupt_kept_partitions(
    make_topic: Callable[..., str], make_group: Callable[..., GroupRunner]
) -> None:
    """Under the cooperative protocol no partition is ever held by two members at once, and a
    member that keeps a partition through joins, a leave and a crash is never interrupted."""
    topic = make_topic(12)
    # members take a second to let go of a revoked partition, as one that commits would
    group = make_group([topic], [COOPERATIVE], members=3, revoke_delay_ms=1_000,
                       **MEMBER_OPTIONS)
    # three members starting at once may take several rebalances to form the group
    state = group.wait_stable(timeout=90, settle=2.0)
    formed_at = time.monotonic()
    assert group.protocol() == "cooperative-balanced-sticky"
    killed_at: dict[str, float] = {}

    def crash_m1() -> None:
        killed_at["m1"] = time.monotonic()
        group.kill_member(1)

    changes: list[tuple[str, Callable[[], object]]] = [("join", lambda: group.add_member()),
                                                       ("join", lambda: group.add_member()),
                                                       ("leave", lambda: group.stop_member(0)),
                                                       ("crash", crash_m1)]
    for what, action in changes:
        before = state
        action()
        time.sleep(0.5)
        state = group.wait_stable(timeout=90, settle=2.0)
        assert spread(state) <= 1, f"{what}: unbalanced {state}"
        assert moved(before, state) == minimal_moves(before, state, 12), what

    ledger = holdings(group, ended=killed_at)
    assert overlaps(ledger) == []
    # members still here hold each of their final partitions in one unbroken interval
    # from the moment the group was formed
    for name, parts in state.items():
        for tp in parts:
            spans = [h for h in ledger
                     if h.member == name and h.partition == tp and h.end > formed_at]
            assert len(spans) == 1, (
                f"{name} was interrupted on {tp}: {spans} (formed at {formed_at:.3f})\n"
                + _timeline(group, tp))
    # and the second cooperative round really happened: revocations preceded the handover
    revoked = [e for v in group.members() for e in v.events if e.get("event") == "revoked"
               and e.get("partitions")]
    assert revoked, "a join must make some member give partitions up"
