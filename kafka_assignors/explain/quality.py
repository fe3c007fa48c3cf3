"""The last rebalance's quality, from what DescribeGroups returns about a classic group.

Each member's subscription says what it owned when it joined (the v1+ ``owned_partitions``
field, or our assignors' user data ``owned``, which kafka-python 2.x and aiokafka members
carry too); its assignment says what it holds now.  Together they give the figures the
leader computed and our metrics export (``partitions-moved``, ``count-spread``,
``topic-spread``) without asking the leader: our assignments carry no user data (the broker
moves a classic group online to KIP-848 only then), so the leader's own numbers do not
travel.  The leader's time and the members' pauses are only in the consumers' metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.metrics import count_spread, moved_partitions, topic_spread
from ..protocol.user_data import decode_user_data, read_ownership
from .model import MemberReport, _field, _pairs, as_bytes


@dataclass
class LastRebalance:
    """What the last rebalance did, as far as the members' subscriptions tell."""

    #: partitions a member owned at its join and another member holds now
    moved: int
    #: partitions held now that no current member claimed at its join (new partitions, or
    #: those of members that left or crashed)
    newly_owned: int
    #: most minus fewest partitions per member, now
    count_spread: int
    #: worst topic's most minus fewest partitions per subscribed member, now
    topic_spread: int
    #: members that claimed partitions at the join (new members, and eager members of
    #: other assignors, which give theirs up before joining, claim none)
    members_with_claims: int
    members: int


def claims_at_join(member: Mapping[str, Any]) -> dict[str, list[int]] | None:
    """What a DescribeGroups member owned when it joined; None when its subscription does
    not say (version 0 of another client, unreadable)."""
    meta = member.get("member_metadata")
    if meta is None or isinstance(meta, bytes | bytearray | memoryview | str):
        return None
    raw = _field(meta, "user_data")
    fields = decode_user_data(raw if raw is None or isinstance(raw, bytes) else as_bytes(raw))
    if fields:
        carried = read_ownership(fields)
        if carried is not None:
            return carried[0]
    version = getattr(meta, "version", None)
    if version == 0:
        return None
    owned = _field(meta, "owned_partitions")
    return _pairs(owned) if owned is not None else None


def last_rebalance(
    raw_members: Sequence[Mapping[str, Any]], members: Sequence[MemberReport]
) -> LastRebalance | None:
    """The figures of the assignment members hold now against their claims at the join;
    None for a group without members or whose metadata was not decoded."""
    if not members or not any(m.topics for m in members):
        return None
    previous: dict[str, dict[str, list[int]]] = {}
    for raw in raw_members:
        claims = claims_at_join(raw)
        if claims is not None:
            previous[str(raw.get("member_id", ""))] = claims
    current = {m.member_id: m.assignment for m in members}
    claimed = {(t, p) for owned in previous.values() for t, ps in owned.items() for p in ps}
    held = {(t, p) for by_t in current.values() for t, ps in by_t.items() for p in ps}
    return LastRebalance(
        moved=moved_partitions(previous, current),
        newly_owned=len(held - claimed),
        count_spread=count_spread(current),
        topic_spread=topic_spread(current, {m.member_id: m.topics for m in members}),
        members_with_claims=sum(1 for owned in previous.values() if owned),
        members=len(members),
    )


def render_last_rebalance(figures: LastRebalance | None, w: Any) -> None:
    """The text block ``explain`` prints after the members."""
    if figures is None:
        return
    w("\nlast rebalance (members' claims at the join -> what they hold now)\n")
    w(f"  partitions moved {figures.moved} (owned by one member at the join, "
      f"held by another now)\n")
    w(f"  newly owned {figures.newly_owned} (claimed by no current member at the join: "
      "new partitions, or those of members that left)\n")
    w(f"  spread: partitions per member max - min = {figures.count_spread}, "
      f"worst topic max - min = {figures.topic_spread}\n")
    if figures.members_with_claims < figures.members:
        w(f"  ({figures.members - figures.members_with_claims} of {figures.members} members "
          "claimed no partitions at the join: new members, or eager members of other "
          "assignors, which give theirs up first; moves from them are not counted)\n")
