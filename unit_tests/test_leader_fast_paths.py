"""The leader's cheaper steps (issue 41) give what the plain ones gave: user data decoding,
the lazily computed report figures, the wire conversion both ways."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, fields
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.core import validate
from kafka_assignors.core.balanced_sticky import _linked_parts, _parts, balanced_sticky
from kafka_assignors.core.metrics import count_spread, moved_partitions, topic_spread
from kafka_assignors.core.model import GroupSpec, MemberSpec, TopicSpec, member_spec
from kafka_assignors.core.validate import InvalidAssignmentError, validate_assignment
from kafka_assignors.kafka_python import assignor as kp
from kafka_assignors.protocol.leader import Leader, WireMember
from kafka_assignors.protocol.user_data import MAGIC, decode_user_data, encode_user_data

from .fakes import FakeCluster, FakeMember, subscription_of
from .strategies import edited_user_data


def _by_json_loads(raw: bytes) -> dict[str, object] | None:
    """decode_user_data as json.loads alone defines it."""
    if raw == b"":
        return {}
    if not raw.startswith(MAGIC):
        return None
    try:
        value = json.loads(raw[len(MAGIC):])
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=6,
)
edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 200), st.sampled_from(
    [*b'{}[]":,0 -e\\u\t\n\r\x00', 0xFF, 0xC3, 0xA9, 0xED, 0xEF, 0xBB, 0xBF])), max_size=3)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=5), json_values, max_size=4), edits)
def test_user_data_decodes_as_json_loads_reads_it(fields, changes) -> None:  # type: ignore[no-untyped-def]
    """Our user data, intact or with bytes inserted, deleted or changed, decodes to exactly
    what json.loads makes of it (None where it fails or is not an object)."""
    raw = edited_user_data(fields, changes)
    got, want = decode_user_data(raw), _by_json_loads(raw)
    assert got == want and type(got) is type(want)


def test_user_data_edge_cases_decode_as_json_loads_reads_them() -> None:
    """Whitespace after the object, a byte-order mark, UTF-16, lone surrogates, extra data."""
    for body in [b'{"a":1} \t\r\n', b'{"a":1} x', b'{"a":1}{}', b'\xef\xbb\xbf{"a":1}',
                 '{"a":1}'.encode("utf-16-le"), '{"a":"\udc80"}'.encode("utf-8", "surrogatepass"),
                 b'{"a":"\xff"}', b"{", b"{\x00", b'{"a":NaN}', b" {}", b"[]"]:
        raw = MAGIC + body
        assert decode_user_data(raw) == _by_json_loads(raw), body


def _group_after_a_leave() -> tuple[list[WireMember], dict[str, TopicSpec]]:
    topics = {t: TopicSpec(t, 7) for t in ("a", "b", "c")}
    owned = [{"a": [0]}, {"b": [0]}, {"a": [1, 2, 3, 4, 5], "b": [1, 2, 3, 4, 5], "c": [0, 1, 2]},
             {"a": [6], "b": [6], "c": [3, 4, 5, 6]}]
    wire = [WireMember(f"m{i}", None, ["a", "b", "c"], o, 4, None,
                       encode_user_data({"mode": "cooperative"}), 3) for i, o in enumerate(owned)]
    return wire[:3], topics  # the fourth member left


def test_report_figures_are_the_metrics_of_the_assignment() -> None:
    """The figures worked out when read equal the metrics of the sent target, as before."""
    wire, topics = _group_after_a_leave()
    leader = Leader("cooperative-balanced-sticky")
    leader.assign(balanced_sticky, wire, topics, cooperative=True)
    report = leader.last_report
    assert report is not None
    target = report.target
    assert report.partitions == 21 and report.members == 3
    assert report.moved == moved_partitions({w.member_id: w.owned for w in wire}, target,
                                            {t: 7 for t in topics})
    assert report.count_spread == count_spread(target)
    assert report.topic_spread == topic_spread(target, {w.member_id: frozenset(w.topics)
                                                        for w in wire})
    assert report.moved > 0 and report.pending_second_round > 0 and "moved=" in repr(report)


def test_wire_members_read_owned_partitions_and_share_equal_subscriptions() -> None:
    """Owned partitions come from decoded entries or plain pairs (a topic listed twice is
    merged); members with equal topic lists share one list."""
    def member(name: str, owned: list[object]) -> SimpleNamespace:
        md = SimpleNamespace(topics=["a", "b"], owned_partitions=owned, user_data=b"",
                             generation_id=3, rack_id=None, version=3)
        return SimpleNamespace(member_id=name, group_instance_id=None, metadata=md)

    entry = SimpleNamespace(topic="a", partitions=[0, 1])
    one, two = kp._wire_members([
        member("m1", [entry, ("b", [2])]),
        member("m2", [entry, SimpleNamespace(topic="a", partitions=[5])]),
    ])
    assert one.owned == {"a": [0, 1], "b": [2]} and two.owned == {"a": [0, 1, 5]}
    assert one.topics == ["a", "b"] and one.topics is two.topics
    (alone,) = kp._wire_members([member("m3", [])])
    assert alone.topics == ["a", "b"] and alone.topics is not one.topics  # one call's only


def test_assignments_go_on_the_wire_as_before() -> None:
    """The messages built by keyword encode to the bytes the positional form gives."""
    sent = {"m1": {"b": [3], "a": [0, 2]}, "m2": {}}
    wire = kp._to_wire(sent)
    for member, by_topic in sent.items():
        plain = kp._ASSIGNMENT(0, sorted(by_topic.items()), b"")
        assert wire[member].encode() == plain.encode()


def test_a_leave_keeps_every_stayer_whole() -> None:
    """After a leave each remaining member keeps what it owned; only the leaver's partitions
    move, and none waits for a second round."""
    cluster = FakeCluster({"t": 6})
    assignors = [CooperativeBalancedStickyAssignor() for _ in range(3)]
    members = [FakeMember(f"m{i}", subscription_of(a, ["t"])) for i, a in enumerate(assignors)]
    first = assignors[0].assign(cluster, members)
    for m, a in zip(members, assignors, strict=True):
        a.on_assignment(first[m.member_id], generation=1)
    stay = [FakeMember(f"m{i}", subscription_of(a, ["t"])) for i, a in enumerate(assignors[:2])]
    second = assignors[0].assign(cluster, stay)
    for m in stay:
        before = set(first[m.member_id].partitions())
        assert before <= set(second[m.member_id].partitions())
    report = assignors[0].last_report
    assert report.pending_second_round == 0 and report.moved == 0


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3), st.frozensets(st.sampled_from("abc")),
       st.dictionaries(st.sampled_from("abc"), st.lists(st.integers(0, 5), max_size=2)),
       st.integers(-1, 5), st.none() | st.text(max_size=2), st.none() | st.text(max_size=2),
       st.dictionaries(st.text(max_size=2), st.integers()))
def test_member_spec_builds_the_dataclass(member_id, topics, owned, generation, instance_id,  # type: ignore[no-untyped-def]
                                         rack, user_data) -> None:
    """The leader's quick constructor makes the very MemberSpec the dataclass makes, frozen."""
    args = (member_id, topics, owned, generation, instance_id, rack, user_data)
    quick, plain = member_spec(*args), MemberSpec(*args)
    assert quick == plain and repr(quick) == repr(plain) and type(quick) is MemberSpec
    assert all(getattr(quick, f.name) is getattr(plain, f.name) for f in fields(MemberSpec))
    with pytest.raises(FrozenInstanceError):
        quick.generation = 7  # type: ignore[misc]


subscriptions = st.lists(st.frozensets(st.sampled_from("abcde"), max_size=3), max_size=6)


@settings(max_examples=300, deadline=None)
@given(subscriptions, st.integers(0, 5), st.booleans())
def test_parts_of_one_subscription_as_linked(subs, copies, shared) -> None:  # type: ignore[no-untyped-def]
    """Members that all share one subscription (one set, or equal sets) make the parts
    the general linking makes; so do any others."""
    one = subs[0] if subs else frozenset()
    alike = [one if shared else frozenset(one) for _ in range(copies)]
    for case in (subs, alike):
        assert _parts(case) == _linked_parts(case)


def _validate_member_by_member(group, assignment) -> None:  # type: ignore[no-untyped-def]
    """validate_assignment's earlier gathering (a get and a test per entry), as reference."""
    topics_of = {m.member_id: m.topics for m in group.members}
    unknown = sorted(assignment.keys() - topics_of.keys())
    if unknown:
        raise InvalidAssignmentError(f"assignment names members not in the group: {unknown[:5]}")
    per_topic: dict[str, list[int]] = {}
    for member_id, by_topic in assignment.items():
        topics = topics_of[member_id]
        if not by_topic.keys() <= topics:
            validate._check_subscribed(member_id, topics, by_topic)
        for topic, partitions in by_topic.items():
            got = per_topic.get(topic)
            if got is None:
                per_topic[topic] = list(partitions)
            else:
                got.extend(partitions)
    for topic, got in per_topic.items():
        n = group.partition_count(topic)
        if got and (min(got) < 0 or max(got) >= n):
            raise InvalidAssignmentError(f"a partition of {topic} outside 0..{n - 1} was assigned")
    for topic in group.subscribed_topics():
        n = group.partition_count(topic)
        got = per_topic.get(topic, [])
        distinct = len(set(got))
        if distinct != n:
            raise InvalidAssignmentError(
                f"{n - distinct} partition(s) of {topic} were not assigned to any member")
        if len(got) != n:
            raise InvalidAssignmentError(
                f"{len(got) - n} partition(s) of {topic} were assigned twice")


def _outcome(check, group, assignment) -> str | None:  # type: ignore[no-untyped-def]
    try:
        check(group, assignment)
    except InvalidAssignmentError as error:
        return str(error)
    return None


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_validation_judges_as_member_by_member(data) -> None:  # type: ignore[no-untyped-def]
    """Valid assignments (a fair deal, then some edited: partitions dropped, doubled, out of
    range, on unsubscribed or unknown topics, unknown members) pass or fail with the
    message the earlier member-by-member gathering gave."""
    counts = {"a": 3, "b": 2, "c": 0}
    members = [MemberSpec(f"m{i}", data.draw(st.frozensets(st.sampled_from("abcd"), min_size=1)))
               for i in range(data.draw(st.integers(1, 4)))]
    group = GroupSpec.build(members, counts)
    assignment = balanced_sticky(group)
    for _ in range(data.draw(st.integers(0, 3))):
        member = data.draw(st.sampled_from([*assignment, "stranger"]))
        topic = data.draw(st.sampled_from("abcd"))
        assignment.setdefault(member, {}).setdefault(topic, []).append(
            data.draw(st.integers(-1, 3)))
        if data.draw(st.booleans()) and assignment[member][topic]:
            assignment[member][topic].pop(0)
    assert (_outcome(validate_assignment, group, assignment)
            == _outcome(_validate_member_by_member, group, assignment))
