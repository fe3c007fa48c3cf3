"""The leader's cheaper steps (issue 41) give what the plain ones gave: user data decoding,
the lazily computed report figures, the wire conversion both ways."""

from __future__ import annotations

import json
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors import CooperativeBalancedStickyAssignor
from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.metrics import count_spread, moved_partitions, topic_spread
from kafka_assignors.core.model import TopicSpec
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
