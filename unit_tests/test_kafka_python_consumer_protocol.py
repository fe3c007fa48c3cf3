"""The KIP-848 member's state machine, its reconciliation plan, its options and its error
kinds (kafka_python.consumer_group), on plain data."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.errors import KafkaConfigurationError

from kafka_assignors.kafka_python.consumer_group.config import split_configs
from kafka_assignors.kafka_python.consumer_group.errors import classify
from kafka_assignors.kafka_python.consumer_group.membership import (
    ENTERED_FROM,
    IN_GROUP,
    Assignment,
    IllegalTransition,
    Membership,
    MemberState,
)
from kafka_assignors.kafka_python.consumer_group.reconciliation import plan

S = MemberState
T1, T2 = "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"
NAMES = {T1: "orders", T2: "payments"}


def state(member: Membership) -> MemberState:
    """The member's state (a call: each read is a new one for the type checker)."""
    return member.state


def ids(*pairs: tuple[str, int]) -> Assignment:
    return frozenset(pairs)


def joined(member: Membership, assignment: Assignment, epoch: int = 1) -> None:
    """Join and get ``assignment`` in the first response."""
    member.subscribe(frozenset({"orders"}), None)
    beat = member.heartbeat()
    member.on_response(None, epoch, assignment, beat)


def stable(member: Membership, assignment: Assignment, epoch: int = 1) -> None:
    joined(member, assignment, epoch)
    if member.reconciling:
        member.reconciled(member.target, member.target_epoch)
        member.on_response(None, epoch, None, member.heartbeat())
    assert state(member) is S.STABLE


def test_a_subscription_joins_at_epoch_0_with_every_field() -> None:
    member = Membership("m1", rack_id="r1", rebalance_timeout_ms=1000,
                        server_assignor="balanced-sticky")
    assert state(member) is S.UNSUBSCRIBED and not member.heartbeats
    member.subscribe(frozenset({"orders"}), None)
    assert state(member) is S.JOINING and member.heartbeat_now
    beat = member.heartbeat()
    assert (beat.member_epoch, beat.topics, beat.rack_id, beat.server_assignor,
            beat.rebalance_timeout_ms, beat.owned) == (
        0, frozenset({"orders"}), "r1", "balanced-sticky", 1000, frozenset())


def test_an_assignment_is_reconciled_then_acknowledged_then_stable() -> None:
    member = Membership("m1")
    joined(member, ids((T1, 0), (T1, 1)), epoch=3)
    assert state(member) is S.RECONCILING and member.member_epoch == 3
    member.reconciled(ids((T1, 0), (T1, 1)), 3)
    assert state(member) is S.ACKNOWLEDGING and member.heartbeat_now
    ack = member.heartbeat()
    assert ack.acknowledges and ack.owned == ids((T1, 0), (T1, 1))
    assert not member.heartbeat_now  # the acknowledgement is in flight
    member.on_response(None, 3, None, ack)
    assert state(member) is S.STABLE and not member.heartbeat_now


def test_a_response_to_an_earlier_heartbeat_does_not_count_as_the_acknowledgement() -> None:
    member = Membership("m1")
    joined(member, ids((T1, 0)))
    earlier = member.heartbeat()  # sent while still reconciling
    member.reconciled(ids((T1, 0)), 1)
    member.on_response(None, 1, None, earlier)
    assert state(member) is S.ACKNOWLEDGING


def test_a_new_target_moves_a_stable_member_to_reconciling() -> None:
    member = Membership("m1")
    stable(member, ids((T1, 0), (T1, 1)))
    member.on_response(None, 2, ids((T1, 0)), member.heartbeat())
    assert state(member) is S.RECONCILING and member.target_epoch == 2


def test_an_epoch_bump_without_a_change_is_stable_without_reconciling() -> None:
    member = Membership("m1")
    stable(member, ids((T1, 0)))
    member.on_response(None, 5, ids((T1, 0)), member.heartbeat())
    assert state(member) is S.STABLE and member.current_epoch == 5


def test_an_empty_first_assignment_is_reconciled_then_stable() -> None:
    """Java reconciles a joined member's first target even when it is empty (its assignment
    was NONE), so onPartitionsAssigned runs once with nothing; later empty targets do not."""
    member = Membership("m1")
    joined(member, frozenset())
    assert state(member) is S.RECONCILING and member.first_reconciliation
    member.reconciled(frozenset(), 1)
    member.on_response(None, 1, None, member.heartbeat())
    assert state(member) is S.STABLE and not member.first_reconciliation
    member.on_response(None, 2, frozenset(), member.heartbeat())
    assert state(member) is S.STABLE


def test_a_join_answered_without_an_assignment_waits_for_one() -> None:
    member = Membership("m1")
    joined(member, None)  # type: ignore[arg-type]  # the broker sent no assignment yet
    assert state(member) is S.STABLE and member.first_reconciliation
    member.on_response(None, 2, frozenset(), member.heartbeat())
    assert state(member) is S.RECONCILING


def test_a_rejoined_member_reconciles_its_first_target_again_even_if_empty() -> None:
    member = Membership("m1")
    stable(member, ids((T1, 0)), epoch=4)
    member.fenced()
    member.lost()
    member.on_response(None, 6, frozenset(), member.heartbeat())
    assert state(member) is S.RECONCILING


def test_a_fenced_member_loses_its_partitions_and_rejoins_at_epoch_0_with_its_id() -> None:
    member = Membership("m1")
    stable(member, ids((T1, 0)), epoch=4)
    member.fenced()
    assert state(member) is S.FENCED and member.member_epoch == 0
    assert not member.heartbeats  # nothing is sent until poll() released the partitions
    member.on_response(None, 9, ids((T2, 0)), member.heartbeat())  # a late answer: ignored
    assert state(member) is S.FENCED and member.current == ids((T1, 0))
    member.lost()
    assert state(member) is S.JOINING and member.current == frozenset()
    beat = member.heartbeat()
    assert (beat.member_id, beat.member_epoch, beat.owned) == ("m1", 0, frozenset())


def test_a_reconciliation_finished_after_a_fence_is_ignored() -> None:
    member = Membership("m1")
    joined(member, ids((T1, 0)))
    member.fenced()
    member.reconciled(ids((T1, 0)), 1)
    assert state(member) is S.FENCED and member.current == frozenset()


@pytest.mark.parametrize(("instance_id", "epoch"), [(None, -1), ("static-1", -2)])
def test_leaving_sends_epoch_minus_1_or_minus_2_when_static(instance_id: str | None,
                                                           epoch: int) -> None:
    member = Membership("m1", instance_id=instance_id)
    stable(member, ids((T1, 0)))
    member.prepare_leaving()
    member.leaving()
    beat = member.heartbeat()
    assert (beat.member_epoch, beat.instance_id) == (epoch, instance_id)
    member.left()
    assert state(member) is S.UNSUBSCRIBED and member.current == frozenset()


def test_a_poll_timeout_makes_the_member_stale_then_it_rejoins() -> None:
    member = Membership("m1")
    stable(member, ids((T1, 0)))
    member.prepare_leaving()
    member.leaving()
    member.stale()
    assert state(member) is S.STALE and not member.heartbeats
    member.lost()
    assert state(member) is S.JOINING


def test_a_new_subscription_is_sent_at_once() -> None:
    member = Membership("m1")
    stable(member, ids((T1, 0)))
    assert member.subscribe(frozenset({"orders", "payments"}), None)
    assert member.heartbeat_now
    assert member.heartbeat().topics == frozenset({"orders", "payments"})
    assert not member.heartbeat_now


def test_a_regex_subscription_sends_the_regex_not_names() -> None:
    member = Membership("m1")
    member.subscribe(frozenset({"orders"}), "ord.*")
    beat = member.heartbeat()
    assert (beat.topics, beat.regex) == (None, "ord.*")


def test_transitions_the_protocol_forbids_raise() -> None:
    member = Membership("m1")
    with pytest.raises(IllegalTransition, match="UNSUBSCRIBED -> ACKNOWLEDGING"):
        member.transition(S.ACKNOWLEDGING)


EVENTS = st.lists(st.one_of(
    st.tuples(st.just("response"), st.integers(1, 20),
              st.none() | st.frozensets(st.tuples(st.sampled_from([T1, T2]),
                                                  st.integers(0, 3)), max_size=5)),
    st.tuples(st.just("reconcile"), st.just(0), st.none()),
    st.tuples(st.just("fenced"), st.just(0), st.none()),
    st.tuples(st.just("lost"), st.just(0), st.none()),
    st.tuples(st.just("leave"), st.just(0), st.none()),
    st.tuples(st.just("subscribe"), st.just(0), st.none()),
), max_size=40)


@given(EVENTS)
def test_any_order_of_events_keeps_the_member_in_kip_848_states(events: list[tuple[
        str, int, Assignment | None]]) -> None:
    """Whatever the broker answers and whenever the caller polls, no transition is illegal,
    a joining member sends epoch 0 owning nothing, and a stable member owns its target."""
    member = Membership("m1")
    member.subscribe(frozenset({"orders"}), None)
    for kind, epoch, assignment in events:
        if kind == "response" and member.heartbeats:
            member.on_response(None, epoch, assignment, member.heartbeat())
        elif kind == "reconcile" and member.reconciling:
            member.reconciled(member.target, member.target_epoch)
        elif kind == "fenced":
            member.fenced()
        elif kind == "lost" and state(member) in (S.FENCED, S.STALE):
            member.lost()
        elif kind == "leave" and state(member) in IN_GROUP:
            member.prepare_leaving()
            member.leaving()
            member.left()
        elif kind == "subscribe":
            member.subscribe(frozenset({"orders"}), None)
        if state(member) is S.JOINING:
            beat = member.heartbeat()
            assert beat.member_epoch == 0 and beat.owned == frozenset()
        if state(member) is S.STABLE:
            assert member.current == member.target
        assert state(member) in ENTERED_FROM


def test_a_plan_revokes_only_what_moves_and_assigns_only_what_is_new() -> None:
    step = plan(ids((T1, 0), (T1, 1)), ids((T1, 1), (T2, 0)), {T1: "orders"}, NAMES.get)
    assert step.revoke == {("orders", 0)}
    assert step.assign == {("payments", 0)}
    assert step.keep == {("orders", 1)}
    assert step.owned == ids((T1, 1), (T2, 0)) and not step.unresolved


def test_a_target_topic_without_a_name_waits_for_the_metadata() -> None:
    step = plan(ids((T1, 0)), ids((T1, 0), (T2, 0)), {T1: "orders"}, lambda tid: None)
    assert step.unresolved == {T2} and not step.changes
    assert step.owned == ids((T1, 0))


def test_an_owned_partition_is_revoked_by_its_known_name_once_its_topic_is_gone() -> None:
    step = plan(ids((T1, 0)), frozenset(), {T1: "orders"}, lambda tid: None)
    assert step.revoke == {("orders", 0)} and step.owned == frozenset()


def test_group_protocol_options_leave_kafka_python_configs_only() -> None:
    rest, protocol = split_configs({"group_id": "g", "group_protocol": "consumer",
                                    "group_remote_assignor": "balanced-sticky"})
    assert rest == {"group_id": "g"}
    assert protocol is not None and protocol.remote_assignor == "balanced-sticky"
    assert split_configs({"group_id": "g"}) == ({"group_id": "g"}, None)
    assert split_configs({"group_protocol": "CLASSIC"})[1] is None


@pytest.mark.parametrize(("configs", "message"), [
    ({"group_protocol": "consumer", "group_id": "g", "partition_assignment_strategy": []},
     "partition_assignment_strategy cannot be set when group_protocol='consumer'.*"
     "group_remote_assignor"),
    ({"group_protocol": "consumer", "group_id": "g", "session_timeout_ms": 10000},
     "session_timeout_ms cannot be set"),
    ({"group_protocol": "consumer", "group_id": "g", "heartbeat_interval_ms": 1000},
     "heartbeat_interval_ms cannot be set"),
    ({"group_protocol": "classic", "group_remote_assignor": "uniform"},
     "group_remote_assignor cannot be set when group_protocol='classic'"),
    ({"group_protocol": "eager"}, "must be 'classic' or 'consumer'"),
    ({"group_protocol": "consumer"}, "needs a group_id"),
])
def test_what_the_consumer_protocol_does_not_allow_is_refused(configs: dict[str, object],
                                                              message: str) -> None:
    with pytest.raises(KafkaConfigurationError, match=message):
        split_configs(configs)


@pytest.mark.parametrize(("code", "kind"), [
    (0, "ok"), (110, "fenced"), (25, "fenced"), (15, "coordinator"), (16, "coordinator"),
    (14, "retry"), (82, "fatal"), (111, "fatal"), (112, "fatal"), (81, "fatal"),
])
def test_heartbeat_errors_are_classified_as_the_java_consumer_does(code: int,
                                                                   kind: str) -> None:
    assert classify(code) == kind
