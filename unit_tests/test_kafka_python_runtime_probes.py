"""The probes of docs/upstream.md sections 3 and 7: they find the defect in the installed
kafka-python (the workaround stays on) and, against a kafka-python faked to have its own fix,
turn that part of the runtime off with one INFO line (no broker: nothing is sent)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kafka import errors as Errors
from kafka.coordinator.base import BaseCoordinator
from kafka.coordinator.consumer import ConsumerCoordinator

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors.kafka_python.runtime import probes
from kafka_assignors.kafka_python.runtime.cooperative import REBALANCE_POLL_S, KeepReadingMixin
from kafka_assignors.kafka_python.runtime.join import JoinFixMixin

from .test_kafka_python_runtime_contract import _fenced_heartbeat
from .test_kafka_python_runtime_join import _close, _consumer

KEEP_READING = "keep-reading-during-rebalance"
FENCED = "fenced-member-stops"


@pytest.fixture(autouse=True)
def _fresh_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probes, "_verdicts", {})


def _run(coroutine: Any) -> Any:
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the coroutine waited")


def _steps_aside(caplog: pytest.LogCaptureFixture, key: str, section: str) -> None:
    with caplog.at_level(logging.INFO, logger="kafka_assignors"):
        assert probes.workaround_needed(key) is False
        assert probes.workaround_needed(key) is False
    lines = [r for r in caplog.records
             if "steps aside" in r.getMessage() and f"section {section}" in r.getMessage()]
    assert len(lines) == 1


# --- section 3: no records while a cooperative rebalance is under way -------------------

def test_this_kafka_python_returns_no_records_during_a_rebalance() -> None:
    assert probes.no_records_during_a_rebalance() is True
    assert probes.workaround_needed(KEEP_READING) is True


def _fetching_during_the_join(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-python with its own fix: the coordinator's poll advances the join without
    waiting for it and lets the consumer fetch (docs/upstream.md#3's patch, in effect)."""
    original = ConsumerCoordinator.poll

    def poll(self: Any, timeout_ms: Any = None, *args: Any, **kwargs: Any) -> bool:
        original(self, 0, *args, **kwargs)
        return True

    monkeypatch.setattr(ConsumerCoordinator, "poll", poll)


def test_a_kafka_python_that_fetches_during_the_join_turns_keep_reading_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    _fetching_during_the_join(monkeypatch)
    assert probes.no_records_during_a_rebalance() is False
    _steps_aside(caplog, KEEP_READING, "3")


def test_the_probe_without_a_fetch_even_once_joined_is_inconclusive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stand-ins that no longer fit kafka-python (it never fetches) keep the workaround."""
    monkeypatch.setattr(ConsumerCoordinator, "poll", lambda self, *a, **k: False)
    assert probes.workaround_needed(KEEP_READING) is True


@pytest.mark.parametrize("needed", [True, False])
def test_keep_reading_steps_aside_where_kafka_python_fetches_itself(
    monkeypatch: pytest.MonkeyPatch, needed: bool,
) -> None:
    """With the verdict 'fixed', a poll during a rebalance gives the join its own time and
    kafka-python's answer, and the fetch wait is kafka-python's; otherwise the join gets
    0 ms, the poll goes on to fetch, and the fetch wait is short."""
    consumer = _consumer(CooperativeBalancedStickyAssignor)
    monkeypatch.setitem(probes._verdicts, KEEP_READING, needed)
    monkeypatch.setattr(KeepReadingMixin, "_keeps_reading", lambda self: True)
    given: list[Any] = []

    async def join(self: Any, timeout_ms: Any = None, *args: Any, **kwargs: Any) -> bool:
        given.append(timeout_ms)
        return False  # not joined yet

    monkeypatch.setattr(JoinFixMixin, "join_group_async", join)
    try:
        coordinator = consumer._coordinator
        coordinator._kafka_assignors_keep_reading.polling = 800.0  # inside poll(800)
        assert _run(coordinator.join_group_async(800.0)) is needed
        assert given == [0 if needed else 800.0]
        assert (coordinator.time_to_next_poll() == REBALANCE_POLL_S) is needed
    finally:
        coordinator._kafka_assignors_keep_reading.polling = None
        monkeypatch.undo()
        _close(consumer)


# --- section 7: a fenced static member polls on ----------------------------------------

def test_this_kafka_python_polls_on_after_the_fence() -> None:
    assert probes.fenced_member_polls_on() is True
    assert probes.workaround_needed(FENCED) is True


def _keeping_the_fence(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-python with its own fix: the heartbeat step keeps the fencing error, and
    poll() raises it (here through the flag a fenced commit_async already sets)."""

    async def do_heartbeat(self: Any) -> None:
        try:
            await self._send_heartbeat_request()
        except Errors.FencedInstanceIdError:
            self._disable_heartbeat()
            self._async_commit_fenced = True

    monkeypatch.setattr(BaseCoordinator, "_do_heartbeat", do_heartbeat)


def test_a_kafka_python_that_raises_after_the_fence_turns_the_fenced_stop_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    _keeping_the_fence(monkeypatch)
    assert probes.fenced_member_polls_on() is False
    _steps_aside(caplog, FENCED, "7")


def test_the_fenced_stop_steps_aside_for_kafka_pythons_own_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where kafka-python raises after the fence itself, poll() raises its error (its
    message), and the runtime keeps nothing of its own."""
    _keeping_the_fence(monkeypatch)
    consumer = _consumer(BalancedStickyAssignor, group_instance_id="static-1")
    try:
        assert probes.workaround_needed(FENCED) is False
        _fenced_heartbeat(consumer)
        assert consumer._coordinator._kafka_assignors_fenced is None
        with pytest.raises(Errors.FencedInstanceIdError, match="Got fenced exception"):
            consumer.poll(timeout_ms=0)
    finally:
        _close(consumer)


def test_the_probes_log_nothing_of_kafka_pythons_on_the_users_loggers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """kafka-python's own lines about the bare probe objects ("fenced", "joined group") are
    dropped while the probes run."""
    with caplog.at_level(logging.DEBUG):
        probes.verdicts()
    assert [r.getMessage() for r in caplog.records if r.name.startswith("kafka.")] == []
