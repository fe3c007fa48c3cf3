"""A dated subscription's user data is read without its owned field (issue 41): what the
leader makes of it is what it made of the whole user data, whatever the bytes are."""

from __future__ import annotations

import contextlib
import logging
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors.protocol import leader as leader_module
from kafka_assignors.protocol.leader import Leader, WireMember
from kafka_assignors.protocol.user_data import (
    OWNED_FIELD,
    decode_user_data,
    decode_user_data_text,
    encode_user_data,
    same_but_owned,
    split_owned,
    without_owned,
)

from .strategies import edited_user_data

plain_values = st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(max_size=4)
json_values = st.recursive(
    plain_values | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=5,
)
owned_values = st.dictionaries(
    st.text(max_size=5), st.lists(st.integers(0, 10**11), max_size=3), max_size=4
) | json_values
field_sets = st.dictionaries(
    st.sampled_from(["generation", "mode", "rack", "lag", "a", "owned", "pins", "zone"]),
    plain_values, max_size=5,
).flatmap(lambda fields: owned_values.map(lambda owned: {**fields, OWNED_FIELD: owned}))
edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 120), st.sampled_from(
    [*b'{}[]":,0 -e\\u\t\n\r\x00', 0xFF, 0xC3, 0xA9, 0xED])), max_size=3)


def _without(fields: dict[str, object] | None) -> dict[str, object] | None:
    return None if fields is None else {**fields, OWNED_FIELD: {}} if OWNED_FIELD in fields \
        else fields


@settings(max_examples=1500, deadline=None)
@given(field_sets, edits)
def test_text_without_owned_decodes_as_the_whole_minus_owned(fields, changes) -> None:  # type: ignore[no-untyped-def]
    """Where it applies, the shortened text decodes to the whole user data's fields with
    owned as {}; None (unreadable) exactly when the whole is."""
    raw = edited_user_data(fields, changes)
    text = without_owned(raw)
    if text is None:
        return
    got = decode_user_data_text(text)
    want = decode_user_data(raw)
    assert (got is None) == (want is None)
    # (the last "owned" key wins in both: then the whole one's value may be kept)
    assert got == _without(want) or (got is not None and want is not None and
                                     got.get(OWNED_FIELD) == want.get(OWNED_FIELD))


def test_our_own_user_data_takes_the_short_way() -> None:
    raw = encode_user_data({"mode": "cooperative", "generation": 7, "rack": "r1",
                            OWNED_FIELD: {"t-1": [0, 5, 1234567890], "t.2": []}})
    assert without_owned(raw) == 'kas1{"generation":7,"mode":"cooperative","owned":{},"rack":"r1"}'
    for odd in [b'kas1{"owned":{"a":[01]}}', b'kas1{"owned":{"a":[1,]}}',
                b'kas1{"owned":{"a":[12345678901]}}', b'kas1{"owned":{"a\\n":[1]}}',
                b'kas1{"owned": {}}', b'kas1{"x":[1],"owned":{}}', b"kas1", b"", b"kas2{}"]:
        assert without_owned(odd) is None, odd


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(field_sets, edits, st.sampled_from([0, 1, 2, 3, None, 9]),
                          st.booleans()), min_size=1, max_size=6))
def test_leader_reads_members_as_from_the_whole_user_data(specs) -> None:  # type: ignore[no-untyped-def]
    """The members the leader models (fields, claims, generations, racks, who holds what)
    and its warnings are the same as when every user data is decoded whole."""
    wire: list[WireMember] = []
    for i, (fields, changes, version, repeat) in enumerate(specs):
        raw = edited_user_data(fields, changes) if not (repeat and wire) else wire[-1].user_data
        wire.append(WireMember(f"m{i}", None, ["a"], {"a": [i]}, 5, None, raw, version))

    def model() -> tuple[object, list[str]]:
        records: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
        log = logging.getLogger("kafka_assignors")
        log.addHandler(handler)
        try:
            got = Leader("x")._model_members(wire, True)
        finally:
            log.removeHandler(handler)
        return got, records

    got = model()
    with _whole_user_data():
        want = model()
    assert got == want


def _whole_user_data() -> contextlib.ExitStack:
    """The leader with every user data decoded whole (its short ways off)."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch.object(leader_module, "split_owned", lambda _raw: None))
    stack.enter_context(mock.patch.object(leader_module, "same_but_owned",
                                          lambda *_args: False))
    return stack


owned_maps = st.dictionaries(
    st.sampled_from(["t", "topic-1", "b\u00e9", "a}b", "x"]),
    st.lists(st.integers(0, 10**11), max_size=3), max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(field_sets, st.lists(st.tuples(owned_maps, edits, st.sampled_from([2, 3, 2, 3, 1, None])),
                            min_size=1, max_size=8))
def test_members_alike_but_for_owned_read_as_whole(fields, specs) -> None:  # type: ignore[no-untyped-def]
    """Members whose user data differs only in the owned value (after a rebalance), some
    of it mutated: the leader models them as when every user data is decoded whole."""
    wire = [
        WireMember(f"m{i}", None, ["t"], {"t": [i]}, 5, None,
                   edited_user_data({**fields, OWNED_FIELD: owned}, changes), version)
        for i, (owned, changes, version) in enumerate(specs)
    ]

    def model() -> tuple[object, list[str]]:
        records: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
        log = logging.getLogger("kafka_assignors")
        log.addHandler(handler)
        try:
            got = Leader("x")._model_members(wire, True)
        finally:
            log.removeHandler(handler)
        return got, records

    got = model()
    with _whole_user_data():
        want = model()
    assert got == want


@settings(max_examples=1500, deadline=None)
@given(field_sets, owned_maps, edits, edits)
def test_same_but_owned_means_the_same_text(fields, owned, changes, other) -> None:  # type: ignore[no-untyped-def]
    """Where same_but_owned says so, without_owned of the user data is the reference's."""
    reference = edited_user_data(fields, changes)
    split = split_owned(reference)
    if split is None:
        return
    raw = edited_user_data({**fields, OWNED_FIELD: owned}, other)
    assert split[0] == without_owned(reference)
    if same_but_owned(raw, split[1], split[2]):
        assert without_owned(raw) == split[0]
    # our own user data around another owned value (ASCII names, partitions of at most
    # 10 digits) always takes the short way
    ours = {t: sorted(ps) for t, ps in sorted(owned.items()) if ps}
    if (not changes and isinstance(fields.get(OWNED_FIELD), dict)
            and all(t.isascii() and max(ps) < 10**10 for t, ps in ours.items())):
        assert same_but_owned(encode_user_data({**fields, OWNED_FIELD: ours}), split[1],
                              split[2])


digit_edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 120), st.sampled_from(
    [*b'0123456789', *b'{}[]":,-\\\xc3\xa9'])), max_size=2)
alike_owned = st.dictionaries(st.sampled_from(["t", "t1", "t20", "x0"]),
                              st.lists(st.integers(0, 120), max_size=3), max_size=3)


@settings(max_examples=1000, deadline=None)
@given(field_sets, st.lists(st.tuples(alike_owned, digit_edits), min_size=1, max_size=10))
def test_same_but_owned_by_shape_as_by_match(fields, specs) -> None:  # type: ignore[no-untyped-def]
    """User data compared by shape (members owning alike, some bytes edited: digits swapped,
    added or dropped, around and inside the owned value) is judged as the match alone
    judges it."""
    split = split_owned(edited_user_data(fields, []))
    if split is None:
        return
    shapes: set[bytes] = set()
    for owned, changes in specs:
        raw = edited_user_data({**fields, OWNED_FIELD: owned}, changes)
        assert (same_but_owned(raw, split[1], split[2], shapes)
                == same_but_owned(raw, split[1], split[2]))
