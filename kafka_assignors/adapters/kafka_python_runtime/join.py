"""Joins that are never dropped: kafka-python 3.0.x's JoinGroup/SyncGroup driver, fixed.

kafka-python 3.0.12 loses a join in two ways, both leaving the member REBALANCING
with its heartbeats off until the broker expels it:

* ``need_rejoin()`` turns False as soon as the JoinGroup request is built (after a
  subscription change) or the leader has assigned (after a metadata change); a poll
  that gave up waiting for the round trip is then never followed by one that waits
  for it again, so its result is never taken up;
* a round trip that completed between two polls is thrown away: the next poll sees
  the finished task and sends a new JoinGroup (for a leader, a whole new rebalance).

Here a join in progress counts as needing a rejoin, and a finished round trip is
always completed by the next poll (its result, or its error handled as kafka-python
handles it). Completion stays in ``poll()``, so rebalance listeners still run only
while the application is inside a consumer call, as kafka-python and Java promise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: The coordinator attributes this module reads or replaces (checked before installing).
NEEDS = (
    "need_rejoin", "rejoining", "rejoin_needed", "_join_task", "_manager", "_generation",
    "_lock", "state", "config", "ensure_coordinator_ready_async", "_on_join_prepare_async",
    "_do_join_and_sync_async", "_on_join_complete_async", "_enable_heartbeat",
    "_disable_heartbeat", "join_group_async",
)

#: A prepare step (the pre-rebalance auto-commit, revocation listeners) gets at least this
#: long even from a poll(timeout_ms=0): kafka-python would fail the commit after 0 ms.
PREPARE_FLOOR_MS = 5_000


def _left_ms(deadline: float | None) -> int | None:
    if deadline is None:
        return None
    return max(0, int((deadline - time.monotonic()) * 1000))


def lost_mid_join(coordinator: Any) -> bool:
    """True if a cooperative member still holds partitions although its generation is gone.

    A cooperative member keeps its partitions (and, with this runtime, reads them) while
    it rejoins; once the broker has reset its generation they may already be someone
    else's. Eager members gave them all up in the prepare step already.
    """
    from kafka.coordinator.assignors.abstract import RebalanceProtocol

    return bool(coordinator._rebalance_protocol == RebalanceProtocol.COOPERATIVE
                and coordinator._generation.is_lost()
                and coordinator._subscription.assigned_partitions())


def install_join_fix(coordinator: Any) -> None:
    """Replace ``need_rejoin`` and ``join_group_async`` on this coordinator instance."""
    from kafka import errors as Errors
    from kafka.structs import MemberState

    original_need_rejoin: Callable[[], bool] = coordinator.need_rejoin

    def need_rejoin() -> bool:
        # a join already under way must be driven to its end by the next polls
        return bool(original_need_rejoin() or coordinator.rejoining
                    or coordinator._join_task is not None)

    retry_now = (Errors.UnknownMemberIdError, Errors.RebalanceInProgressError,
                 Errors.IllegalGenerationError, Errors.MemberIdRequiredError)

    async def join_group_async(timeout_ms: int | None = None) -> bool:
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        while coordinator.need_rejoin():
            if not await coordinator.ensure_coordinator_ready_async(timeout_ms=_left_ms(deadline)):
                return False
            task = coordinator._join_task
            if task is None:
                if not coordinator.rejoining:
                    left = _left_ms(deadline)
                    generation = coordinator._generation
                    await coordinator._on_join_prepare_async(
                        generation.generation_id, generation.member_id,
                        timeout_ms=None if left is None else max(left, PREPARE_FLOOR_MS))
                    coordinator.rejoining = True
                    coordinator._disable_heartbeat()  # after the listeners, as kafka-python
                task = coordinator._join_task = coordinator._manager.call_soon(
                    coordinator._do_join_and_sync_async)
            try:
                assignment = await coordinator._manager.wait_for(task, _left_ms(deadline))
            except Errors.KafkaTimeoutError:
                if not task.is_done:
                    return False  # still in flight: the next poll takes it up, never drops it
                coordinator._join_task = None  # the round trip itself timed out: retry
                continue
            except retry_now:
                coordinator._join_task = None  # kafka-python reset what it had to; go again
                if lost_mid_join(coordinator):
                    # expelled while rejoining: the partitions are lost, not kept (the
                    # prepare step calls on_partitions_lost and clears them) before the
                    # member joins again as a new member
                    coordinator.rejoining = False
                continue
            except Errors.RetriableError:
                coordinator._join_task = None
                left = _left_ms(deadline)
                if left == 0:
                    return False
                backoff_ms = coordinator.config["retry_backoff_ms"]
                await coordinator._manager._net.sleep(
                    (backoff_ms if left is None else min(backoff_ms, left)) / 1000)
                continue
            except Errors.KafkaError:
                coordinator._join_task = None
                raise
            coordinator._join_task = None
            with coordinator._lock:
                coordinator.rejoining = False
                coordinator.rejoin_needed = False
                coordinator.state = MemberState.STABLE
                coordinator._enable_heartbeat()
            generation = coordinator._generation
            await coordinator._on_join_complete_async(
                generation.generation_id, generation.member_id, generation.protocol, assignment)
            return True
        return True

    coordinator.need_rejoin = need_rejoin
    coordinator.join_group_async = join_group_async
