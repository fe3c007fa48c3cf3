"""Hypothesis strategies for random groups, including stale, conflicting and invalid claims."""

from __future__ import annotations

from hypothesis import strategies as st

from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.protocol.user_data import MAGIC, encode_user_data

TOPICS = ["a", "b", "c", "d"]


@st.composite
def groups(
    draw: st.DrawFn,
    max_members: int = 6,
    max_partitions: int = 6,
    uniform: bool | None = None,
    with_claims: bool = True,
) -> GroupSpec:
    topic_names = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
    counts = {t: draw(st.integers(0, max_partitions)) for t in topic_names}
    n_members = draw(st.integers(1, max_members))
    same = draw(st.booleans()) if uniform is None else uniform
    shared = frozenset(draw(st.lists(st.sampled_from(topic_names), min_size=1, unique=True)))
    members = []
    for i in range(n_members):
        if same:
            topics = shared
        else:
            # may include a topic that does not exist, or nothing at all
            topics = frozenset(draw(st.lists(st.sampled_from([*topic_names, "gone"]), unique=True)))
        owned: dict[str, list[int]] = {}
        if with_claims:
            for t in draw(st.lists(st.sampled_from([*topic_names, "gone"]), unique=True)):
                owned[t] = draw(st.lists(st.integers(-1, max_partitions), max_size=4))
        members.append(
            MemberSpec(
                member_id=f"m{i}-{draw(st.integers(0, 999))}",
                topics=topics,
                owned=owned,
                generation=draw(st.integers(-1, 3)),
                instance_id=draw(st.one_of(st.none(), st.just(f"inst{i}"))),
            )
        )
    return GroupSpec.build(members, counts)


def edited_user_data(fields: dict[str, object], edits: list[tuple[int, int, int]]) -> bytes:
    """Our user data for ``fields`` with byte edits applied to its JSON body: (0, pos, byte)
    inserts, (1, pos, _) deletes, (2, pos, byte) replaces; positions are clamped."""
    body = bytearray(encode_user_data(fields)[len(MAGIC):])
    for op, pos, byte in edits:
        pos = min(pos, len(body))
        if op == 0:
            body.insert(pos, byte)
        elif body:
            if op == 1:
                del body[min(pos, len(body) - 1)]
            else:
                body[min(pos, len(body) - 1)] = byte
    return MAGIC + bytes(body)
