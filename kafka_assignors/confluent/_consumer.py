"""``BridgedConsumer``: a confluent-kafka ``Consumer`` whose group is run by a kafka-python client.

librdkafka has no hook for a client-side assignor, so the group membership
(JoinGroup/SyncGroup/heartbeats, our assignor on the leader, offset commits
with the member's generation) is done by a kafka-python ``KafkaConsumer`` that
never fetches, while librdkafka fetches the partitions it is told to.  A small
membership thread keeps the kafka-python client polling; rebalance steps (and
the user's rebalance callbacks) run on the application's thread inside
``poll()``/``consume()``, as with confluent-kafka.
"""

from __future__ import annotations

import collections
import logging
import math
import re
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException
from kafka import errors as kp_errors
from kafka.coordinator.assignors.abstract import RebalanceProtocol

from ..kafka_python.consumer import (  # kafka-python with the runtime (docs/runtime.md)
    KafkaConsumer,
    RuntimeUnavailableError,
)
from ..metrics import GroupMetrics, attach
from ._commits import OffsetCommits
from ._config import BridgeConfig, membership_options, translate_config
from ._errors import (
    as_kafka_exception,
    construction_error,
    max_poll_exceeded,
    protocol_refusal,
    state_error,
)
from ._events import error_event, weakly
from ._group_metadata import of_member
from ._membership import PATTERN_POLL_MS, POLL_MS, MembershipThread
from ._metrics import bridge_metrics
from ._offsets import Offsets, Progress
from ._protocol_choice import Consumer, given_config
from ._rebalance import Callback, OwnCalls, Rebalancer
from ._runtime import guard_consumed_offsets, membership_metrics
from ._statistics import member_statistics
from ._strategies import rebalance_protocol, resolve_strategies

log = logging.getLogger("kafka_assignors.confluent")

_Base: Any = confluent_kafka.Consumer
_raw_poll = _Base.poll
_raw_consume = _Base.consume
_monotonic = time.monotonic

#: How often poll()/consume() run the service (steps, commit results, auto-commits) while
#: they wait; while messages flow, at least every 0.5 s (the membership thread's tick).
SERVICE_TICK_S = 0.05
#: Upper bound for close() and unsubscribe() to hand partitions back.
CLOSE_TIMEOUT_S = 30.0
#: Defaults of librdkafka (and kafka-python) for keys the bridge needs to know.
DEFAULT_MAX_POLL_INTERVAL_MS = 300_000


class BridgedConsumer(OffsetCommits, Consumer):
    """A confluent-kafka ``Consumer`` assigned by kafka-assignors' strategies.

    Takes the same configuration dict as ``confluent_kafka.Consumer`` plus
    ``partition.assignment.strategy`` naming our assignors (wire names or
    instances).  See ``docs/confluent.md`` for what differs.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        settings = translate_config(given_config(config, kwargs))
        self._settings: BridgeConfig = settings
        self._assignors = resolve_strategies(settings.strategy, client_rack=settings.client_rack)
        protocol = rebalance_protocol(self._assignors)
        self._closed = False
        self._subscribed = False
        #: unsubscribe() was called: the next poll()/consume()/close() (or subscribe()) hands
        #: the partitions back and then leaves, as librdkafka serves the revoke from there
        self._leaving = False
        #: the group has joined once: its rebalance protocol is known (as librdkafka's)
        self._joined = False
        #: a callback's error from inside subscribe()/unsubscribe()/close(), raised later
        self._deferred: BaseException | None = None
        #: a fatal error (a fenced static member): raised by every later commit
        self._fatal: Any = None
        #: manual assignment (assign() without subscribe()): librdkafka's own, no group
        self._manual = False
        self._manual_committed: dict[tuple[str, int], int] = {}
        self._manual_stored: dict[tuple[str, int], Any] = {}
        self._next_service = 0.0
        self._fast = False
        self._next_auto_commit = math.inf
        self._commit_results: collections.deque[tuple[Offsets, Any]] = collections.deque()
        librdkafka_conf = dict(settings.confluent)
        stats_cb = librdkafka_conf.get("stats_cb")
        if callable(stats_cb):  # the group as the member sees it (librdkafka is not it)
            librdkafka_conf["stats_cb"] = member_statistics(weakly(self._member_figures),
                                                            stats_cb)
        super().__init__(librdkafka_conf)
        raw = OwnCalls(self, _Base)
        self._progress = Progress(raw.position, auto_store=settings.auto_offset_store)
        options = membership_options(settings.membership)
        max_poll_s = options.get("max_poll_interval_ms", DEFAULT_MAX_POLL_INTERVAL_MS) / 1000
        self._max_poll_s = max_poll_s
        client: Any = None
        try:
            try:
                client = KafkaConsumer(
                    partition_assignment_strategy=self._assignors,
                    enable_auto_commit=False,
                    max_poll_records=1,
                    # the kafka-python integration records the group's rebalances in this
                    # client's registry; the bridge forwards them into its own (._metrics)
                    metrics_enabled=True,
                    **options,
                )
            except (kp_errors.KafkaError, RuntimeUnavailableError) as exc:
                # never kafka-python's exception types
                raise construction_error(exc) from exc
            events = membership_metrics(client)
            guard_consumed_offsets(client)
            self._metrics = bridge_metrics(client, str(options["client_id"]), source=events)
            self._membership = MembershipThread(
                client,
                max_poll_interval_s=max_poll_s,
                on_commit_done=weakly(self._commit_done),
                on_tick=weakly(self._slow_down),
                name=str(options["client_id"]),
                ticket=self._progress.ticket,
                fresh=self._progress.fresh,
            )
        except BaseException:
            if client is not None:
                client.close(autocommit=False)
            _Base.close(self)
            raise
        # the membership threads hold this consumer only weakly: dropped without close(), it
        # is collected as confluent-kafka's is, and its membership client then leaves
        self._finalizer = weakref.finalize(self, self._membership.abandon)
        self._finalizer.atexit = False  # at exit, nothing changes
        self._rebalancer = Rebalancer(
            consumer=weakref.ref(self),
            librdkafka=raw,
            membership=client,
            progress=self._progress,
            commit=self._membership.commit,
            flush=self._membership.drain_commits,
            new_waiter=self._membership.new_waiter,
            cooperative=protocol == RebalanceProtocol.COOPERATIVE,
            auto_commit=settings.auto_commit,
            step_timeout_s=max_poll_s,
            on_post=weakly(self._slow_down),
            metrics=self._metrics,
        )
        attach(self, self._metrics)  # where metrics_of() and the exporters look
        self._steps = self._rebalancer.steps  # the same deque, checked by the slow path

    # --- group ------------------------------------------------------------------------------

    @property
    def assignors(self) -> tuple[Any, ...]:
        """The assignor instances in preference order (``last_report`` on the leader's)."""
        return tuple(self._assignors)

    @property
    def cooperative(self) -> bool:
        """True when the group runs the cooperative (incremental) rebalance protocol."""
        return self._rebalancer.cooperative

    def _subscribe(self, topics: Sequence[str], callbacks: dict[str, Callback]) -> None:
        names = [str(t) for t in topics]
        patterns = [t for t in names if t.startswith("^")]
        if not names:
            raise KafkaException(KafkaError(KafkaError._INVALID_ARG,
                                            "subscribe() needs at least one topic"))
        if patterns and len(patterns) != len(names):
            raise KafkaException(KafkaError(
                KafkaError._INVALID_ARG,
                "subscribe() takes topic names, or only regexes (starting with ^), not both: "
                "the membership client subscribes to a list or to one pattern",
            ))
        if self._leaving:  # unsubscribe() not yet served by a poll(): hand back here
            try:
                self._leave()
            except Exception as exc:  # raised by the next poll(), as a step run here
                log.error("handing partitions back failed: %r", exc)
                self._deferred = self._deferred or exc
        if self._manual:  # from manual assignment to the group's
            self._manual_auto_commit(final=True)
            _Base.unassign(self)
            self._manual = False
        # kafka-python's consumer is not made for concurrent calls: change it while stopped
        self._membership.stop(_monotonic() + CLOSE_TIMEOUT_S, self._serve_quietly)
        self._rebalancer.on_assign = callbacks.get("on_assign")
        self._rebalancer.on_revoke = callbacks.get("on_revoke")
        self._rebalancer.on_lost = callbacks.get("on_lost")
        client = self._membership.client
        self._membership.join_poll_ms = PATTERN_POLL_MS if patterns else POLL_MS
        try:
            if patterns:
                pattern = "|".join(f"(?:{p})" for p in patterns)
                client.subscribe(pattern=pattern, listener=self._rebalancer)
            else:
                client.subscribe(topics=names, listener=self._rebalancer)
        except (kp_errors.KafkaError, re.error) as exc:  # never kafka-python's exception types
            raise KafkaException(KafkaError(
                KafkaError._INVALID_ARG, f"subscribe({names}): {type(exc).__name__}: {exc}"
            )) from exc
        self._subscribed = True
        self._next_service = 0.0
        self._next_auto_commit = _monotonic() + self._settings.auto_commit_interval_s
        self._membership.start()

    def unsubscribe(self) -> None:
        """Leave the group; as confluent-kafka's, it returns at once and runs no callback:
        the next poll()/consume() (or close()) hands every partition back (on_revoke, the
        final auto-commit) and only then leaves, so the next owner starts after the commit."""
        self._check_usable("unsubscribe")
        if self._subscribed:
            self._leaving = True
            self._next_service = 0.0  # the next poll() serves at once, before any message
            self._fast = False

    def _leave(self) -> None:
        """What unsubscribe() asked for: hand back, then the membership client leaves.

        Raises a callback's error (or the leave's) after the member has left, as
        confluent-kafka raises it from the poll() that served the revoke.
        """
        self._leaving = False
        failure: BaseException | None = None
        try:
            self._hand_back(_monotonic() + CLOSE_TIMEOUT_S)
        except Exception as exc:
            failure = exc
        self._fast = False
        try:
            self._membership.client.unsubscribe()
        except kp_errors.KafkaError as exc:
            failure = failure or as_kafka_exception(exc)
        finally:
            self._subscribed = False
        if failure is not None:
            raise failure

    def _hand_back(self, deadline: float) -> None:
        """Finish a rebalance in progress, stop the membership thread, release everything."""
        settled = True
        if self._progress.assigned():  # a commit needs a stable group (kafka-python refuses)
            settled = self._membership.wait_stable(deadline, self._serve_quietly)
        self._membership.stop(deadline, self._serve_quietly)
        self._serve_quietly()
        self._membership.drain_commits()
        if not settled:
            log.warning("handing partitions back during a rebalance: their progress cannot be "
                        "committed and may be consumed again")
        self._rebalancer.release_all(lost=not (settled and self._membership.in_group()))

    def metrics(self) -> dict[str, dict[str, float]]:
        """Rebalance and assignment metrics: ``{group: {name: value}}``.

        The shape of kafka-python's ``KafkaConsumer.metrics()``: Java's names in
        ``consumer-coordinator-metrics`` and ours in ``kafka-assignors-assignment-metrics``
        (see ``docs/confluent.md``).  librdkafka's own statistics stay in ``stats_cb``.
        """
        return self._metrics.values()

    @property
    def group_metrics(self) -> GroupMetrics:
        """The :class:`~kafka_assignors.metrics.GroupMetrics` behind :meth:`metrics`."""
        return self._metrics

    def _check_open(self) -> None:
        """confluent-kafka's "Consumer closed", raised only once close() is over: the rebalance
        callbacks close() runs (on_revoke handing everything back) may still ask who the member
        is, as with confluent-kafka, whose handle lives until they return (an exactly-once
        on_revoke passes consumer_group_metadata() to send_offsets_to_transaction())."""
        if self._closed and not self._in_rebalance_callback():
            raise RuntimeError("Consumer closed")

    def memberid(self) -> str | None:
        """This member's id in the group (None before the first join)."""
        self._check_open()
        member_id = self._membership.client.group_metadata().member_id
        return str(member_id) if member_id else None

    def group_metadata(self) -> Any:
        """kafka-python's snapshot of the membership: generation_id, member_id, state."""
        self._check_open()
        return self._membership.client.group_metadata()

    def consumer_group_metadata(self) -> Any:
        """As confluent-kafka's, for ``send_offsets_to_transaction()``: while subscribed, the
        identity of the member (the membership client); without, librdkafka's own."""
        self._check_open()
        if not self._subscribed:
            return _Base.consumer_group_metadata(self)
        return of_member(self._membership.client.group_metadata(),
                         str(self._settings.membership["group_id"]))

    def set_sasl_credentials(self, username: str, password: str) -> None:
        raise KafkaException(KafkaError(
            KafkaError._NOT_IMPLEMENTED,
            "set_sasl_credentials() cannot update the membership client; recreate the consumer",
        ))

    # --- consuming ------------------------------------------------------------------------------

    def poll(self, timeout: float = -1) -> Any:
        """One message or event (or None on timeout); also runs rebalance steps."""
        if timeout is None:  # as confluent-kafka (a number; -1: wait forever)
            raise TypeError("must be real number, not NoneType")
        # fast path while librdkafka has messages ready: no clock, no checks.  _fast is
        # cleared by a posted rebalance step and by the membership thread (every <= 0.5 s)
        if self._fast:
            msg = _raw_poll(self, 0)
            if msg is not None:
                return msg
        return self._poll_waiting(timeout)

    def _poll_waiting(self, timeout: float) -> Any:
        now = _monotonic()
        if now >= self._next_service or self._steps:
            event = self._service(now)
            if event is not None:
                return event
        self._fast = True
        deadline = math.inf if timeout < 0 else now + timeout
        while True:
            msg = _raw_poll(self, min(deadline, self._next_service) - now)
            if msg is not None:
                return msg
            now = _monotonic()
            if now >= deadline:
                return None
            if now >= self._next_service or self._steps:
                event = self._service(now)
                if event is not None:
                    return event

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        """Up to ``num_messages`` messages, waiting at most ``timeout`` seconds (-1: forever)."""
        if timeout is None or num_messages is None:  # as confluent-kafka
            raise TypeError("must be real number, not NoneType")
        now = _monotonic()
        if now >= self._next_service or self._steps:
            event = self._service(now)
            if event is not None:
                return [event]
        deadline = math.inf if timeout < 0 else now + timeout
        out: list[Any] = []
        while True:
            wait = min(deadline, self._next_service) - now
            out.extend(_raw_consume(self, num_messages - len(out), max(wait, 0.0)))
            if len(out) >= num_messages:
                return out
            now = _monotonic()
            if now >= deadline:
                return out
            if now >= self._next_service or self._steps:
                if out:  # never run a rebalance step while holding undelivered messages
                    return out
                event = self._service(now)
                if event is not None:
                    return [event]

    def _service(self, now: float) -> Any:
        """Rebalance steps, membership errors, auto-commit and commit callbacks.

        Returns an error event for the application (a message whose ``error()`` is set),
        as librdkafka reports group errors, or None.
        """
        if self._closed:
            raise RuntimeError("Consumer closed")
        if self._rebalancer.in_callback():
            raise state_error("poll()/consume() cannot be called from a rebalance callback")
        self._fast = False  # a poll() from a callback must come back here (and fail)
        self._next_service = now + SERVICE_TICK_S
        self._raise_deferred()  # as confluent-kafka, which runs those callbacks in poll()
        self._membership.touch(now)
        if self._leaving:  # unsubscribe()'s hand-back, before any message
            self._leave()
            self._raise_deferred()  # a step's callback error served meanwhile
        stalled = self._membership.take_stall()
        if stalled is not None:
            # as librdkafka: the error first, once; on_lost (and the rejoin) from the next
            # poll(), which serves at once, before any message
            self._next_service = 0.0
            return error_event(None, max_poll_exceeded(self._max_poll_s, now - stalled))
        if self._steps:
            self._rebalancer.serve()
        if self._progress.assigned() and not self._membership.in_group():
            self._rebalancer.release_lost()  # expelled or left: lost before any more message
        self._deliver_commit_results()
        if self._manual:
            self._manual_auto_commit(final=False, now=now)
        elif self._settings.auto_commit and now >= self._next_auto_commit:
            self._next_auto_commit = now + self._settings.auto_commit_interval_s
            pending = self._progress.uncommitted(self._progress.consumed())
            if pending:
                self._membership.commit_async(pending)
        error = self._membership.take_error()
        if error is not None:
            kafka_error = as_kafka_exception(error).args[0]
            if kafka_error.fatal():
                self._fatal = kafka_error
            return error_event(error, kafka_error)
        return None

    def _slow_down(self) -> None:
        """From other threads: the next poll() takes the slow path (service, steps)."""
        self._fast = False

    def _serve_quietly(self) -> None:
        """Run rebalance steps inside subscribe()/unsubscribe()/close(): the first error of
        a callback is kept, and raised by close() or else the next poll()/consume()."""
        try:
            self._rebalancer.serve()
        except Exception as exc:
            log.error("rebalance callback failed: %r", exc)
            if self._deferred is None:
                self._deferred = exc

    def _raise_deferred(self) -> None:
        error, self._deferred = self._deferred, None
        if error is not None:
            raise error

    def _member_figures(self) -> tuple[int, int, bool]:
        """For librdkafka's statistics: rebalances, partitions held, in the group."""
        return (self._rebalancer.rebalances, len(self._progress.assigned()),
                self._subscribed and self._membership.in_group())

    # --- hooks of CallbackRules ------------------------------------------------------------

    def _in_rebalance_callback(self) -> bool:
        return self._rebalancer.in_callback()

    def _refused(self, name: str) -> Any:
        """As librdkafka: once the group has told this member its rebalance protocol (the
        first join), calls of the other protocol are refused, in or outside a callback and
        even after unsubscribe() (librdkafka keeps the group's assignor)."""
        if not self._joined:
            self._joined = self._rebalancer.joined or self._membership.in_group()
        return protocol_refusal(name, self._rebalancer.cooperative) if self._joined else None

    def _user_moved(self) -> None:
        self._rebalancer.user_moved()

    # --- lifecycle ---------------------------------------------------------------------------

    def _close_clients(self) -> None:
        """Hand partitions back (on_revoke, commit), leave the group, close both clients."""
        self._next_service = 0.0  # every later poll() reports the consumer closed
        self._fast = False
        self._finalizer.detach()
        deadline = _monotonic() + CLOSE_TIMEOUT_S
        failure: BaseException | None = None
        try:
            if self._subscribed:
                self._hand_back(deadline)
            elif self._manual:
                self._manual_auto_commit(final=True)
        except Exception as exc:  # still leave the group and close both clients
            failure = exc
        self._rebalancer.ignoring = True
        try:
            remaining_ms = max(int((deadline - _monotonic()) * 1000), 1000)
            self._membership.client.close(autocommit=False, timeout_ms=remaining_ms)
        except Exception as exc:
            failure = failure or exc
        finally:
            _Base.close(self)
            self._deliver_commit_results()
        failure = failure or self._deferred  # a callback's, from a step served meanwhile
        self._deferred = None
        if isinstance(failure, kp_errors.KafkaError):
            raise as_kafka_exception(failure) from failure
        if failure is not None:
            raise failure
