"""Cooperative aiokafka members in mixed groups and through a rolling upgrade, live.

* Mixed: cooperative aiokafka members (``kafka_assignors.aiokafka.AIOKafkaConsumer``),
  cooperative kafka-python members (``kafka_assignors.kafka_python.KafkaConsumer``) and
  eager aiokafka members (aiokafka's own consumer with the same assignor) in one group on
  ``cooperative-balanced-sticky``, under traffic: an eager aiokafka member leads first, then
  it leaves and another member (the broker's pick) leads; members join and leave.
* Mixed with a bridged confluent member: the same kinds plus bridged confluent members
  (``kafka_assignors.confluent.Consumer`` on ``cooperative-balanced-sticky``); a bridged
  member leads first and leaves, then the member the broker picked (aiokafka or
  kafka-python) leaves in turn, with a join and a leave between.
* Rolling upgrade: three aiokafka members on aiokafka's ``roundrobin`` are restarted one at a
  time with our consumer listing ``cooperative-balanced-sticky`` and ``roundrobin`` (eager
  while ``roundrobin`` is listed, Java's rule), then once more with only
  ``cooperative-balanced-sticky`` (cooperative), under traffic.

After each step the group is stable with every partition owned exactly once; at the end
every acknowledged record was consumed (0 lost) and no partition was ever held by two
members at once (the members' rebalance callbacks, CLOCK_MONOTONIC). Every revocation
awaits 0.1 s per partition, so a hand-over before the old owner let go would show.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_assignors.embedded import GroupRunner

from .background_producer import BackgroundProducer
from .child_members import ChildMembers
from .conftest import BrokerHandle
from .ledger import Reporting, holdings, overlaps, ownership_story
from .test_aiokafka_live import AioMembers, MixedGroup, State

BRIDGE_MEMBER = Path(__file__).with_name("confluent_member.py")

PARTITIONS = 12
COOPERATIVE = "cooperative-balanced-sticky"
KP_COOPERATIVE = "kafka_assignors:CooperativeBalancedStickyAssignor"
OURS: dict[str, Any] = {"runtime": True, "strategies": [COOPERATIVE]}
EAGER_AIOKAFKA: dict[str, Any] = {"runtime": False, "strategies": [COOPERATIVE]}
ROUNDROBIN: dict[str, Any] = {"runtime": False, "strategies": ["roundrobin"]}
UPGRADING: dict[str, Any] = {"runtime": True, "strategies": [COOPERATIVE, "roundrobin"]}
pytestmark = pytest.mark.timeout(420)


class BridgeMembers(AioMembers):
    """Bridged confluent member processes reporting in the ledger's format (a MemberView
    each, as the aiokafka members)."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        ChildMembers.__init__(self, BRIDGE_MEMBER, {
            "bootstrap": bootstrap, "group": group, "topic": topic, "topics": [topic],
            "strategy": COOPERATIVE, "ledger": True, "auto_commit_ms": 1_000})
        self._views = {}


class FourKinds(MixedGroup):
    """A MixedGroup whose live members include the bridged ones."""

    def __init__(self, group: MixedGroup, bridge: BridgeMembers) -> None:
        super().__init__(group.bootstrap, group.runner, group.aio, group.topics)
        self.bridge = bridge

    def live(self) -> dict[str, Any]:
        views = super().live()
        views.update(self.bridge.views())
        return views

    def _problem(self, after_generation: int) -> str | None:
        self.bridge.check_alive()
        return super()._problem(after_generation)

    def logs(self) -> str:
        return "\n".join([super().logs(), *(self.bridge.log_tail(n) for n in self.bridge.views())])

    def computed(self) -> dict[str, int]:
        """How many assignments each member computed so far (its leader reports, or for
        kafka-python its log lines)."""
        out = {n: len(v) for n, v in self.kp_assign_lines().items()}
        for members in (self.aio, self.bridge):
            for n in members.members:
                out[n] = sum(e["event"] == "report" for e in members.events(n))
        return out

    def kind(self, name: str) -> str:
        if name in self.bridge.members:
            return "confluent"
        return self.library(name)


def _group(bootstrap: str, group_id: str, topic: str) -> MixedGroup:
    runner = GroupRunner(bootstrap, group_id, [topic], [KP_COOPERATIVE], runtime=True,
                         session_timeout_ms=6_000, heartbeat_interval_ms=500,
                         report_records=True, revoke_delay_ms=100, log_level="INFO",
                         consumer_config={"metadata_max_age_ms": 5_000,
                                          "auto_commit_interval_ms": 1_000})
    aio = AioMembers(bootstrap, group_id, [topic])
    aio.base["flush_s_per_partition"] = 0.1
    return MixedGroup(bootstrap, runner, aio, {topic: PARTITIONS})


def _consumed(group: MixedGroup) -> set[tuple[int, int]]:
    events = [e for v in group.runner.members() for e in v.events]
    events += [e for n in group.aio.members for e in group.aio.events(n)]
    if isinstance(group, FourKinds):
        events += [e for n in group.bridge.members for e in group.bridge.events(n)]
    return {(int(e["partition"]), int(e["offset"])) for e in events if e["event"] == "record"}


def _stopped_reading(group: MixedGroup, names: list[str]) -> list[str]:
    """Those of ``names`` that ever stopped returning records for a rebalance once they held
    partitions (REBALANCING: aiokafka's ``reassignment_in_progress``, which an eager member
    enters at each rebalance; a new member is in it until its first assignment)."""
    out = []
    for name in names:
        held = False
        for e in group.aio.events(name):
            if e.get("state") == "REBALANCING" and held:
                out.append(name)
                break
            held = held or bool(e.get("assignment"))
    return out


def _member_events(group: FourKinds, name: str) -> list[dict[str, Any]]:
    if name in group.kp_index:
        return list(group.runner.members()[group.kp_index[name]].events)
    return (group.bridge if name in group.bridge.members else group.aio).events(name)


def _revoked_then_kept(group: FourKinds, names: list[str]) -> list[str]:
    """Those of ``names`` that were handed back, in the very next generation, a partition
    they had revoked: what eager members do with everything they keep (a cooperative member
    revokes only what moves, and it moves first)."""
    out = []
    for name in names:
        revoking: dict[tuple[str, int], int] = {}  # still held until "released"
        revoked: dict[tuple[str, int], int] = {}
        for e in _member_events(group, name):
            kind = e.get("event")
            if kind == "closing":
                break
            if kind == "revoked":
                revoking.update({(str(t), int(p)): int(e["generation"])
                                 for t, p in e.get("partitions", [])})
            elif kind == "released":
                revoked.update({tp: revoking.pop(tp) for t, p in e.get("partitions", [])
                                if (tp := (str(t), int(p))) in revoking})
            elif kind in ("assigned", "state") and e.get("state") == "STABLE":
                back = [tp for t, p in e.get("assignment", [])
                        if (tp := (str(t), int(p))) in revoked
                        and int(e["generation"]) <= revoked[tp] + 1]
                if back:
                    out.append(name)
                    break
    return out


def _finish(group: MixedGroup, producer: BackgroundProducer) -> None:
    """Stop the traffic; every acknowledged record consumed; never two owners."""
    producer.stop()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not producer.acked <= _consumed(group):
        time.sleep(0.2)
    lost = producer.acked - _consumed(group)
    views: list[Reporting] = [*group.runner.members(), *group.aio.members.values()]
    if isinstance(group, FourKinds):
        views += group.bridge.members.values()
    problems = overlaps(holdings(views))
    assert not lost, f"{len(lost)} acknowledged records never consumed: {sorted(lost)[:10]}"
    assert not problems, "\n".join(problems) + "\n" + ownership_story(views, problems)


def test_mixed_group_of_cooperative_and_eager_members_of_both_libraries(
        kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        unique_name: Callable[[str], str]) -> None:
    """Cooperative aiokafka, cooperative kafka-python and eager aiokafka members share a
    group under traffic, whoever leads: always valid, 0 lost, never two owners."""
    topic = make_topic(PARTITIONS)
    group = _group(kafka_broker.bootstrap, unique_name("group"), topic)
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, 200, partitions=PARTITIONS)
    try:
        group.aio.add("eager0", **EAGER_AIOKAFKA)  # first in: leads
        state = group.wait_stable()

        def add_cooperative_pair(aiokafka_name: str, kafka_python_name: str) -> None:
            group.aio.add(aiokafka_name, **OURS)
            group.add_kafka_python(kafka_python_name)

        steps: list[Callable[[], Any]] = [
            lambda: add_cooperative_pair("coop0", "kp0"),
            lambda: add_cooperative_pair("coop1", "kp1"),
            lambda: group.aio.stop("eager0"),  # the leader leaves: the broker picks another
            lambda: group.aio.add("eager1", **EAGER_AIOKAFKA),
            lambda: group.runner.stop_member(group.kp_index["kp0"]),
        ]
        for step in steps:
            generation = group.generation()
            step()
            state = group.wait_stable(generation)
        assert sorted(state) == ["coop0", "coop1", "eager1", "kp1"]
        _finish(group, producer)
        # cooperative members never stopped reading; the eager one did at each rebalance
        assert _stopped_reading(group, ["coop0", "coop1", "eager0"]) == ["eager0"]
    finally:
        if not producer._stop.is_set():
            producer.stop()
        group.aio.close()
        group.runner.close()


def test_mixed_group_with_a_bridged_confluent_member_whoever_leads(
        kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        unique_name: Callable[[str], str]) -> None:
    """Cooperative aiokafka, cooperative kafka-python, eager aiokafka and bridged confluent
    members share a group under traffic; a bridged member leads, leaves, and the broker's
    next pick (another library) leaves too: settles each time, 0 lost, never two owners,
    and the cooperative aiokafka members never stop reading what they keep."""
    topic = make_topic(PARTITIONS)
    group_id = unique_name("group")
    group = FourKinds(_group(kafka_broker.bootstrap, group_id, topic),
                      BridgeMembers(kafka_broker.bootstrap, group_id, topic))
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, 200, partitions=PARTITIONS)
    leaders: list[str] = []

    def step(action: Callable[[], Any]) -> State:
        generation, before = group.generation(), group.computed()
        action()
        state = group.wait_stable(generation)
        after = group.computed()
        computed = [n for n in after if after[n] > before.get(n, 0) and n in state]
        assert len(computed) == 1, f"leaders of one step: {computed}\n{group.logs()}"
        leaders.append(computed[0])
        return state

    def leave(name: str) -> None:
        if name in group.bridge.members:
            group.bridge.stop(name)
        elif name in group.aio.members:
            group.aio.stop(name)
        else:
            group.runner.stop_member(group.kp_index[name])

    def join_three() -> None:
        group.aio.add("coop0", **OURS)
        group.add_kafka_python("kp0")
        group.aio.add("eager0", **EAGER_AIOKAFKA)

    try:
        step(lambda: group.bridge.add("bridge0"))  # first in: leads
        step(join_three)
        step(lambda: leave("bridge0"))  # the leader leaves: the broker picks another
        step(lambda: group.bridge.add("bridge1"))
        picked = leaders[-1]
        state = step(lambda: leave(picked))  # that one leaves as well
        print(f"leaders, step by step: {leaders}")
        assert leaders[:2] == ["bridge0"] * 2, leaders
        assert group.kind(picked) != "confluent", leaders
        assert sorted(state) == sorted({"coop0", "kp0", "eager0", "bridge1"} - {picked})
        _finish(group, producer)
        # coop0 kept reading while it stayed (its own leave revokes all); eager0 stopped
        # at each rebalance once it held partitions (the bridged leader's leave at least)
        assert _stopped_reading(group, [n for n in ("coop0",) if n != picked]
                                + ["eager0"]) == ["eager0"]
        # cooperative members of every client revoked only what moved; eager0 did not
        flagged = _revoked_then_kept(group, ["coop0", "kp0", "bridge0", "bridge1", "eager0"])
        story = "\n".join(f"{n} {e['event']} g{e.get('generation')} {e.get('state')} "
                          f"p={e.get('partitions')} a={e.get('assignment')}"
                          for n in flagged for e in _member_events(group, n)
                          if e.get("event") in ("revoked", "assigned", "state"))
        assert flagged == ["eager0"], f"{leaders}\n{story}"
    finally:
        if not producer._stop.is_set():
            producer.stop()
        group.bridge.close()
        group.aio.close()
        group.runner.close()


def test_rolling_upgrade_from_roundrobin_to_cooperative_under_traffic(
        kafka_broker: BrokerHandle, make_topic: Callable[..., str],
        unique_name: Callable[[str], str]) -> None:
    """roundrobin -> both listed (eager) -> cooperative only, one member at a time, under
    traffic: 0 lost, never two owners, the group on cooperative-balanced-sticky at the end."""
    topic = make_topic(PARTITIONS)
    group = _group(kafka_broker.bootstrap, unique_name("group"), topic)
    producer = BackgroundProducer(kafka_broker.bootstrap, topic, 200, partitions=PARTITIONS)
    try:
        for i in range(3):
            group.aio.add(f"rr{i}", **ROUNDROBIN)
        group.wait_stable()
        for old, new, options in (
                *((f"rr{i}", f"both{i}", UPGRADING) for i in range(3)),
                *((f"both{i}", f"coop{i}", OURS) for i in range(3))):
            generation = group.generation()
            group.aio.stop(old)
            group.aio.add(new, **options)
            group.wait_stable(generation)
        protocols = {[e for e in group.aio.events(n) if e.get("state") == "STABLE"][-1]
                     ["protocol"] for n in ("coop0", "coop1", "coop2")}
        assert protocols == {COOPERATIVE}
        _finish(group, producer)
        assert _stopped_reading(group, ["coop0", "coop1", "coop2"]) == []
    finally:
        if not producer._stop.is_set():
            producer.stop()
        group.aio.close()
        group.runner.close()
