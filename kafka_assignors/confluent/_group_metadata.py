"""The consumer group metadata of the bridge's member, in confluent-kafka's form.

``Consumer.consumer_group_metadata()`` returns librdkafka's serialized
``rd_kafka_consumer_group_metadata_t`` (``bytes``), which
``Producer.send_offsets_to_transaction()`` reads back: under the bridge librdkafka is not the
member, so its own would name no member and generation, and the broker would fence the
transactional commit (KIP-447).  The same form, written from the membership client's
identity (librdkafka's ``rd_kafka_consumer_group_metadata_write``, format v2):
``"CGMDv2:"``, the generation (int32, native byte order), the group id, the member id (both
NUL-terminated), a byte that is 1 when there is no group instance id, else 0 and the id.
"""

from __future__ import annotations

import struct
from typing import Any

MAGIC = b"CGMDv2:"


def serialized(group_id: str, generation_id: int, member_id: str,
               group_instance_id: str | None) -> bytes:
    """librdkafka's serialized consumer group metadata (format v2) of this identity."""
    out = [MAGIC, struct.pack("=i", generation_id), _c_string(group_id), _c_string(member_id)]
    if group_instance_id is None:
        out.append(b"\x01")
    else:
        out += [b"\x00", _c_string(group_instance_id)]
    return b"".join(out)


def of_member(snapshot: Any, group_id: str) -> bytes:
    """From kafka-python's ``group_metadata()`` snapshot (``generation_id``, ``member_id``,
    ``group_instance_id``)."""
    return serialized(group_id, int(snapshot.generation_id), str(snapshot.member_id or ""),
                      snapshot.group_instance_id or None)


def _c_string(text: str) -> bytes:
    data = text.encode()
    if b"\x00" in data or not data.isascii() or not all(32 <= b < 127 for b in data):
        # librdkafka's reader refuses what is not printable: say so here, not in the producer
        raise ValueError(f"{text!r}: not printable ASCII, librdkafka cannot read it back")
    return data + b"\x00"
