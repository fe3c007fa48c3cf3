"""The subscription user data our assignors exchange: a tagged, versioned JSON object.

Any other bytes (another client's user data, an older version, garbage) decode
to ``None`` so the leader can warn and carry on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

MAGIC = b"kas1"


def encode_user_data(fields: Mapping[str, object]) -> bytes:
    return MAGIC + json.dumps(dict(fields), separators=(",", ":"), sort_keys=True).encode()


def decode_user_data(raw: object) -> dict[str, object] | None:
    """The fields we encoded, ``{}`` for empty user data, ``None`` for anything else."""
    if raw is None or raw == b"":
        return {}
    if not isinstance(raw, bytes | bytearray | memoryview):
        return None
    data = bytes(raw)
    if not data.startswith(MAGIC):
        return None
    try:
        value = json.loads(data[len(MAGIC) :])
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
