"""The cooperative aiokafka runtime: its coordinator's steps, the manifest, the class swap.

aiokafka's real ``GroupCoordinator`` and ``SubscriptionState`` are built on a fake client
(no broker: the coordination task only waits for a subscription); the rebalance steps are
driven as aiokafka's coordination task drives them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.cluster import ClusterMetadata
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.consumer.subscription_state import SubscriptionState
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocol
from aiokafka.structs import TopicPartition

from kafka_assignors.aiokafka import (
    AIOKafkaConsumer,
    BalancedStickyAssignor,
    CooperativeBalancedStickyAssignor,
)
from kafka_assignors.aiokafka.runtime import manifest
from kafka_assignors.aiokafka.runtime.consumer import _AfterEachStep, cooperative_protocol
from kafka_assignors.aiokafka.runtime.coordinator import CooperativeGroupCoordinator

T = "t"


def tps(*partitions: int) -> set[TopicPartition]:
    return {TopicPartition(T, p) for p in partitions}


def assignment_bytes(*partitions: int) -> bytes:
    raw: bytes = ConsumerProtocol.ASSIGNMENT(0, [(T, sorted(partitions))], b"").encode()
    return raw


class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    """Records each call with what the member looked like during it."""

    def __init__(self, subscription: SubscriptionState) -> None:
        self.subscription = subscription
        self.calls: list[tuple[str, set[TopicPartition], dict[str, Any]]] = []
        #: a coordinator's recorded commits, to see which had landed by each call
        self.commits_seen: list[dict[TopicPartition, int]] | None = None

    def _seen(self) -> dict[str, Any]:
        sub = self.subscription
        seen = {"assigned": set(sub.assigned_partitions()),
                "paused": set(sub.paused_partitions()),
                "stopped": sub.reassignment_in_progress}
        if self.commits_seen is not None:
            seen["commits"] = list(self.commits_seen)
        return seen

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls.append(("revoked", set(revoked), self._seen()))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls.append(("assigned", set(assigned), self._seen()))


class Recording(CooperativeGroupCoordinator):
    """Records commits instead of sending them (there is no broker here)."""

    commits: list[dict[TopicPartition, int]]

    async def commit_offsets(self, assignment: Any, offsets: dict[Any, Any]) -> None:
        self.commits.append({tp: o.offset for tp, o in offsets.items()})


Scenario = Callable[[Recording, Listener, SubscriptionState], Awaitable[None]]


def run(scenario: Scenario, *, cooperative: bool = True, auto_commit: bool = False) -> None:
    """Build aiokafka's coordinator on a fake client, adopt it, run ``scenario``."""

    async def main() -> None:
        subscription = SubscriptionState()
        listener = Listener(subscription)
        subscription.subscribe({T}, listener=listener)
        assignor = CooperativeBalancedStickyAssignor()
        client = SimpleNamespace(cluster=ClusterMetadata())
        coordinator = GroupCoordinator(client, subscription, group_id="g",
                                       assignors=(assignor,), enable_auto_commit=auto_commit)
        # (the coordination task would look the coordinator up: this test drives the steps)
        coordinator._coordination_task.cancel()
        Recording.adopt(coordinator, cooperative=cooperative)
        assert isinstance(coordinator, Recording)
        coordinator.commits = []
        coordinator.generation = 1
        try:
            await scenario(coordinator, listener, subscription)
        finally:
            for task in (coordinator._heartbeat_task, coordinator._commit_refresh_task):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    asyncio.run(main())


async def join(c: Recording, *partitions: int) -> None:
    """One rebalance as aiokafka's coordination task runs it (without the wire)."""
    await c._on_join_prepare(c._subscription.subscription.assignment)
    c.generation += 1
    c._rejoin_needed_fut = asyncio.get_running_loop().create_future()
    await c._on_join_complete(c.generation, "m", "cooperative-balanced-sticky",
                              assignment_bytes(*partitions))
    await asyncio.sleep(0)  # (the tasks it started take their first step)


def consume(sub: SubscriptionState, positions: dict[int, int]) -> None:
    for p, offset in positions.items():
        sub.seek(TopicPartition(T, p), offset)


def test_kept_partitions_are_never_revoked_and_keep_their_position() -> None:
    """A member giving up one partition revokes only that one, while it is still assigned
    and no longer returned; the others keep their positions and records keep flowing."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1, 2)
        consume(sub, {0: 10, 1: 20, 2: 30})
        listener.calls.clear()
        await join(c, 0, 1)
        revoked, assigned = listener.calls
        assert revoked[0:2] == ("revoked", tps(2))
        assert revoked[2] == {"assigned": tps(0, 1, 2), "paused": tps(2), "stopped": False}
        assert assigned[0:2] == ("assigned", set())
        assert sub.assigned_partitions() == tps(0, 1)
        assert not sub.reassignment_in_progress
        state = sub.subscription.assignment
        assert [state.state_value(TopicPartition(T, p)).position for p in (0, 1)] == [10, 20]
        assert c._rejoin_needed_fut.done(), "the follow-up round must be requested"

    run(scenario)


def test_the_follow_up_round_adds_partitions_without_touching_kept_ones() -> None:
    """Added partitions start from their committed offset; kept ones go on where they were."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        consume(sub, {0: 5, 1: 6})
        sub.pause(TopicPartition(T, 1))  # the user's pause survives
        listener.calls.clear()
        await join(c, 0, 1, 3)
        assert [(kind, parts) for kind, parts, _ in listener.calls] == [("assigned", tps(3))]
        state = sub.subscription.assignment
        assert state.state_value(TopicPartition(T, 0)).position == 5
        assert state.state_value(TopicPartition(T, 1)).paused
        assert not state.state_value(TopicPartition(T, 3)).has_valid_position
        assert not c._rejoin_needed_fut.done()

    run(scenario)


def test_an_unchanged_assignment_keeps_the_same_assignment_object() -> None:
    """A round that changes nothing for a member does not disturb its fetching at all."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        before = sub.subscription.assignment
        await join(c, 0, 1)
        assert sub.subscription.assignment is before and before.active

    run(scenario)


def test_the_prepare_step_keeps_everything_and_commits_consumed_offsets() -> None:
    """Before a cooperative JoinGroup nothing is revoked or stopped; auto-commit commits."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        consume(sub, {0: 7, 1: 8})
        listener.calls.clear()
        await c._on_join_prepare(sub.subscription.assignment)
        assert listener.calls == []
        assert not sub.reassignment_in_progress
        assert c.commits[-1] == {TopicPartition(T, 0): 7, TopicPartition(T, 1): 8}

    run(scenario, auto_commit=True)


def test_revoked_offsets_are_committed_before_the_listener_runs() -> None:
    """With auto-commit, what was consumed of a revoked partition is committed first."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        consume(sub, {0: 3, 1: 4})
        c.commits.clear()
        listener.calls.clear()
        listener.commits_seen = c.commits
        await join(c, 0)
        assert listener.calls[0][0:2] == ("revoked", tps(1))
        # (the prepare step committed everything; the revocation commits what it gives up)
        assert listener.calls[0][2]["commits"][-1] == {TopicPartition(T, 1): 4}

    run(scenario, auto_commit=True)


def test_an_expelled_member_stops_returning_records_and_reports_them_revoked() -> None:
    """Expelled (reset_generation): records stop at once; the listener hears of them before
    the next assignment, which is then taken as a fresh one."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        listener.calls.clear()
        c.reset_generation()
        assert sub.reassignment_in_progress
        c._performed_join_prepare = True  # expelled mid-join: no prepare step again
        c.generation = 5
        await c._on_join_complete(5, "m2", "cooperative-balanced-sticky", assignment_bytes(1, 2))
        assert [(k, p) for k, p, _ in listener.calls] == [("revoked", tps(0, 1)),
                                                         ("assigned", tps(1, 2))]
        assert not sub.reassignment_in_progress

    run(scenario)


def test_a_closing_member_revokes_what_it_holds_before_it_leaves() -> None:
    """stop(): on_partitions_revoked gets every partition held, before the LeaveGroup (Java's
    onLeavePrepare); aiokafka alone calls no listener then."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        listener.calls.clear()
        c._closing.set_result(None)
        c.generation = -1  # (no LeaveGroup to send without a broker)
        await c._maybe_leave_group()
        assert [(k, p) for k, p, _ in listener.calls] == [("revoked", tps(0, 1))]

    run(scenario)


class Sending(CooperativeGroupCoordinator):
    """Records the commits aiokafka would send (below ``commit_offsets``)."""

    sent: list[dict[TopicPartition, int]]

    async def _do_commit_offsets(self, assignment: Any, offsets: dict[Any, Any]) -> None:
        self.sent.append({tp: o.offset for tp, o in offsets.items()})


def test_a_commit_during_the_members_join_goes_out_once_it_is_answered() -> None:
    """A commit asked for while the member's JoinGroup/SyncGroup is pending is held (sent, it
    would queue behind the JoinGroup and be refused), then sent with the new generation."""
    from aiokafka.structs import OffsetAndMetadata

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        c.__class__ = Sending
        c.sent = []
        c.coordinator_id = 1  # (known: no lookup without a broker)
        c._ka_round_trip = asyncio.get_running_loop().create_future()
        offsets = {TopicPartition(T, 0): OffsetAndMetadata(9, "")}
        commit = asyncio.ensure_future(c.commit_offsets(sub.subscription.assignment, offsets))
        await asyncio.sleep(0.05)
        assert c.sent == [] and not commit.done()
        c._round_trip_answered()
        await asyncio.wait_for(commit, 1)
        assert c.sent == [{TopicPartition(T, 0): 9}]

    run(scenario)


class Refusing(CooperativeGroupCoordinator):
    """Answers an OffsetCommit of partition 0 ILLEGAL_GENERATION; ``joins`` bumps the
    generation while the commit is in flight (the member's JoinGroup answered meanwhile)."""

    joins = False

    async def _send_req(self, request: Any) -> Any:
        if self.joins:
            self.generation += 1
        return SimpleNamespace(topics=[(T, [(0, 22)])])


@pytest.mark.parametrize("joined_meanwhile", [True, False])
def test_a_commit_refused_for_an_older_generation_keeps_the_membership(
        joined_meanwhile: bool) -> None:
    """ILLEGAL_GENERATION for a commit sent before the member's JoinGroup was answered fails
    the commit only; for the current generation the member is expelled (records stop)."""
    from aiokafka.errors import IllegalGenerationError
    from aiokafka.structs import OffsetAndMetadata

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        c.__class__ = Refusing
        c.member_id = "m"
        c.joins = joined_meanwhile
        with pytest.raises(IllegalGenerationError):
            await c._do_commit_offsets(sub.subscription.assignment,
                                       {TopicPartition(T, 0): OffsetAndMetadata(1, "")})
        assert (c.member_id == "m") is joined_meanwhile
        assert sub.reassignment_in_progress is not joined_meanwhile

    run(scenario)


class RebalancingOnce(CooperativeGroupCoordinator):
    """Answers the first OffsetCommit REBALANCE_IN_PROGRESS (the group began a rebalance this
    member has not joined yet), later ones with success; records what was sent."""

    sent: list[tuple[int, dict[TopicPartition, int]]]

    async def _send_req(self, request: Any) -> Any:
        from aiokafka.errors import RebalanceInProgressError

        self.sent.append((request.generation_id if hasattr(request, "generation_id")
                          else self.generation, {}))
        code = RebalanceInProgressError.errno if len(self.sent) == 1 else 0
        return SimpleNamespace(topics=[(T, [(0, code)])])


@pytest.mark.parametrize("keeps", [True, False])
def test_a_commit_refused_because_the_group_began_rebalancing_goes_out_after_the_join(
        keeps: bool) -> None:
    """REBALANCE_IN_PROGRESS before this member joined: a cooperative member keeps its
    partitions through the rebalance, so the commit waits for its join and goes out again with
    the new generation (it succeeds); if the join took the partition away, the refusal stands
    (aiokafka's CommitFailedError)."""
    from aiokafka.errors import CommitFailedError
    from aiokafka.structs import OffsetAndMetadata

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        c.__class__ = RebalancingOnce
        c.sent, c.member_id, c.coordinator_id = [], "m", 1
        offsets = {TopicPartition(T, 0): OffsetAndMetadata(5, "")}
        commit = asyncio.ensure_future(c.commit_offsets(sub.subscription.assignment, offsets))
        await asyncio.sleep(0.05)
        assert len(c.sent) == 1 and not commit.done()  # refused; waits for the join
        await join(c, *((0, 1) if keeps else (1,)))
        if keeps:
            await asyncio.wait_for(commit, 1)
            assert [g for g, _ in c.sent] == [2, 3]
        else:
            with pytest.raises(CommitFailedError):
                await asyncio.wait_for(commit, 1)
            assert len(c.sent) == 1

    run(scenario)


class RefusedAcrossTheJoin(CooperativeGroupCoordinator):
    """The first OffsetCommit is overtaken by the member's JoinGroup: answered (generation
    bumped, SyncGroup pending) before it, so the broker refuses it ILLEGAL_GENERATION."""

    sent: list[int]

    async def _send_req(self, request: Any) -> Any:
        from aiokafka.errors import IllegalGenerationError

        self.sent.append(self.generation)
        if len(self.sent) > 1:
            return SimpleNamespace(topics=[(T, [(0, 0)])])
        self.generation += 1
        self._ka_round_trip = asyncio.get_running_loop().create_future()
        return SimpleNamespace(topics=[(T, [(0, IllegalGenerationError.errno)])])


def test_a_commit_overtaken_by_the_members_join_goes_out_with_the_new_generation() -> None:
    """ILLEGAL_GENERATION for a commit sent just before the member's JoinGroup was answered:
    the member keeps its membership and, once its SyncGroup completed with the partition
    still its own, the commit goes out again with the new generation (seen on a loaded
    machine: aiokafka's CommitFailedError for a member that lost nothing)."""
    from aiokafka.structs import OffsetAndMetadata

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        c.__class__ = RefusedAcrossTheJoin
        c.sent, c.member_id, c.coordinator_id = [], "m", 1
        offsets = {TopicPartition(T, 0): OffsetAndMetadata(5, "")}
        commit = asyncio.ensure_future(c.commit_offsets(sub.subscription.assignment, offsets))
        await asyncio.sleep(0.05)
        assert c.sent == [2] and not commit.done() and c.member_id == "m"
        await c._on_join_complete(c.generation, "m", "cooperative-balanced-sticky",
                                  assignment_bytes(0, 1))
        await asyncio.wait_for(commit, 1)
        assert c.sent == [2, 3]

    run(scenario)


def test_an_eager_consumer_keeps_aiokafkas_behaviour() -> None:
    """Not cooperative: every step is aiokafka's (everything revoked and stopped)."""

    async def scenario(c: Recording, listener: Listener, sub: SubscriptionState) -> None:
        await join(c, 0, 1)
        listener.calls.clear()
        await c._on_join_prepare(sub.subscription.assignment)
        assert listener.calls[0][0:2] == ("revoked", tps(0, 1))
        assert sub.reassignment_in_progress

    run(scenario, cooperative=False)


def test_an_assignor_instance_serves_one_live_consumer() -> None:
    """Two consumers given one assignor instance would mix their owned partitions (aiokafka
    keeps its sticky state on the class): the second is refused, its coordinator unchanged."""

    async def main() -> None:
        shared = CooperativeBalancedStickyAssignor()
        coordinators = []
        for _ in range(2):
            subscription = SubscriptionState()
            client = SimpleNamespace(cluster=ClusterMetadata())
            c = GroupCoordinator(client, subscription, group_id="g", assignors=(shared,))
            c._coordination_task.cancel()
            coordinators.append(c)
        CooperativeGroupCoordinator.adopt(coordinators[0], cooperative=True)
        with pytest.raises(ValueError, match="already serves another live consumer"):
            CooperativeGroupCoordinator.adopt(coordinators[1], cooperative=True)
        assert type(coordinators[1]) is GroupCoordinator

    asyncio.run(main())


def test_the_manifest_holds_on_the_installed_aiokafka() -> None:
    """Every internal the runtime relies on is there, with the signature it calls."""
    assert manifest.public_missing() == ()
    assert manifest.class_missing() == ()
    assert "GroupCoordinator._on_join_complete" in manifest.names()


def test_a_missing_or_changed_internal_is_named() -> None:
    """A release lacking a method, or calling it with other parameters, is refused by name."""

    class Renamed:
        async def _on_join_prepare(self, prev: Any) -> None: ...

    classes = dict(manifest._classes(), GroupCoordinator=Renamed)
    lacking = manifest.class_missing(classes)
    assert "GroupCoordinator._on_join_prepare(previous_assignment)" in lacking
    assert "GroupCoordinator._on_join_complete" in lacking
    message = str(manifest.MissingInternals(lacking))
    assert "GroupCoordinator._on_join_complete" in message and "aiokafka" in message


def test_the_protocol_is_cooperative_only_if_every_assignor_supports_it() -> None:
    """Java's rule: a rolling upgrade that still lists an eager assignor runs eager."""
    assert cooperative_protocol([CooperativeBalancedStickyAssignor()])
    assert not cooperative_protocol([CooperativeBalancedStickyAssignor(),
                                     RoundRobinPartitionAssignor])
    assert not cooperative_protocol([BalancedStickyAssignor()])
    assert not cooperative_protocol([])


def test_the_consumer_announces_its_protocol_and_a_plain_one_stays_eager() -> None:
    """Our consumer sets its assignors' announced mode; aiokafka's own leaves it eager."""
    from aiokafka import AIOKafkaConsumer as Plain

    async def main() -> None:
        ours = CooperativeBalancedStickyAssignor()
        consumer = AIOKafkaConsumer(bootstrap_servers="127.0.0.1:1", group_id="g",
                                    partition_assignment_strategy=(ours,))
        plain_assignor = CooperativeBalancedStickyAssignor()
        plain = Plain(bootstrap_servers="127.0.0.1:1", group_id="g",
                      partition_assignment_strategy=(plain_assignor,))
        assert consumer.cooperative and ours.protocol_mode == "cooperative"
        assert plain_assignor.protocol_mode == "eager"
        upgrading = CooperativeBalancedStickyAssignor()
        mixed = AIOKafkaConsumer(bootstrap_servers="127.0.0.1:1", group_id="g",
                                 partition_assignment_strategy=(upgrading,
                                                                RoundRobinPartitionAssignor))
        assert not mixed.cooperative and upgrading.protocol_mode == "eager"
        for c in (consumer, plain, mixed):
            await c._client.close()

    asyncio.run(main())


def test_the_class_is_swapped_before_the_coordination_task_runs() -> None:
    """The hook sees each suspension of the awaited coroutine before any other task runs."""
    seen: list[str] = []

    async def other() -> None:
        seen.append("task ran")

    async def start() -> int:
        asyncio.get_running_loop().create_task(other())  # as GroupCoordinator.__init__
        seen.append("built")
        await asyncio.sleep(0)
        seen.append("resumed")
        return 7

    async def main() -> int:
        def hook() -> None:
            seen.append("hook")

        return int(await _AfterEachStep(start(), hook))

    assert asyncio.run(main()) == 7
    assert seen[:3] == ["built", "hook", "task ran"]


def test_cancellation_reaches_the_awaited_coroutine() -> None:
    """Cancelling start() cancels aiokafka's start() inside it."""
    cancelled: list[bool] = []

    async def start() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def main() -> None:
        task = asyncio.ensure_future(_AfterEachStep(start(), lambda: None))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled == [True]

