"""The bridge's membership thread: a rejoin request ends its stable pause (no broker)."""

from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from kafka import errors as Errors
from kafka.coordinator.base import BaseCoordinator
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.structs import MemberState

from kafka_assignors.confluent import _membership
from kafka_assignors.confluent._membership import (
    STABLE_IDLE_S,
    MembershipThread,
    wake_on_rejoin,
)
from kafka_assignors.kafka_python.runtime.compose import features_of

#: the coordinator methods that mark a rejoin as needed (the runtime's rejoin notice)
REJOIN_HOOKS = ("request_rejoin", "reset_generation")


def bare_coordinator() -> Any:
    """kafka-python's ConsumerCoordinator with only the fields the rejoin marks touch (its
    __init__ would connect): the class the bridge's membership client really has."""
    coordinator: Any = object.__new__(ConsumerCoordinator)
    coordinator.rejoin_needed = False
    coordinator.state = MemberState.STABLE
    coordinator._lock = threading.RLock()
    coordinator.config = {"group_id": "g", "api_version": (4, 0)}
    coordinator._sensors = None
    # what its need_rejoin() reads: a subscribed group member, nothing changed since its join
    coordinator._subscription = SimpleNamespace(partitions_auto_assigned=lambda: True,
                                                subscription=None)
    coordinator._assignment_snapshot = coordinator._metadata_snapshot = None
    coordinator._joined_subscription = None
    return coordinator


class FakeClient:
    """kafka-python's KafkaConsumer as the membership thread sees it; poll() rejoins at once."""

    def __init__(self) -> None:
        self._net = SimpleNamespace(call_soon_threadsafe=lambda *a: None)
        self._coordinator = bare_coordinator()
        self.polls: list[float] = []
        self.polled = threading.Event()

    def group_metadata(self) -> Any:
        return SimpleNamespace(state=self._coordinator.state)

    def poll(self, timeout_ms: int = 0) -> dict[Any, Any]:
        self._coordinator.rejoin_needed = False
        self.polls.append(time.monotonic())
        self.polled.set()
        return {}


def test_kafka_python_heartbeat_handler_requests_the_rejoin_through_the_hook() -> None:
    """kafka-python still marks a REBALANCE_IN_PROGRESS heartbeat with request_rejoin()."""
    for name in (*REJOIN_HOOKS, "need_rejoin", "_handle_heartbeat_response"):
        assert callable(getattr(BaseCoordinator, name, None)), name
    coordinator = bare_coordinator()
    wake = threading.Event()
    assert wake_on_rejoin(coordinator, wake)
    response = SimpleNamespace(error_code=Errors.RebalanceInProgressError.errno)
    with pytest.raises(Errors.RebalanceInProgressError):
        coordinator._handle_heartbeat_response(response, time.monotonic())
    assert coordinator.rejoin_needed and wake.is_set()


def test_the_notice_is_a_class_of_the_runtime_and_every_mark_wakes() -> None:
    """The coordinator takes the runtime's class with the rejoin notice (no method of the
    instance is replaced); each of kafka-python's marks still sets its flag, then wakes."""
    coordinator = bare_coordinator()
    wake = threading.Event()
    assert wake_on_rejoin(coordinator, wake)
    assert features_of(coordinator) == {"rejoin_notice"}
    assert isinstance(coordinator, ConsumerCoordinator)
    assert "rejoin notice" in type(coordinator).__qualname__
    assert not set(REJOIN_HOOKS) & set(vars(coordinator))
    for name in REJOIN_HOOKS:
        wake.clear()
        coordinator.rejoin_needed = False
        getattr(coordinator, name)()
        assert coordinator.rejoin_needed and wake.is_set(), name
    assert wake_on_rejoin(coordinator, threading.Event())  # again: the same class
    assert features_of(coordinator) == {"rejoin_notice"}


def test_a_coordinator_without_the_hooks_is_left_alone_with_one_warning(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(_membership, "_warned_no_hook", False)
    bare = SimpleNamespace(need_rejoin=lambda: False)
    with caplog.at_level(logging.WARNING, logger="kafka_assignors.confluent"):
        assert not wake_on_rejoin(bare, threading.Event())
        assert not wake_on_rejoin(bare, threading.Event())
        assert not wake_on_rejoin(None, threading.Event())
    said = [r.getMessage() for r in caplog.records if "cannot tell" in r.getMessage()]
    assert len(said) == 1 and "ConsumerCoordinator.request_rejoin" in said[0], said
    assert said[0].endswith(f"a requested rejoin starts up to {STABLE_IDLE_S:.1f} s late")
    assert type(bare) is SimpleNamespace and not hasattr(bare, "request_rejoin")


def test_a_rejoin_request_ends_the_stable_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heartbeat thread's request is polled for at once, not STABLE_IDLE_S later."""
    client = FakeClient()
    thread = MembershipThread(client, max_poll_interval_s=60, on_commit_done=lambda o, e, r: None,
                              name="t")
    thread.start()
    try:
        assert client.polled.wait(5)
        time.sleep(0.1)  # the thread is in its stable pause now
        client.polled.clear()
        asked = time.monotonic()
        client._coordinator.request_rejoin()
        assert client.polled.wait(5)
        assert min(t for t in client.polls if t >= asked) - asked < STABLE_IDLE_S / 2
    finally:
        thread.stop(time.monotonic() + 5, lambda: None)
