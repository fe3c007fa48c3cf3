"""Online migration between the classic protocol and KIP-848, both ways, under traffic.

A group of kafka-python members on ``cooperative-balanced-sticky`` (classic protocol,
configured as the README says) is moved by rolling restarts, one member at a time, to
plain confluent-kafka members with ``group.protocol=consumer`` and
``group.remote.assignor=balanced-sticky`` (the broker-side port of the same algorithm),
then back, while a producer writes keyed records all along (docs/migration.md is the
recipe). The first consumer-protocol member converts the live classic group into a
consumer group (the broker allows it only when no assignment carries user data); the
kafka-python members stay classic members inside it; when the last consumer-protocol
member leaves, the broker converts the group back.

Checked: after every step the broker calls the group Stable, every partition is held
once, each member's own view matches the broker's, and the partitions that changed owner
among members present before and after are exactly the fewest balance requires; no
partition is ever held by two members at once (from the members' rebalance callbacks,
timestamped on one clock); no record is lost; no member sees GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kafka_assignors.embedded import GroupRunner

from ..background_producer import BackgroundProducer
from ..broker_view import BrokerView, describe
from ..child_members import ChildMembers
from ..conftest import BrokerHandle
from ..ledger import holdings, minimal_moves, moved, overlaps

log = logging.getLogger(__name__)

MEMBER = Path(__file__).parent.parent / "kip848_member.py"
CLASSIC_STRATEGY = "kafka_assignors:CooperativeBalancedStickyAssignor"
PARTITIONS = 12
STABLE_TIMEOUT_S = 90.0
TP = tuple[str, int]
State = dict[str, frozenset[TP]]
pytestmark = pytest.mark.timeout(600)


@dataclass
class Step:
    what: str
    group_type: str
    assignor: str
    members: dict[str, str]  # name -> protocol
    moved: int
    fewest: int
    took_s: float


@dataclass
class MigratingGroup:
    """kafka-python members (GroupRunner) and KIP-848 confluent-kafka members in one group."""

    bootstrap: str
    group_id: str
    topic: str
    runner: GroupRunner
    kip848: ChildMembers
    kp_index: dict[str, int] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)

    def start(self, name: str, protocol: str) -> None:
        if protocol == "classic":
            self.kp_index[name] = self.runner.add_member(name=name)
        else:
            self.kip848.add(name)

    def stop(self, name: str) -> None:
        if name in self.kp_index:
            self.runner.stop_member(self.kp_index.pop(name))
        else:
            self.kip848.stop(name)

    def protocols(self) -> dict[str, str]:
        out = {n: "classic" for n in self.kp_index}
        out.update({n: "consumer" for n in self.kip848.live()})
        return out

    def own_views(self) -> State:
        """What each live member says it holds."""
        views: State = {}
        for name, index in self.kp_index.items():
            views[name] = self.runner.member(index).assignment
        for name in self.kip848.live():
            held: set[TP] = set()
            for event in self.kip848.events(name):
                if event["event"] == "assigned":
                    held |= {(t, p) for t, p in event["partitions"]}
                elif event["event"] in ("revoked", "lost"):
                    held -= {(t, p) for t, p in event["partitions"]}
            views[name] = frozenset(held)
        return views

    def check_alive(self) -> None:
        for name, member in self.kip848.members.items():
            if not member.gone and member.proc.poll() is not None:
                raise AssertionError(f"{name} exited on its own\n" + self.kip848.log_tail(name))
        errors = [v.last_error for v in self.runner.members() if v.alive and v.last_error]
        assert not errors, errors

    def wait_stable(self, timeout: float = STABLE_TIMEOUT_S) -> tuple[State, BrokerView]:
        """Until the broker calls the group Stable, with every partition held once and each
        live member's own view equal to the broker's; returns them."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        expected = {(self.topic, p) for p in range(PARTITIONS)}
        deadline = time.monotonic() + timeout
        problem = "not described yet"
        while time.monotonic() < deadline:
            self.check_alive()
            view = describe(admin, self.group_id)
            own = self.own_views()
            if isinstance(view, str):
                problem = view
            elif not view.stable:
                problem = f"state {view.state}"
            elif set(view.members) != set(own):
                problem = f"broker lists {sorted(view.members)}, live members are {sorted(own)}"
            elif view.members != own:
                problem = f"members' own views {own} differ from the broker's {view.members}"
            elif (held := [tp for tps in own.values() for tp in tps]) and (
                    len(held) != len(set(held)) or set(held) != expected):
                problem = f"not every partition held once: {own}"
            else:
                return own, view
            time.sleep(0.2)
        errors = sorted({f"{n}: {e.get('message')}" for n in self.kip848.members
                         for e in self.kip848.events(n) if e["event"] == "error"})
        raise AssertionError(f"no stable group in {timeout:.0f} s: {problem}; errors the "
                             f"consumer-protocol members saw: {errors[:5]}")

    def step(self, what: str, before: State, action: Callable[[], None]) -> State:
        started = time.monotonic()
        action()
        after, view = self.wait_stable()
        fewest = minimal_moves(before, after, PARTITIONS)
        record = Step(what, view.group_type, view.assignor, self.protocols(),
                      moved(before, after), fewest, round(time.monotonic() - started, 1))
        self.steps.append(record)
        log.info("step %s: %s", what, record)
        return after


@pytest.fixture
def migrating_group(
    kafka_broker: BrokerHandle, make_topic: Callable[..., str],
    make_group: Callable[..., GroupRunner], unique_name: Callable[[str], str],
) -> Iterator[MigratingGroup]:
    topic = make_topic(PARTITIONS)
    group_id = unique_name("group")
    # kafka-python members as the README configures them; the timeouts only make the test
    # quicker to notice a change
    runner = make_group([topic], [CLASSIC_STRATEGY], group_id=group_id,
                        session_timeout_ms=10_000, heartbeat_interval_ms=500,
                        report_records=True,
                        consumer_config={"metadata_max_age_ms": 5_000,
                                         "auto_commit_interval_ms": 1_000})
    kip848 = ChildMembers(MEMBER, {"bootstrap": kafka_broker.bootstrap, "group": group_id,
                                   "topics": [topic]})
    group = MigratingGroup(kafka_broker.bootstrap, group_id, topic, runner, kip848)
    try:
        yield group
    finally:
        kip848.close()


def _consumed(group: MigratingGroup) -> set[tuple[int, int]]:
    out = {(int(e["partition"]), int(e["offset"]))
           for v in group.runner.members() for e in v.events if e.get("event") == "record"}
    for name in group.kip848.members:
        out |= {(int(e["partition"]), int(e["offset"]))
                for e in group.kip848.events(name) if e["event"] == "record"}
    return out


def _read_count(group: MigratingGroup) -> int:
    count = sum(1 for v in group.runner.members() for e in v.events
                if e.get("event") == "record")
    return count + sum(1 for n in group.kip848.members for e in group.kip848.events(n)
                       if e["event"] == "record")


def test_rolling_migration_to_the_consumer_protocol_and_back_under_traffic(
    kafka_broker: BrokerHandle, migrating_group: MigratingGroup,
    e2e_summary: Callable[[str], None],
) -> None:
    if kafka_broker.byo:
        pytest.skip("needs the project's broker image (balanced-sticky on the broker)")
    group = migrating_group
    producer = BackgroundProducer(kafka_broker.bootstrap, group.topic)
    try:
        for name in ("k1", "k2", "k3"):
            group.start(name, "classic")
        state, view = group.wait_stable()
        assert view.group_type == "CLASSIC"
        # a restarted member is a new one (it starts with nothing), so it gets a new name
        plan = [("k1", "c1", "consumer"), ("k2", "c2", "consumer"), ("k3", "c3", "consumer"),
                ("c1", "k4", "classic"), ("c2", "k5", "classic"), ("c3", "k6", "classic")]
        for old, new, protocol in plan:

            def stop(old: str = old) -> None:
                group.stop(old)

            def start(new: str = new, protocol: str = protocol) -> None:
                group.start(new, protocol)

            state = group.step(f"{old} stops", state, stop)
            state = group.step(f"{new} starts ({protocol})", state, start)
        producer.stop()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and producer.acked - _consumed(group):
            time.sleep(0.5)
    finally:
        producer.stop()
    lost = producer.acked - _consumed(group)
    duplicates = _read_count(group) - len(_consumed(group))
    kp_ledger = holdings(group.runner)
    kip_ledger = holdings(group.kip848.members.values())
    double = overlaps(kp_ledger + kip_ledger)
    errors = [f"{n}: {e.get('code')} {e.get('message')}" for n in group.kip848.members
              for e in group.kip848.events(n) if e["event"] == "error"]
    table = "\n".join(
        f"  {s.what:22} {s.group_type:8} group on {s.assignor:27} moved {s.moved} "
        f"(fewest {s.fewest}) in {s.took_s:5.1f} s; members {s.members}" for s in group.steps
    )
    print(f"\n{table}")
    e2e_summary(
        f"PROTOCOL-MIGRATION produced={len(producer.acked)} failed_sends={producer.failed} "
        f"lost={len(lost)} duplicates={duplicates} double_ownership={len(double)} "
        f"group_types={'/'.join(s.group_type[:3] for s in group.steps)} "
        f"moved={[s.moved for s in group.steps]} fewest={[s.fewest for s in group.steps]}"
    )
    assert producer.failed == 0
    assert not lost, f"{len(lost)} records never read, e.g. {sorted(lost)[:5]}"
    assert double == [], double
    assert not [e for e in errors if "GROUP_ID_NOT_FOUND" in e], errors
    types = [s.group_type for s in group.steps]
    # the first consumer-protocol member converts the group; the last one to leave
    # converts it back
    assert types == ["CLASSIC"] + ["CONSUMER"] * 9 + ["CLASSIC"] * 2, types
    # the broker assigns with our balanced-sticky; classic groups with the members' own
    assert {s.assignor for s in group.steps if s.group_type == "CONSUMER"} == {
        "balanced-sticky"}
    assert {s.assignor for s in group.steps if s.group_type == "CLASSIC"} == {
        "cooperative-balanced-sticky"}
    for s in group.steps:
        assert s.moved == s.fewest, f"{s.what}: moved {s.moved}, balance needs {s.fewest}"
