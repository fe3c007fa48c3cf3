"""The kafka-python runtime: applied by kafka_assignors.kafka_python.KafkaConsumer, only there."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

from kafka_assignors import (
    BalancedStickyAssignor,
    CooperativeBalancedStickyAssignor,
    CooperativeLoadAwareAssignor,
    PinnedAssignor,
)
from kafka_assignors.kafka_python import KafkaConsumer as RuntimeConsumer
from kafka_assignors.kafka_python import runtime
from kafka_assignors.kafka_python.runtime import compose, cooperative, join, manifest

REPLACED_BY_JOIN_FIX = {"need_rejoin", "join_group_async", "_do_join_and_sync_async",
                        "_process_join_group_response", "stable", "request_rejoin",
                        "_on_join_prepare_async", "_on_join_complete_async",
                        "_handle_heartbeat_response"}
REPLACED_BY_COOPERATIVE = {"poll", "time_to_next_poll", "join_group_async",
                           "_on_join_complete_async", "generation_if_stable",
                           "_send_offset_commit_request", "_commit_offsets_sync_async",
                           "close", "_do_commit_offsets_async", "_on_join_prepare_async"}
REPLACED_BY_FENCING = {"_handle_heartbeat_response", "poll"}
#: the metrics' hooks (kafka_python_runtime.metrics), on every consumer with our assignors
REPLACED_BY_METRICS = {"_do_join_and_sync_async", "_invoke_rebalance_listener_async",
                       "_perform_assignment", "_on_join_prepare_async",
                       "_on_join_complete_async", "poll"}


def _consumer(strategy: list[Any], cls: Any = RuntimeConsumer) -> Any:
    """A real kafka-python consumer; no broker needed when api_version is given."""
    return cls(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
               partition_assignment_strategy=strategy)


def _replaced(consumer: Any) -> set[str]:
    """The kafka-python methods the coordinator's class overrides (none on kafka-python's)."""
    from kafka.coordinator.consumer import ConsumerCoordinator

    coordinator = consumer._coordinator
    assert not set(vars(coordinator)) & set(dir(ConsumerCoordinator)), "instance shadows"
    overrides = {name for cls in type(coordinator).__mro__
                 if isinstance(cls, type) and issubclass(cls, compose.RuntimeMixin)
                 for name, value in vars(cls).items()
                 if callable(value) and not name.startswith("__")
                 and hasattr(ConsumerCoordinator, name)}
    return overrides


@pytest.mark.parametrize("strategy", [
    [CooperativeBalancedStickyAssignor], [CooperativeBalancedStickyAssignor()],
    [CooperativeLoadAwareAssignor(weights={})],
])
def test_a_cooperative_runtime_consumer_gets_the_whole_runtime(strategy: list[Any]) -> None:
    consumer = _consumer(strategy)
    try:
        status = runtime.runtime_status(consumer._coordinator)
        assert status == runtime.RuntimeStatus(join_fix=True, keep_reading=True, metrics=True,
                                               fencing=True)
        assert _replaced(consumer) == (REPLACED_BY_JOIN_FIX | REPLACED_BY_COOPERATIVE
                                       | REPLACED_BY_METRICS | REPLACED_BY_FENCING)
        assert type(consumer._coordinator).__name__ == "RuntimeCoordinator"
        ours = next(iter(consumer._coordinator._assignors.values()))
        assert ours.protocol_mode == "cooperative"
    finally:
        consumer.close()


@pytest.mark.parametrize("strategy", [
    [BalancedStickyAssignor], [PinnedAssignor(pinned=["t:0"])], [RangePartitionAssignor],
    # eager wins when a consumer lists an eager strategy beside a cooperative one
    [CooperativeBalancedStickyAssignor, BalancedStickyAssignor],
    [CooperativeBalancedStickyAssignor, RangePartitionAssignor],
])
def test_an_eager_runtime_consumer_gets_the_join_fix_only(strategy: list[Any]) -> None:
    consumer = _consumer(strategy)
    try:
        status = runtime.runtime_status(consumer._coordinator)
        assert status == runtime.RuntimeStatus(join_fix=True, keep_reading=False, metrics=True,
                                               fencing=True)
        assert _replaced(consumer) == (REPLACED_BY_JOIN_FIX | REPLACED_BY_METRICS
                                       | REPLACED_BY_FENCING)
        # the runtime tells our assignors the protocol kafka-python decided on
        assert {getattr(a, "protocol_mode", "eager")
                for a in consumer._coordinator._assignors.values()} == {"eager"}
    finally:
        consumer.close()


@pytest.mark.parametrize("strategy", [
    [CooperativeBalancedStickyAssignor], [CooperativeBalancedStickyAssignor()],
    [BalancedStickyAssignor], [RangePartitionAssignor], [StickyPartitionAssignor],
])
def test_a_plain_consumer_is_untouched(strategy: list[Any]) -> None:
    """kafka.KafkaConsumer with our assignor: nothing of kafka-python's is replaced."""
    consumer = _consumer(strategy, KafkaConsumer)
    try:
        assert runtime.runtime_status(consumer._coordinator) is None
        assert _replaced(consumer) == set()
    finally:
        consumer.close()


def test_plain_consumers_log_one_info_line_per_process_pointing_at_the_runtime(
    caplog: Any, monkeypatch: Any,
) -> None:
    """The plain one line changes nothing and says once, at the first join, where the runtime is."""
    from kafka_assignors.kafka_python import assignor as adapter

    monkeypatch.setattr(adapter, "_noted_plain", False)
    consumers = [_consumer([CooperativeBalancedStickyAssignor], KafkaConsumer) for _ in range(2)]
    try:
        with caplog.at_level(logging.INFO, logger="kafka_assignors"):
            for c in consumers:
                c.subscribe(["t"])
                c._coordinator.group_protocols()  # what each JoinGroup asks for
                c._coordinator.group_protocols()
    finally:
        for c in consumers:
            c.close()
    lines = [r for r in caplog.records if r.name == "kafka_assignors"]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO
    assert "from kafka_assignors.kafka_python import KafkaConsumer" in lines[0].getMessage()


def test_one_info_line_says_what_was_turned_on(caplog: Any) -> None:
    with caplog.at_level(logging.INFO, logger="kafka_assignors"):
        consumer = _consumer([CooperativeBalancedStickyAssignor])
        consumer.close()
    lines = [r for r in caplog.records if "kafka-assignors runtime" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO
    assert "never dropped" in lines[0].getMessage()
    assert "keep reading" in lines[0].getMessage()


def test_a_missing_name_raises_naming_it_and_changes_nothing(monkeypatch: Any) -> None:
    """A kafka-python without a name the runtime relies on: a clear error at construction,
    never a silent change of behaviour."""
    monkeypatch.setattr(manifest, "NAMES", (*manifest.NAMES, manifest.Name(
        "ConsumerCoordinator", "_a_name_kafka_python_dropped", None, manifest.JOIN)))
    with pytest.raises(runtime.RuntimeUnavailableError,
                       match=r"ConsumerCoordinator\._a_name_kafka_python_dropped"):
        _consumer([CooperativeBalancedStickyAssignor])
    plain = _consumer([CooperativeBalancedStickyAssignor], KafkaConsumer)  # never fails by us
    plain.close()


def test_releases_that_lose_timers_are_refused_with_the_upgrade_to_make() -> None:
    """On kafka-python 3.0.0 and 3.0.1 (their event loop can hold a timer back for minutes)
    the runtime consumer is refused at construction, saying which release to upgrade to;
    kafka.KafkaConsumer with our assignors works there. On any other release it is built."""
    installed = runtime.kafka_python_version()
    if installed in runtime.REFUSED_RELEASES:
        with pytest.raises(runtime.RuntimeUnavailableError, match=r"3\.0\.2 or later"):
            _consumer([CooperativeBalancedStickyAssignor])
    else:
        _consumer([CooperativeBalancedStickyAssignor]).close()
    plain = _consumer([CooperativeBalancedStickyAssignor], KafkaConsumer)  # never fails by us
    plain.close()


def test_a_refused_release_changes_nothing(monkeypatch: Any) -> None:
    """The refusal comes before anything is changed: no wrapper, no binding of our assignor."""
    monkeypatch.setattr(runtime, "kafka_python_version", lambda: "3.0.1")
    assignor = CooperativeBalancedStickyAssignor()
    consumer = _consumer([assignor], KafkaConsumer)
    try:
        with pytest.raises(runtime.RuntimeUnavailableError, match=r"kafka-python 3\.0\.1"):
            runtime.apply(consumer)
        assert _replaced(consumer) == set()
        assert runtime.runtime_status(consumer._coordinator) is None
    finally:
        consumer.close()


def test_the_manifest_lists_what_the_installed_kafka_python_has() -> None:
    """Every name of the manifest exists on this kafka-python; the count is printed for the docs."""
    assert manifest.missing_in_installed() == ()
    assert len(manifest.names()) == manifest.count() > 0
    print(f"the runtime relies on {manifest.count()} kafka-python names")


def test_the_manifest_check_names_what_a_coordinator_lacks() -> None:
    missing = manifest.missing(_Coordinator())
    assert "ConsumerCoordinator.join_group_async" in missing
    assert "Generation.is_lost" in missing
    assert "ConsumerCoordinator.group_id" not in missing


class _Coordinator:
    """A coordinator of another shape: the names the runtime needs are missing."""

    group_id = "g"


def test_install_on_a_coordinator_of_another_shape_changes_nothing() -> None:
    first = _Coordinator()
    status = runtime.install(first)
    assert not status.join_fix and not status.keep_reading
    assert "ConsumerCoordinator.join_group_async" in status.missing
    assert type(first) is _Coordinator
    assert vars(first) == {"_kafka_assignors_runtime": status.missing}


def test_kafka_python_3_has_every_name_the_runtime_relies_on() -> None:
    """Guards the names and signatures against a kafka-python upgrade (the install checks
    them too), the probes' included."""
    consumer = _consumer([RangePartitionAssignor], KafkaConsumer)
    try:
        assert manifest.missing(consumer._coordinator, consumer=consumer) == ()
        assert manifest.missing(consumer._coordinator, manifest.PROBES) == ()
    finally:
        consumer.close()


def test_a_join_in_flight_counts_as_needing_a_rejoin() -> None:
    consumer = _consumer([BalancedStickyAssignor])
    try:
        coordinator = consumer._coordinator
        coordinator.rejoin_needed = False
        coordinator._joined_subscription = None
        coordinator.rejoining = True
        assert coordinator.need_rejoin() is True
        coordinator.rejoining = False
        coordinator._join_task = object()  # a round trip whose result no poll has taken up
        assert coordinator.need_rejoin() is True
        coordinator._join_task = None
        assert coordinator.need_rejoin() is False
    finally:
        consumer.close()


def test_a_commit_retry_is_a_retriable_rebalance_error() -> None:
    from kafka import errors as Errors

    error = cooperative.RebalanceCommitRetry("moved on")
    assert isinstance(error, Errors.RebalanceInProgressError)
    assert isinstance(error, Errors.RetriableError)


def test_cooperative_completion_revokes_first_then_assigns() -> None:
    """A revoked partition is reported while still assigned (so commit() in the listener covers
    it, as in Java's order); only then is the assignment replaced, the added partitions reported
    and a follow-up requested."""
    from kafka import ConsumerRebalanceListener
    from kafka.coordinator.base import Generation
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
    from kafka.structs import TopicPartition

    seen: list[tuple[str, list[int], list[int]]] = []
    consumer = RuntimeConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                               enable_auto_commit=False,
                               partition_assignment_strategy=[CooperativeBalancedStickyAssignor])

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def _note(self, kind: str, tps: Any) -> None:
            state = consumer._subscription
            held = sorted(tp.partition for tp in state.assigned_partitions())
            seen.append((kind, sorted(tp.partition for tp in tps), held))

        def on_partitions_revoked(self, revoked: Any) -> None:
            self._note("revoked", revoked)

        def on_partitions_assigned(self, assigned: Any) -> None:
            self._note("assigned", assigned)

    try:
        consumer.subscribe(["t"], listener=Listener())
        state = consumer._subscription
        state.assign_from_subscribed([TopicPartition("t", 0), TopicPartition("t", 1)])
        for tp in state.assigned_partitions():
            state.seek(tp, 0)
        coordinator = consumer._coordinator
        coordinator.rejoin_needed = False
        coordinator._generation = Generation(3, "m", "cooperative-balanced-sticky")
        encoded = ConsumerProtocolAssignment(
            version=0, assigned_partitions=[("t", [1, 2])], user_data=b"").encode()
        consumer._net.run(coordinator._on_join_complete_async, 3, "m",
                          "cooperative-balanced-sticky", encoded)
        assert seen == [("revoked", [0], [0, 1]), ("assigned", [2], [1, 2])]
        assert sorted(tp.partition for tp in state.assigned_partitions()) == [1, 2]
        assert coordinator.rejoin_needed is True  # the follow-up round hands partition 0 over
    finally:
        consumer.close(autocommit=False)


def test_a_rebalance_found_during_a_poll_does_not_make_that_poll_wait_for_the_join(
        monkeypatch: Any) -> None:
    """The heartbeat that finds a rebalance often lands while a poll looks the coordinator up
    (it waits for the IO thread that handles it). kafka-python's poll then asks
    ``need_rejoin()`` again and joins: a cooperative member that keeps reading must not wait
    for that join (every member's JoinGroup) either, as it does not when the poll begins
    after the heartbeat."""
    import time

    from kafka.coordinator.base import BaseCoordinator, Generation, MemberState
    from kafka.coordinator.consumer import ConsumerCoordinator
    from kafka.future import Future
    from kafka.structs import TopicPartition

    def lookup_meanwhile_a_heartbeat_finds_a_rebalance(self: Any, timeout_ms: Any = None
                                                       ) -> bool:
        self.rejoin_needed = True
        return True

    async def coordinator_known(self: Any, timeout_ms: Any = None) -> bool:
        return True

    async def join_not_answered_yet(self: Any) -> Any:
        return await Future()  # the broker holds JoinGroup until every member has rejoined

    monkeypatch.setattr(ConsumerCoordinator, "ensure_coordinator_ready",
                        lookup_meanwhile_a_heartbeat_finds_a_rebalance)
    monkeypatch.setattr(BaseCoordinator, "ensure_coordinator_ready_async", coordinator_known)
    monkeypatch.setattr(BaseCoordinator, "_maybe_start_heartbeat_loop", lambda self: None)
    monkeypatch.setattr(BaseCoordinator, "_do_join_and_sync_async", join_not_answered_yet)
    consumer = RuntimeConsumer(bootstrap_servers="127.0.0.1:1", api_version=(3, 9), group_id="g",
                               enable_auto_commit=False,
                               partition_assignment_strategy=[CooperativeBalancedStickyAssignor])
    try:
        consumer.subscribe(["t"])
        consumer._subscription.assign_from_subscribed([TopicPartition("t", 0)])
        coordinator = consumer._coordinator
        coordinator._generation = Generation(3, "m", "cooperative-balanced-sticky")
        coordinator.state = MemberState.STABLE
        coordinator.rejoin_needed = False
        coordinator._joined_subscription = {"t"}
        join.state_of(coordinator).membership.confirm(time.monotonic())
        assert not coordinator.need_rejoin()  # the poll begins before the heartbeat's news

        # True: the join was advanced (its JoinGroup is out) and the group counts as active,
        # so the consumer goes on to fetch the partitions it keeps; kafka-python alone waits
        # for the join until the poll's timeout and returns False (nothing fetched)
        assert coordinator.poll(timeout_ms=1000) is True
        assert coordinator._join_task is not None and not coordinator._join_task.is_done
    finally:
        consumer.close(autocommit=False)
