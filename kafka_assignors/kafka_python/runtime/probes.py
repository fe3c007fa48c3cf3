"""Does the installed kafka-python still have the defect? One behavioural probe per workaround.

Each probe runs kafka-python's own method, unchanged, on a bare ``ConsumerCoordinator``
(made without ``__init__``: no thread, no socket) holding only what that method reads, and
watches what it does. Where kafka-python is found to behave as the workaround makes it
behave (its own fix), :func:`workaround_needed` says so and the override steps aside (calls
kafka-python's method and nothing else for that part), with one INFO line per process. A
probe that cannot run to a verdict (kafka-python reads something the bare object lacks: its
code changed) keeps the workaround on, logged once at DEBUG: the manifest check
(:mod:`.manifest`) is what refuses a release the runtime does not know.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

log = logging.getLogger("kafka_assignors")


class _Stop(Exception):
    """Raised inside a probe once its verdict is known."""


@dataclass(frozen=True)
class Workaround:
    """One upstream defect the runtime works around, and how to tell it is still there."""

    key: str
    defect: str  # what kafka-python does (for the log line)
    section: str  # where docs/upstream.md describes it
    probe: Callable[[], bool]  # True while kafka-python still has the defect


def _bare() -> Any:
    from kafka.coordinator.base import Generation
    from kafka.coordinator.consumer import ConsumerCoordinator

    bare = ConsumerCoordinator.__new__(ConsumerCoordinator)
    bare.config = {"group_id": "kafka-assignors-probe", "group_instance_id": None,
                   "api_version": (3, 9), "retry_backoff_ms": 0}
    bare._lock = threading.RLock()
    bare._sensors = None
    bare._generation = Generation(1, "probe-member", "probe")
    return bare


def _run(coroutine: Any) -> Any:
    """Drive a coroutine that never suspends (the probes' stand-ins return at once)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise _Stop("suspended")  # inconclusive: it waited for something real


def join_under_way_is_forgotten() -> bool:
    """kafka-python's ``need_rejoin()`` is False while a JoinGroup is out (docs/upstream.md#1)."""
    from kafka.future import Future

    bare = _bare()
    bare.rejoin_needed, bare.rejoining, bare._join_task = False, True, Future()
    bare._subscription = SimpleNamespace(partitions_auto_assigned=lambda: True,
                                         subscription={"t"})
    bare._auto_assign_all_partitions = lambda: False
    bare._assignment_snapshot = bare._metadata_snapshot = None
    bare._joined_subscription = {"t"}
    return not bare.need_rejoin()


def finished_join_is_dropped() -> bool:
    """kafka-python's ``join_group_async`` sends a new JoinGroup instead of taking up a round
    trip that finished between two polls (docs/upstream.md#1)."""
    from kafka.coordinator.base import MemberState
    from kafka.future import Future

    bare = _bare()
    asked = iter((True, False))
    bare.need_rejoin = lambda: next(asked, False)
    bare.rejoining, bare.state = True, MemberState.REBALANCING
    bare._join_task = Future().success(b"")
    sent: list[bool] = []

    def call_soon(*_args: Any) -> Any:
        sent.append(True)
        raise _Stop("a new JoinGroup")

    async def ready(*_args: Any, **_kwargs: Any) -> bool:
        return True

    async def wait_for(task: Any, *_args: Any) -> Any:
        return task.value

    async def nothing(*_args: Any, **_kwargs: Any) -> None:
        return None

    bare.ensure_coordinator_ready_async = ready
    bare._manager = SimpleNamespace(call_soon=call_soon, wait_for=wait_for)
    bare._enable_heartbeat = bare._disable_heartbeat = lambda: None
    bare._on_join_complete_async = bare._on_join_prepare_async = nothing
    try:
        _run(bare.join_group_async(0))
    except _Stop:
        if not sent:
            raise
    return bool(sent)


def heartbeats_wait_for_take_up() -> bool:
    """kafka-python leaves heartbeats off after a successful JoinGroup response until a poll
    takes the result up (docs/upstream.md#2)."""
    from kafka.coordinator.base import MemberState

    bare = _bare()
    bare.state = MemberState.REBALANCING
    bare._heartbeat_enabled = False
    enabled: list[bool] = []
    bare._enable_heartbeat = lambda: enabled.append(True)
    response = SimpleNamespace(error_code=0, protocol_type=None, generation_id=2,
                               member_id="probe-member", protocol_name="probe")
    bare._process_join_group_response(response, 0.0)
    return not (enabled or bare._heartbeat_enabled or bare.stable())


def rebalance_heartbeat_marks_coordinator_dead() -> bool:
    """kafka-python 3.0.0 to 3.0.2 mark the coordinator dead on a heartbeat answered
    REBALANCE_IN_PROGRESS (docs/upstream.md#5)."""
    from kafka import errors as Errors

    bare = _bare()
    failed: list[bool] = []
    bare.coordinator_unknown = lambda: False
    bare.coordinator_id = 0
    bare.request_rejoin = lambda: None
    bare._failed_request = lambda *_args: failed.append(True)

    async def send(*_args: Any, **_kwargs: Any) -> Any:
        return SimpleNamespace(error_code=Errors.RebalanceInProgressError.errno)

    bare._manager = SimpleNamespace(send=send)
    with contextlib.suppress(Errors.RebalanceInProgressError):
        _run(bare._send_heartbeat_request())
    return bool(failed)


def _polling_coordinator(*, joined: bool) -> Any:
    """A bare cooperative coordinator whose steps around kafka-python's own ``poll`` are
    stand-ins: the coordinator is known, the member subscribed, its join due and, unless
    ``joined``, not complete (``ensure_active_group`` answers False)."""
    import collections

    from kafka.coordinator.assignors.abstract import RebalanceProtocol
    from kafka.coordinator.base import MemberState

    bare = _bare()
    bare.completed_offset_commits = collections.deque()
    bare._async_commit_fenced = False
    bare._rebalance_protocol = RebalanceProtocol.COOPERATIVE
    bare.state, bare.rejoining, bare._join_task = MemberState.REBALANCING, True, None
    bare._subscription = SimpleNamespace(partitions_auto_assigned=lambda: True,
                                         subscribed_pattern=None, subscription={"t"})
    bare.need_rejoin = lambda: not joined
    bare.ensure_coordinator_ready = lambda *_args, **_kwargs: True
    bare.ensure_active_group = lambda *_args, **_kwargs: joined
    bare.poll_heartbeat = bare._maybe_auto_commit_offsets_async = lambda: None
    bare.time_to_next_poll = lambda: 0.0
    return bare


def no_records_during_a_rebalance() -> bool:
    """kafka-python's consumer returns before fetching while a cooperative rebalance of its
    member is under way (docs/upstream.md#3): its own ``KafkaConsumer._poll_once`` and
    ``ConsumerCoordinator.poll``, on bare objects, with a join that is not complete."""
    if not _fetches(joined=True):
        raise _Stop("no fetch even once joined")  # the stand-ins no longer fit: inconclusive
    return not _fetches(joined=False)


def _fetches(*, joined: bool) -> bool:
    """Whether kafka-python's ``_poll_once`` fetches (the join complete or not)."""
    from kafka import KafkaConsumer
    from kafka.util import Timer

    consumer = KafkaConsumer.__new__(KafkaConsumer)
    consumer.config = {"group_id": "kafka-assignors-probe", "retry_backoff_ms": 0}
    consumer._coordinator = _polling_coordinator(joined=joined)
    consumer._refresh_committed_offsets = lambda *_args, **_kwargs: None
    fetched: list[bool] = []

    def fetch_records(*_args: Any, **_kwargs: Any) -> tuple[dict[Any, Any], bool]:
        fetched.append(True)
        return {}, False

    def nothing(*_args: Any, **_kwargs: Any) -> None:
        return None

    consumer._fetcher = SimpleNamespace(
        fetch_records=fetch_records, reset_offsets_if_needed=nothing,
        maybe_validate_positions=nothing, validate_offsets_if_needed=nothing)
    consumer._poll_once(Timer(0), 1)
    return bool(fetched)


def fenced_member_polls_on() -> bool:
    """kafka-python's ``poll()`` goes on after a heartbeat was answered FENCED_INSTANCE_ID
    (docs/upstream.md#7): its own heartbeat step (``_do_heartbeat``) meets the error, then
    its own ``ConsumerCoordinator.poll`` runs; a kafka-python that keeps the error raises
    ``FencedInstanceIdError`` there, as the Java consumer does."""
    from kafka import errors as Errors
    from kafka.coordinator import base

    bare = _polling_coordinator(joined=True)
    bare.config["group_instance_id"] = "kafka-assignors-probe-instance"
    bare.state, bare.rejoining = base.MemberState.STABLE, False
    bare.heartbeat = SimpleNamespace(sent_heartbeat=lambda: None,
                                     received_heartbeat=lambda: None,
                                     fail_heartbeat=lambda: None)
    bare._disable_heartbeat = lambda: None

    async def fenced(*_args: Any, **_kwargs: Any) -> Any:
        raise Errors.FencedInstanceIdError("probe")

    bare._send_heartbeat_request = fenced
    _run(bare._do_heartbeat())
    try:
        bare.poll(timeout_ms=0)
    except Errors.FencedInstanceIdError:
        return False
    return True


WORKAROUNDS: dict[str, Workaround] = {w.key: w for w in (
    Workaround("drive-join-under-way", "need_rejoin() is False while a JoinGroup is out",
               "1", join_under_way_is_forgotten),
    Workaround("replay-finished-join", "a round trip finished between two polls is dropped",
               "1", finished_join_is_dropped),
    Workaround("heartbeat-after-join-response",
               "heartbeats stay off from the JoinGroup response until the next poll", "2",
               heartbeats_wait_for_take_up),
    Workaround("heartbeat-rebalance-keeps-coordinator",
               "a heartbeat answered REBALANCE_IN_PROGRESS marks the coordinator dead", "5",
               rebalance_heartbeat_marks_coordinator_dead),
    Workaround("keep-reading-during-rebalance",
               "no records are returned while a cooperative rebalance is under way", "3",
               no_records_during_a_rebalance),
    Workaround("fenced-member-stops",
               "a fenced static member's poll() goes on without raising", "7",
               fenced_member_polls_on),
)}

#: The loggers of the kafka-python modules whose code the probes run.
PROBED_LOGGERS = ("kafka.coordinator", "kafka.coordinator.heartbeat",
                  "kafka.coordinator.consumer", "kafka.consumer.group")


class _DropOwnRecords(logging.Filter):
    """Drops what kafka-python logs on the probing thread while a probe runs (its "joined
    group" or "fenced" lines are about the bare probe object, not the user's consumer)."""

    def __init__(self) -> None:
        super().__init__()
        self._thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != self._thread


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    quiet = _DropOwnRecords()
    loggers = [logging.getLogger(name) for name in PROBED_LOGGERS]
    for logger in loggers:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(quiet)


_verdicts: dict[str, bool] = {}
_verdict_lock = threading.Lock()


def workaround_needed(key: str) -> bool:
    """True while the installed kafka-python still has the defect ``key`` works around (probed
    once per process; an inconclusive probe keeps the workaround)."""
    found = _verdicts.get(key)
    if found is not None:
        return found
    workaround = WORKAROUNDS[key]
    with _verdict_lock:
        if key in _verdicts:
            return _verdicts[key]
        try:
            with _quiet():
                needed = bool(workaround.probe())
        except Exception as exc:  # kafka-python's code changed: keep the workaround
            log.debug("kafka-assignors runtime: the probe for %r was inconclusive (%r); the "
                      "workaround stays on", key, exc)
            needed = True
        if not needed:
            log.info("kafka-assignors runtime: this kafka-python no longer has the defect "
                     "'%s' (docs/upstream.md section %s): the runtime's workaround for it "
                     "steps aside", workaround.defect, workaround.section)
        _verdicts[key] = needed
    return needed


def verdicts() -> dict[str, bool]:
    """Every workaround's verdict on the installed kafka-python (True: still needed)."""
    return {key: workaround_needed(key) for key in WORKAROUNDS}


def forget() -> None:
    """Probe again at the next question (tests)."""
    with _verdict_lock:
        _verdicts.clear()
