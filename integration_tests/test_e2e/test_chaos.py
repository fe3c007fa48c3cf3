"""A seeded chaos run on the 3-broker cluster: cooperative members are killed, restarted, added
and removed at random while a producer writes numbered messages and the group's coordinator
broker restarts; nothing may be lost and no partition may ever have two owners.

Default: 24 membership events, at least 20 of which must take effect, every kind at least
once, never fewer than 6 live members (a few minutes). ``--soak`` (or KAFKA_ASSIGNORS_SOAK=1)
runs 150 events and restarts a broker every 50; ``--chaos-seed N`` replays another seed. The
one-line result is printed in the "kafka-assignors end-to-end summaries" section at the end
of the run.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from kafka_assignors.embedded import GroupRunner, KafkaCluster, MemberView

from ..ledger import holdings, overlaps, ownership_story, spread
from .checks import coordinator_of
from .traffic import SequencedProducer, consumed_records, delivery_report, wait_all_committed

COOPERATIVE = "kafka_assignors:CooperativeBalancedStickyAssignor"
KINDS = ("kill", "restart", "add", "remove")


@dataclass(frozen=True)
class ChaosPlan:
    events: int
    broker_restart_every: int
    #: the group never has fewer live members than this (kills and removals stop there)
    min_members: int = 6
    max_members: int = 9
    initial_members: int = 7
    #: events that must have taken effect (see _took_effect)
    min_effective: int = 20
    partitions: int = 24
    rate: float = 60.0
    gap: tuple[float, float] = (1.5, 4.0)


DEFAULT = ChaosPlan(events=24, broker_restart_every=13)
SOAK = ChaosPlan(events=150, broker_restart_every=50, rate=100.0, min_effective=120)


def _choose(rng: random.Random, allowed: list[str], missing: set[str], steps_left: int,
            down: bool) -> str:
    """A random allowed kind; once the steps left barely cover the kinds not seen yet, one of
    those (a restart needs a killed member first, so a kill when none is down)."""
    if missing and steps_left <= 2 * len(missing) + 1:
        wanted = [k for k in allowed if k in missing]
        if "restart" in missing and not down and "kill" in allowed:
            wanted.append("kill")
        if wanted:
            return rng.choice(wanted)
    return rng.choice(allowed)


def _joined(view: MemberView) -> bool:
    """The member joined the group (reported a generation)."""
    return any(int(e.get("generation", -1)) > 0 and e.get("member_id")
               for e in view.events if e.get("event") in ("state", "assigned"))


def _took_effect(group: GroupRunner, kind: str, name: str) -> bool:
    """A kill or removal took effect if its member had joined the group (held a generation)
    and its process is gone (SIGKILL for a kill, a clean exit for a removal); an addition or
    restart took effect if the new member joined the group (reported a generation)."""
    view = next(v for v in group.members() if v.name == name)
    joined = _joined(view)
    if kind == "kill":
        return joined and view.killed and not view.alive
    if kind == "remove":
        return joined and not view.alive and not view.killed and view.exit_code == 0
    return joined


class BrokerRestarter:
    """Restarts the group's coordinator broker in the background (stop, pause, start)."""

    def __init__(self, cluster: KafkaCluster, group_id: str) -> None:
        self.cluster = cluster
        self.group_id = group_id
        self.restarted: list[int] = []
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return  # the previous restart is still going on
        self._thread = threading.Thread(target=self._run, daemon=True, name="broker-restart")
        self._thread.start()

    def _run(self) -> None:
        try:
            node = coordinator_of(self.cluster.bootstrap, self.group_id)
            self.restarted.append(node)
            self.cluster.stop_broker(node)
            time.sleep(3.0)
            self.cluster.start_broker(node)
        except BaseException as exc:
            self.error = exc

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError(f"broker restart still running after {timeout:.0f} s")
        if self.error is not None:
            raise self.error

    def heal(self) -> None:
        """Start any broker left stopped (bounded by start_broker's own timeout)."""
        for node in self.cluster.nodes:
            if node.status() != "running":
                self.cluster.start_broker(node.node_id)


@pytest.mark.cluster
def test_chaos_run_loses_nothing_and_never_double_owns(
    kafka_cluster: KafkaCluster,
    make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner],
    request: pytest.FixtureRequest,
    e2e_summary: Callable[[str], None],
) -> None:
    """Seeded kills (SIGKILL), restarts, additions and removals of cooperative members and a
    restart of the coordinator broker, under continuous keyed traffic: every acknowledged
    message is consumed and committed, duplicates are only counted, the ownership ledger shows
    no partition held by two members at once, and the final assignment is balanced. At least
    6 members are live throughout, at least 20 events take effect, each kind at least once,
    and the producer never fails a send."""
    plan = SOAK if request.config.getoption("--soak") else DEFAULT
    seed = int(request.config.getoption("--chaos-seed"))
    rng = random.Random(seed)
    bootstrap = kafka_cluster.bootstrap
    started = time.monotonic()
    topic = make_topic(plan.partitions, replication_factor=3,
                       configs={"min.insync.replicas": "2"}, bootstrap=bootstrap)
    producer = SequencedProducer(bootstrap, [topic], rate=plan.rate).start()
    group = make_group(
        [topic], [COOPERATIVE], bootstrap=bootstrap, commit="sync", report_records=True,
        session_timeout_ms=10_000, heartbeat_interval_ms=1_000, revoke_delay_ms=200,
    )
    restarter = BrokerRestarter(kafka_cluster, group.group_id)
    killed_at: dict[str, float] = {}
    counts: Counter[str] = Counter()
    done: list[tuple[str, str]] = []  # (kind, member name) of every event
    fewest = plan.initial_members
    try:
        for _ in range(plan.initial_members):
            group.add_member()
        group.wait_stable(timeout=180, settle=1.0)
        down: list[str] = []  # killed members waiting to be restarted
        serial = 0
        for step in range(1, plan.events + 1):
            time.sleep(rng.uniform(*plan.gap))
            live = sorted(group.live_indexes(), key=lambda i: group.member(i).name)
            # kills and removals hit members that have joined: on a slow machine a member
            # started a moment ago may not have, and its loss would not be an event of the group
            joined = [i for i in live if _joined(group.member(i))]
            allowed = []
            if len(live) > plan.min_members and joined:
                allowed += ["kill", "remove"]
            if len(live) < plan.max_members:
                allowed += ["add"] + (["restart"] if down else [])
            kind = _choose(rng, allowed, set(KINDS) - set(counts), plan.events - step + 1,
                           bool(down))
            if kind in ("kill", "remove"):
                index = rng.choice(joined)
                name = group.member(index).name
                if kind == "kill":
                    killed_at[name] = time.monotonic()
                    group.kill_member(index)
                    down.append(name)
                else:
                    group.stop_member(index)
            elif kind == "restart":
                name = f"{down.pop(rng.randrange(len(down))).split('.')[0]}.{step}"
                group.add_member(name=name)
            else:
                serial += 1
                name = f"n{serial}"
                group.add_member(name=name)
            counts[kind] += 1
            done.append((kind, name))
            # a member dying on its own would show here too
            fewest = min(fewest, len(group.live_indexes()))
            assert fewest >= plan.min_members, (
                f"step {step} ({kind} {name}): only {fewest} live members: "
                f"{[v.describe() for v in group.members()]}")
            if step % plan.broker_restart_every == 0:
                restarter.start()
        restarter.join(timeout=400)
        final = group.wait_stable(timeout=240, settle=3.0)
        producer.stop()
        committed = wait_all_committed(bootstrap, group.group_id,
                                       [(topic, p) for p in range(plan.partitions)], timeout=240)
        report = delivery_report(producer, consumed_records([group]), committed)
        double = overlaps(holdings(group, ended=killed_at))
        generation = max(v.generation for v in group.members() if v.alive)
        effective = Counter(kind for kind, name in done if _took_effect(group, kind, name))
        e2e_summary(
            f"CHAOS seed={seed} events={sum(counts.values())} "
            f"took_effect={sum(effective.values())} "
            f"({' '.join(f'{k}={effective[k]}/{counts[k]}' for k in KINDS)}) "
            f"fewest_live={fewest} broker_restarts={restarter.restarted} "
            f"members={len(final)} {report.summary()} "
            f"double_ownership={len(double)} spread={spread(final)} generations={generation} "
            f"elapsed={time.monotonic() - started:.0f}s"
        )
        assert sum(effective.values()) >= plan.min_effective, (effective, done)
        assert all(effective[k] >= 1 for k in KINDS), (effective, done)
        assert restarter.restarted
        assert report.produced > 0 and report.failed_sends == 0, (
            report.summary(), sorted(producer.failed.items())[:10])
        assert report.lost == 0, (report.unconsumed[:20], report.uncommitted[:20])
        assert not report.mismatched, report.mismatched[:10]
        assert double == [], f"{double[:10]}\n{ownership_story(group, double)}"
        assert spread(final) <= 1, final
    finally:
        producer.stop(timeout=10)
        with contextlib.suppress(Exception):  # the test's own failure matters more
            restarter.join(timeout=400)
        restarter.heal()
