"""The subscription user data our assignors exchange: a tagged, versioned JSON object.

Any other bytes (another client's user data, an older version, garbage) decode
to ``None`` so the leader can warn and carry on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

MAGIC = b"kas1"
#: json.loads's own decoder (no hooks) and the whitespace it allows after a document
_DECODER = json.JSONDecoder()
_JSON_WHITESPACE = " \t\n\r"


def encode_user_data(fields: Mapping[str, object]) -> bytes:
    return MAGIC + json.dumps(dict(fields), separators=(",", ":"), sort_keys=True).encode()


def decode_user_data(raw: object) -> dict[str, object] | None:
    """The fields we encoded, ``{}`` for empty user data, ``None`` for anything else."""
    if raw is None or raw == b"":
        return {}
    if not isinstance(raw, (bytes, bytearray, memoryview)):  # (a tuple: faster than a union)
        return None
    data = raw if raw.__class__ is bytes else bytes(raw)
    if not data.startswith(MAGIC):
        return None
    start = len(MAGIC)
    try:
        if data[start : start + 1] == b"{" and data[start + 1 : start + 2] != b"\x00":
            # what json.loads reads as UTF-8 and starts at 0: its steps around the
            # decoder (encoding detection, whitespace matching) done here, more cheaply;
            # decoded whole and read from after the (ASCII) magic: no copy of the body
            return _decode_text(data.decode("utf-8", "surrogatepass"), start)
        value = json.loads(data[start:])
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _decode_text(text: str, start: int) -> dict[str, object] | None:
    """The JSON object at ``start`` of ``text``, the rest blank; None if it is not that."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except ValueError:
        return None
    if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
        return None  # json.loads: "Extra data"
    return value if isinstance(value, dict) else None


# Our encoder's form of the owned field (no spaces, topic names without escapes, integers
# of at most 10 digits), after top-level fields with plain values: a subset of JSON, so
# what matches is a complete value at the top level of the object.  (Possessive: nothing
# here needs backtracking, and it halves the time.)
_NUMBER = r"(?>0|[1-9][0-9]{0,9}+)"
_STRING = r'"[^"\\\x00-\x1f]*+"'
_OWNED_ENTRY = _STRING + r":\[(?:" + _NUMBER + r"(?:," + _NUMBER + r")*+)?\]"
_BEFORE_OWNED = re.compile(
    r"\{(?:" + _STRING + r":(?:" + _STRING + r"|-?" + _NUMBER + r"|true|false|null),)*+"
    + r'"owned":'
)
_OWNED_VALUE = re.compile(r"\{(?:" + _OWNED_ENTRY + r"(?:," + _OWNED_ENTRY + r")*+)?\}")


def without_owned(raw: object) -> str | None:
    """``raw``'s JSON text with the value of its owned field (in our encoder's form) as ``{}``.

    :func:`decode_user_data_text` of it gives what :func:`decode_user_data` gives for
    ``raw``, but ``{}`` for that field: None (unreadable) exactly when ``raw`` is.  The
    leader of a dated subscription (whose own fields say what it owns) reads no more: most
    members then send the same text (their owned partitions differ, the rest does not),
    decoded once.  None where ``raw`` is not like that: decode it whole.
    """
    split = split_owned(raw)
    return None if split is None else split[0]


def split_owned(raw: object) -> tuple[str, bytes, bytes] | None:
    """:func:`without_owned` of ``raw``, and ``raw``'s bytes before and after the owned
    field's value (for :func:`same_but_owned`); None where that is None."""
    if not isinstance(raw, bytes) or not raw.startswith(MAGIC):
        return None
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    head = _BEFORE_OWNED.match(text, len(MAGIC))
    if head is None:
        return None
    value = _OWNED_VALUE.match(text, head.end())
    if value is None:
        return None
    before, after = text[: head.end()], text[value.end() :]
    # (re-encoded: a valid text encodes back to the very bytes it was decoded from)
    return (before + "{}" + after, before.encode("utf-8", "surrogatepass"),
            after.encode("utf-8", "surrogatepass"))


# The owned value as _OWNED_VALUE reads it, in bytes and with ASCII topic names only: on
# such bytes both match the same extent (one deterministic reading; none is a prefix of
# another).
_ASCII_STRING = rb'"[^"\\\x00-\x1f\x80-\xff]*+"'
_ASCII_ENTRY = (_ASCII_STRING + rb":\[(?:" + _NUMBER.encode() + rb"(?:," + _NUMBER.encode()
                + rb")*+)?\]")
_ASCII_OWNED_VALUE = re.compile(
    rb"\{(?:" + _ASCII_ENTRY + rb"(?:," + _ASCII_ENTRY + rb")*+)?\}")


def same_but_owned(
    raw: object, before: bytes, after: bytes, shapes: set[bytes] | None = None
) -> bool:
    """True if ``raw`` is ``before``, an owned value in our encoder's form, then ``after``,
    where :func:`split_owned` gave ``before`` and ``after`` for some user data: then
    :func:`without_owned` of ``raw`` is that user data's (checked in bytes, not decoded).

    After a rebalance members send the same user data but for the partitions they own:
    each is checked here in one match, no text made.  False: not shown, use
    :func:`split_owned`.

    ``shapes`` (kept by the caller for one ``before`` and ``after``, empty at first) holds
    the shapes of user data shown so: one of the same shape is shown without the match.
    Members that own alike (the same topics, partition numbers of the same lengths) send
    user data of one shape.
    """
    if not isinstance(raw, bytes) or not raw.startswith(before):
        return False
    if shapes is not None:
        shape = raw.translate(_SHAPE)
        if shape in shapes:
            # (the match reads the same classes of bytes as for the one of that shape, so
            # ends where that one's ended: the length less that of after)
            return raw.endswith(after)
    value = _ASCII_OWNED_VALUE.match(raw, len(before))
    if value is None or value.end() + len(after) != len(raw) or not raw.endswith(after):
        return False
    if shapes is not None and len(shapes) < _MOST_SHAPES:
        shapes.add(shape)
    return True


#: A user data's shape: its bytes with the digits 2-9 made 1.  _ASCII_OWNED_VALUE tells no
#: byte from another of its class (1-9 are one class in it), so it reads two user data of
#: one shape alike.
_SHAPE = bytes.maketrans(b"23456789", b"11111111")
#: (each member owning unlike: no shape repeats, so few are kept)
_MOST_SHAPES = 64


def decode_user_data_text(text: str) -> dict[str, object] | None:
    """:func:`decode_user_data` of the text :func:`without_owned` returns."""
    return _decode_text(text, len(MAGIC))


#: Keys every binding adds to every subscription's user data (strategies never see them):
#: the partitions the member owns and the generation it got them in.  Version-0
#: subscriptions (kafka-python 2.x, aiokafka) have no other place for them, and a
#: kafka-python 2.x leader reads only the version-0 fields of anyone's subscription, so
#: they travel here as kafka-python's own ``sticky`` carries them (``StickyAssignorUserData``).
OWNED_FIELD = "owned"
GENERATION_FIELD = "generation"
#: The member's rack, for a leader that reads only version-0 fields (aiokafka, kafka-python 2.x).
RACK_FIELD = "rack"
RESERVED_FIELDS = frozenset({OWNED_FIELD, GENERATION_FIELD, RACK_FIELD})


def ownership_fields(owned: Mapping[str, Sequence[int]], generation: int) -> dict[str, object]:
    """The user data fields that carry a member's owned partitions and their generation."""
    return {OWNED_FIELD: {t: sorted(ps) for t, ps in sorted(owned.items()) if ps},
            GENERATION_FIELD: generation}


def read_ownership(fields: Mapping[str, object]) -> tuple[dict[str, list[int]], int] | None:
    """(owned partitions, generation) from decoded user data; None if absent or malformed."""
    owned, generation = fields.get(OWNED_FIELD), fields.get(GENERATION_FIELD)
    if not isinstance(owned, dict) or not isinstance(generation, int):
        return None
    out: dict[str, list[int]] = {}
    for topic, partitions in owned.items():
        if not isinstance(partitions, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in partitions
        ):
            return None
        if partitions:
            out[str(topic)] = sorted(set(partitions))
    return out, generation
