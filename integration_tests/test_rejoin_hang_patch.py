"""kafka-python 3.0.x's join hang on a real broker, and kafka_assignors.patch_rejoin_hang.

A leader whose assignment takes 3 s and members polling every 200 ms: after a
subscription change, ``need_rejoin()`` turns False while the JoinGroup/SyncGroup
round trip is still in flight, later polls stop driving it, heartbeats stay off
and the broker expels the member, which stays REBALANCING (README, Known limits).
With the patch the group settles; without it (the control, which shows the
scenario really hits the bug) it does not.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_assignors.embedded import GroupNotStableError, GroupRunner

SLOW = "integration_tests.new_assignor_configs:SLOW_BALANCED"
MEMBER = {"poll_timeout_ms": 200, "session_timeout_ms": 6_000, "heartbeat_interval_ms": 500}


def _change_subscriptions(make_topic: Callable[..., str], make_group: Callable[..., GroupRunner],
                          patched: bool) -> tuple[GroupRunner, dict[str, int]]:
    a, b = make_topic(4), make_topic(4)
    group = make_group([a], [SLOW], members=2, fix_rejoin=patched, **MEMBER)
    group.wait_stable(timeout=60)
    for index in (0, 1):
        group.resubscribe(index, [a, b])
    return group, {a: 4, b: 4}


def test_with_the_patch_a_subscription_change_settles(
    make_topic: Callable[..., str], make_group: Callable[..., GroupRunner]
) -> None:
    group, expected = _change_subscriptions(make_topic, make_group, patched=True)
    state = group.wait_stable(timeout=60, expected=expected, settle=8.0)
    assert sorted(len(v) for v in state.values()) == [4, 4]


#: The hang is a race (a join result arriving between two polls): a run may miss it.
CONTROL_ATTEMPTS = 3


def test_without_the_patch_kafka_python_leaves_a_member_rebalancing(
    make_topic: Callable[..., str], make_group: Callable[..., GroupRunner]
) -> None:
    """Without the patch, at least one of a few fresh groups stays REBALANCING after the
    subscription change. If this starts failing, kafka-python fixed the hang: patch_rejoin_hang
    can go."""
    settled = []
    for attempt in range(1, CONTROL_ATTEMPTS + 1):
        group, expected = _change_subscriptions(make_topic, make_group, patched=False)
        try:
            group.wait_stable(timeout=30, expected=expected, settle=8.0)
        except GroupNotStableError as exc:
            assert "REBALANCING" in str(exc), exc
            print(f"attempt {attempt}: the unpatched group hung as expected")
            return
        settled.append(group.group_id)
        group.close()
    pytest.fail(f"no hang in {CONTROL_ATTEMPTS} unpatched groups ({settled}): has kafka-python "
                "fixed the join hang? Then patch_rejoin_hang is no longer needed.")
