"""A seeded chaos run on the 3-broker cluster: cooperative members are killed, restarted, added
and removed at random while a producer writes numbered messages and the group's coordinator
broker restarts; nothing may be lost and no partition may ever have two owners.

Default: at least 20 membership events (a few minutes). ``--soak`` (or KAFKA_ASSIGNORS_SOAK=1)
runs 150 events and restarts a broker every 50; ``--chaos-seed N`` replays another seed.
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

from kafka_assignors.embedded import GroupRunner, KafkaCluster

from ..ledger import holdings, overlaps, spread
from .checks import coordinator_of
from .traffic import SequencedProducer, consumed_records, delivery_report, wait_all_committed

COOPERATIVE = "kafka_assignors:CooperativeBalancedStickyAssignor"
KINDS = ("kill", "restart", "add", "remove")


@dataclass(frozen=True)
class ChaosPlan:
    events: int
    broker_restart_every: int
    min_members: int = 5
    max_members: int = 9
    initial_members: int = 6
    partitions: int = 24
    rate: float = 60.0
    gap: tuple[float, float] = (1.5, 4.0)


DEFAULT = ChaosPlan(events=24, broker_restart_every=13)
SOAK = ChaosPlan(events=150, broker_restart_every=50, rate=100.0)


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
) -> None:
    """Seeded kills (SIGKILL), restarts, additions and removals of cooperative members and a
    restart of the coordinator broker, under continuous keyed traffic: every acknowledged
    message is consumed and committed, duplicates are only counted, the ownership ledger shows
    no partition held by two members at once, and the final assignment is balanced."""
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
    try:
        for _ in range(plan.initial_members):
            group.add_member()
        group.wait_stable(timeout=180, settle=1.0)
        down: list[str] = []  # killed members waiting to be restarted
        serial = 0
        for step in range(1, plan.events + 1):
            time.sleep(rng.uniform(*plan.gap))
            live = sorted(group.live_indexes(), key=lambda i: group.member(i).name)
            allowed = []
            if len(live) > plan.min_members:
                allowed += ["kill", "remove"]
            if len(live) < plan.max_members:
                allowed += ["add"] + (["restart"] if down else [])
            kind = rng.choice(allowed)
            if kind in ("kill", "remove"):
                index = rng.choice(live)
                name = group.member(index).name
                if kind == "kill":
                    killed_at[name] = time.monotonic()
                    group.kill_member(index)
                    down.append(name)
                else:
                    group.stop_member(index)
            elif kind == "restart":
                name = down.pop(rng.randrange(len(down)))
                group.add_member(name=f"{name.split('.')[0]}.{step}")
            else:
                serial += 1
                group.add_member(name=f"n{serial}")
            counts[kind] += 1
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
        print(
            f"\nCHAOS seed={seed} events={sum(counts.values())} "
            f"({' '.join(f'{k}={counts[k]}' for k in KINDS)}) "
            f"broker_restarts={restarter.restarted} members={len(final)} {report.summary()} "
            f"double_ownership={len(double)} spread={spread(final)} generations={generation} "
            f"elapsed={time.monotonic() - started:.0f}s"
        )
        assert sum(counts.values()) >= 20 and restarter.restarted
        assert report.produced > 0
        assert report.lost == 0, (report.unconsumed[:20], report.uncommitted[:20])
        assert not report.mismatched, report.mismatched[:10]
        assert double == [], double[:10]
        assert spread(final) <= 1, final
    finally:
        producer.stop(timeout=10)
        with contextlib.suppress(Exception):  # the test's own failure matters more
            restarter.join(timeout=400)
        restarter.heal()
