"""The subscription user data our assignors exchange: a tagged, versioned JSON object.

Any other bytes (another client's user data, an older version, garbage) decode
to ``None`` so the leader can warn and carry on.
"""

from __future__ import annotations

import json
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
            text = data.decode("utf-8", "surrogatepass")
            value, end = _DECODER.raw_decode(text, start)
            if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
                return None  # json.loads: "Extra data"
        else:
            value = json.loads(data[start:])
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


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
