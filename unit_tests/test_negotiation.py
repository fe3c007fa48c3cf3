"""The coordinator's strategy vote and the clear error for a refused consumer (no broker)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.errors import InconsistentGroupProtocolError

from kafka_assignors import BalancedStickyAssignor, CooperativeBalancedStickyAssignor
from kafka_assignors import negotiation as neg
from kafka_assignors.negotiation import (
    AmbiguousVoteError,
    GroupMemberInfo,
    GroupStrategy,
    NoCommonStrategyError,
    StrategyMismatchError,
    choose_strategy,
    explain_strategy_mismatch,
    shares_strategy,
    strategy_mismatch_error,
    vote,
)

BS, CBS, RANGE, RR = "balanced-sticky", "cooperative-balanced-sticky", "range", "roundrobin"


def test_common_strategy_wins_when_one_member_lists_only_range() -> None:
    """[balanced-sticky, range] next to [range]: range is the only candidate and wins."""
    assert choose_strategy([[BS, RANGE], [BS, RANGE], [RANGE]]) == RANGE


def test_majority_of_first_choices_wins() -> None:
    """Two members preferring balanced-sticky outvote one preferring range."""
    result = vote([[BS, RANGE], [BS, RANGE], [RANGE, BS]])
    assert result.candidates == (BS, RANGE)
    assert result.votes == {BS: 2, RANGE: 1}
    assert result.winner == BS and result.tied == (BS,)


def test_members_vote_for_their_first_candidate_not_their_first_choice() -> None:
    """A member's favourite that others lack is skipped: it votes for its first shared one."""
    lists = [[BS, RANGE, RR], [BS, RANGE, RR], [RR, RANGE], [RR, RANGE], [RR, RANGE]]
    assert vote(lists).votes == {RANGE: 2, RR: 3}
    assert choose_strategy(lists) == RR
    assert choose_strategy(lists[:3]) == RANGE


def test_assignor_classes_and_instances_count_by_wire_name() -> None:
    """Assignor classes and instances vote under their wire names."""
    lists: list[list[Any]] = [
        [BalancedStickyAssignor, RangePartitionAssignor],
        [CooperativeBalancedStickyAssignor(), BalancedStickyAssignor()],
        [RoundRobinPartitionAssignor, "balanced-sticky"],
    ]
    assert choose_strategy(lists) == BS
    with pytest.raises(TypeError):
        vote([[object()]])


def test_no_shared_strategy_is_reported() -> None:
    """Members that share nothing have no candidate; choose_strategy says so."""
    assert vote([[BS], [RANGE]]).winner is None
    with pytest.raises(NoCommonStrategyError, match="no strategy is listed by every member"):
        choose_strategy([[BS], [RANGE]])
    with pytest.raises(NoCommonStrategyError):
        vote([[BS], []])
    with pytest.raises(ValueError):
        vote([])


def test_tie_goes_to_the_first_strategy_in_java_hashmap_order() -> None:
    """A 1:1 tie is broken as Kafka 4's coordinator does: range's hash bucket (9) comes before
    roundrobin's (10), balanced-sticky's (6) before range's."""
    assert neg._java_string_hash("range") == 108280125
    assert neg._java_hashmap_bucket("roundrobin", 2) == 10
    result = vote([[RR, RANGE], [RANGE, RR]])
    assert result.tied == (RR, RANGE) and result.winner == RANGE
    assert choose_strategy([[RANGE, BS], [BS, RANGE]]) == BS


def test_tie_within_one_hash_bucket_is_ambiguous() -> None:
    """Two tied strategies in the same HashMap bucket depend on member order: no prediction."""
    names = [f"s{i}" for i in range(200)]
    a, b = next(
        (x, y)
        for i, x in enumerate(names)
        for y in names[i + 1 :]
        if neg._java_hashmap_bucket(x, 2) == neg._java_hashmap_bucket(y, 2)
    )
    assert vote([[a, b], [b, a]]).winner is None
    with pytest.raises(AmbiguousVoteError, match="tie"):
        choose_strategy([[a, b], [b, a]])


def test_java_string_hash_matches_java_for_non_ascii() -> None:
    """String.hashCode works on UTF-16 code units ("é" is 233; "𝄞" is two surrogates)."""
    assert neg._java_string_hash("é") == 233
    assert neg._java_string_hash("𝄞") == (31 * 0xD834 + 0xDD1E)


def test_joining_needs_a_strategy_every_current_member_lists() -> None:
    """The coordinator's admission check: one of the newcomer's strategies is shared by all."""
    assert shares_strategy([[BS, RANGE], [RANGE]], [RANGE])
    assert not shares_strategy([[BS, RANGE], [RANGE]], [BS])
    assert shares_strategy([], [BS])
    assert not shares_strategy([], [])


@given(
    st.lists(
        st.lists(st.sampled_from([BS, CBS, RANGE, RR, "sticky"]), min_size=1, unique=True),
        min_size=1,
        max_size=8,
    )
)
def test_winner_is_listed_by_everyone_and_has_the_most_votes(lists: list[list[str]]) -> None:
    """Whatever the lists, a winner is a candidate every member lists, with the most votes."""
    result = vote(lists)
    if not result.candidates:
        assert not set(lists[0]).intersection(*map(set, lists[1:]))
        return
    assert sum(result.votes.values()) == len(lists)
    assert set(result.votes) <= set(result.candidates)
    if result.winner is not None:
        assert all(result.winner in m for m in lists)
        assert result.votes[result.winner] == max(result.votes.values())


# ---- the clear error ----------------------------------------------------------------------


DESCRIBED = {
    "group_id": "billing",
    "group_state": "Stable",
    "protocol_type": "consumer",
    "protocol_data": "range",
    "error": None,
    "members": [
        {
            "member_id": "a-1",
            "client_id": "app-a",
            "client_host": "/10.0.0.1",
            "group_instance_id": None,
            "member_assignment": {
                "assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}],
                "user_data": b"",
            },
        },
        {
            "member_id": "b-1",
            "client_id": "app-b",
            "client_host": "/10.0.0.2",
            "group_instance_id": "b",
            "member_assignment": {"assigned_partitions": [("orders", [2])], "user_data": b""},
        },
    ],
}


def test_description_is_parsed_into_strategy_and_assignments() -> None:
    """DescribeGroups output gives the chosen strategy and each member's partitions."""
    group = neg._group_from_description("billing", DESCRIBED)
    assert group.strategy == "range" and group.state == "Stable"
    assert group.members[1] == GroupMemberInfo("b-1", "app-b", "/10.0.0.2", "b", (("orders", 2),))
    assert group.assignments() == {
        "app-a": frozenset({("orders", 0), ("orders", 1)}),
        "app-b": frozenset({("orders", 2)}),
    }
    empty = neg._group_from_description("x", {"group_state": "Dead", "protocol_data": ""})
    assert empty.strategy is None and empty.members == ()


class FakeConsumer:
    def __init__(self, strategies: list[Any]) -> None:
        self.config = {
            "bootstrap_servers": "broker:9092",
            "group_id": "billing",
            "partition_assignment_strategy": strategies,
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "PLAIN",
            "ssl_cafile": None,
            "client_id": "mine",
            "max_poll_records": 500,
        }


def test_error_names_the_groups_strategy_and_the_consumers_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The refused consumer learns the group runs range, that it offers only balanced-sticky,
    and what to list to join; the description used its security settings."""
    seen: dict[str, Any] = {}

    def fake_describe(servers: Any, group_id: str, **admin: Any) -> GroupStrategy:
        seen.update(servers=servers, group_id=group_id, admin=admin)
        return neg._group_from_description(group_id, DESCRIBED)

    monkeypatch.setattr(neg, "describe_group_strategy", fake_describe)
    error = strategy_mismatch_error(FakeConsumer([BalancedStickyAssignor]))
    assert isinstance(error, InconsistentGroupProtocolError)
    text = str(error)
    assert "'billing'" in text and "INCONSISTENT_GROUP_PROTOCOL" in text
    assert "offers at least one strategy that every current member" in text
    assert "This consumer offered: ['balanced-sticky']" in text
    assert "protocol type 'consumer', current strategy 'range', state Stable" in text
    assert "['balanced-sticky', 'range']" in text and "app-a" in text
    assert error.group_strategy == "range" and error.own_strategies == ("balanced-sticky",)
    assert seen["servers"] == "broker:9092" and seen["group_id"] == "billing"
    assert seen["admin"] == {"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN"}


def test_error_when_the_group_cannot_be_described(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed description still yields the clear error, with the reason, never a new one."""

    def broken(*_a: Any, **_k: Any) -> GroupStrategy:
        raise OSError("connection refused")

    monkeypatch.setattr(neg, "describe_group_strategy", broken)
    error = strategy_mismatch_error(bootstrap_servers="b:1", group_id="g", strategies=[BS])
    assert "could not be described" in str(error) and "connection refused" in str(error)
    with pytest.raises(TypeError):
        strategy_mismatch_error(bootstrap_servers="b:1")


def test_error_for_a_group_that_is_not_a_consumer_group() -> None:
    """A group id used by another protocol type (e.g. Connect) is called out as such."""
    group = GroupStrategy("g", "Stable", "connect", "sessioned", ())
    text = str(StrategyMismatchError("g", [BS], group))
    assert "not a consumer group" in text and "protocol type 'connect'" in text


def test_error_says_when_the_group_has_no_strategy_yet() -> None:
    """A group between rebalances has no strategy to name: the error says so and still states
    the rule and the consumer's own strategies."""
    member = GroupMemberInfo("a-1", "app-a", "/10.0.0.1", None, ())
    pending = GroupStrategy("g", "PreparingRebalance", "consumer", None, (member,))
    error = StrategyMismatchError("g", [BS, RANGE], pending)
    text = str(error)
    assert error.group_strategy is None
    assert "current strategy none" in text and "has no strategy yet" in text
    assert "This consumer offered: ['balanced-sticky', 'range']" in text
    assert "every current member" in text and "['app-a']" in text
    assert "Every member of the group's last rebalance" not in text


def test_error_when_the_consumer_lists_the_groups_strategy_after_all() -> None:
    """If the consumer does list the group's last strategy, the members changed since: the
    error does not tell it to add what it already lists."""
    group = GroupStrategy("g", "Stable", "consumer", BS, ())
    text = str(StrategyMismatchError("g", [BS], group))
    assert "does offer 'balanced-sticky'" in text and "e.g." not in text


def test_context_manager_turns_the_bare_error_into_the_clear_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside explain_strategy_mismatch, kafka-python's bare error becomes StrategyMismatchError
    chained to it; other errors pass through untouched."""
    monkeypatch.setattr(
        neg,
        "describe_group_strategy",
        lambda s, g, **a: neg._group_from_description(g, DESCRIBED),
    )
    consumer = FakeConsumer([BalancedStickyAssignor])
    with pytest.raises(StrategyMismatchError) as info, explain_strategy_mismatch(consumer):
        raise InconsistentGroupProtocolError()
    assert isinstance(info.value.__cause__, InconsistentGroupProtocolError)
    with pytest.raises(KeyError), explain_strategy_mismatch(consumer):
        raise KeyError("other")
    with pytest.raises(ValueError, match="no group_id"):
        strategy_mismatch_error(type("C", (), {"config": {"group_id": None}})())
