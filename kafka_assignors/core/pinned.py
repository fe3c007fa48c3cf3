"""Pinned assignment: members name the partitions or whole topics they want.

Each member carries its own pins in its subscription (``user_data["pinned"]``:
a list of ``[topic, partition]``, partition ``null`` for a whole topic), so no
shared configuration exists and a pin lives exactly as long as its member.

- A pinned partition goes to the member that pins it.  When several members
  pin the same partition, the member that sorts first (static instance id,
  else member id) gets it; the others are told in a warning.
- A pinned whole topic is shared by the members that pin it (balanced among
  them); partitions of it pinned one by one still go to their pinners.
- Everything else is balanced over all subscribers, counting pinned partitions
  as load, and stays with its owner where balance allows (:mod:`.fill`).
- Pins only count for topics the member subscribes to and partitions that
  exist.  When a pinning member leaves, its partitions fail over to the others;
  when it returns with the same pins, they come back to it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from .balanced_sticky import canonical_members
from .claims import resolve_claims
from .fill import sticky_fill
from .model import Assignment, GroupSpec, MemberSpec, TopicPartition
from .subscriptions import usable_subscriptions

log = logging.getLogger("kafka_assignors.core")

#: The user data field members send their pins in.
PINS_FIELD = "pinned"


def member_pins(member: MemberSpec) -> tuple[list[TopicPartition], list[str], int]:
    """(pinned partitions, pinned whole topics, malformed entries) from the member's user data."""
    raw = member.user_data.get(PINS_FIELD)
    parts: list[TopicPartition] = []
    topics: list[str] = []
    bad = 0
    if raw is None:
        return parts, topics, bad
    if not isinstance(raw, list):
        return parts, topics, 1
    for entry in raw:
        if (isinstance(entry, list | tuple) and len(entry) == 2 and isinstance(entry[0], str)
                and entry[0]):
            topic, partition = entry
            if partition is None:
                topics.append(topic)
                continue
            if isinstance(partition, int) and not isinstance(partition, bool) and partition >= 0:
                parts.append(TopicPartition(topic, partition))
                continue
        bad += 1
    return parts, topics, bad


def pinned(group: GroupSpec) -> Assignment:
    """Pins honoured, the rest balanced and sticky; see the module docstring."""
    members = canonical_members(group)
    subs = usable_subscriptions(group, members)
    counts = {t: spec.partitions for t, spec in group.topics.items()}
    claims = resolve_claims(members, subs, counts)

    pinned_to: dict[TopicPartition, int] = {}
    losers: dict[TopicPartition, list[str]] = {}
    topic_pinners: dict[str, list[int]] = {}
    ignored: list[str] = []
    for i, m in enumerate(members):
        parts, topics, bad = member_pins(m)
        if bad:
            ignored.append(f"{m.member_id}: {bad} malformed pin(s)")
        for tp in parts:
            if tp.topic not in subs[i] or tp.partition >= counts[tp.topic]:
                ignored.append(f"{m.member_id}: {tp.topic}-{tp.partition}")
            elif tp in pinned_to:  # members are in canonical order: the first pin wins
                if pinned_to[tp] != i:
                    losers.setdefault(tp, []).append(m.member_id)
            else:
                pinned_to[tp] = i
        for t in topics:
            if t in subs[i]:
                topic_pinners.setdefault(t, []).append(i)
            else:
                ignored.append(f"{m.member_id}: topic {t}")
    _log_pins(members, pinned_to, losers, ignored)

    items: list[tuple[tuple[str, str], TopicPartition]] = []
    eligible: dict[tuple[str, str], list[int]] = {}
    for t in group.subscribed_topics():
        takers = topic_pinners.get(t)
        key = ("pinned-topic", t) if takers else ("topic", t)
        if not takers:
            takers = [i for i, s in enumerate(subs) if t in s]
        eligible[key] = sorted(set(takers))
        items.extend((key, TopicPartition(t, p)) for p in range(counts[t])
                     if TopicPartition(t, p) not in pinned_to)
    fixed = [0] * len(members)
    for i in pinned_to.values():
        fixed[i] += 1
    owner = {TopicPartition(t, p): i for i, by_t in enumerate(claims.owned)
             for t, ps in by_t.items() for p in ps}
    placed = sticky_fill(len(members), items, eligible, owner, fixed)
    for tp, i in pinned_to.items():
        placed[i].append(tp)
    result: Assignment = {}
    for i, m in enumerate(members):
        by_t: dict[str, list[int]] = {}
        for t, p in sorted(placed[i]):
            by_t.setdefault(t, []).append(p)
        result[m.member_id] = by_t
    return result


def _log_pins(
    members: list[MemberSpec],
    pinned_to: Mapping[TopicPartition, int],
    losers: Mapping[TopicPartition, list[str]],
    ignored: list[str],
) -> None:
    if losers:
        examples = "; ".join(
            f"{tp.topic}-{tp.partition} to {members[pinned_to[tp]].member_id}, "
            f"not {', '.join(who)}"
            for tp, who in sorted(losers.items())[:5]
        )
        log.warning(
            "pinned: %d partition(s) pinned by more than one member; the member that sorts "
            "first (instance id, then member id) gets each: %s", len(losers), examples,
        )
    if ignored:
        log.warning(
            "pinned: %d pin(s) ignored (topic not subscribed, partition does not exist, or "
            "malformed): %s", len(ignored), "; ".join(ignored[:5]),
        )
