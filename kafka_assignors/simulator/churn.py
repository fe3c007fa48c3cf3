"""The churn language: short strings that become explicit :class:`Event` objects.

Each string is one rebalance, except ``random N`` (N of them)::

    join                      one new member joins
    leave [ID]                a member leaves (ID, or one picked with the seed)
    crash [ID]                a member dies (the same for the assignor, counted apart)
    scale-out N               N new members join together
    scale-in N                N members leave together
    add-partitions [TOPIC] N  TOPIC (default: every topic) grows to N partitions
    add-partitions [TOPIC] +N ... or by N partitions
    rebalance                 nothing changes (a member rejoined after a long poll)
    random N                  N events drawn from join, leave, crash, scale-out 2,
                              add-partitions +1 (never empties the group)

New members are made by ``new_member(index)`` so they follow the scenario's
subscription pattern and racks; members leaving are resolved here, so every
assignor sees exactly the same sequence.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence

from .scenario import (
    ADD_PARTITIONS,
    CRASH,
    JOIN,
    LEAVE,
    REBALANCE,
    SCALE_IN,
    SCALE_OUT,
    Event,
    SimMember,
)

RANDOM = "random"
_RANDOM_CHOICES = ("join", "leave", "crash", "scale-out 2", "add-partitions +1")


class ChurnError(ValueError):
    """A churn event that cannot be parsed or applied, with the reason."""


def expand_events(
    specs: Iterable[str],
    members: Sequence[SimMember],
    topics: Mapping[str, int],
    new_member: Callable[[int], SimMember],
    *,
    seed: int = 0,
) -> tuple[Event, ...]:
    """Turn churn strings into events, tracking who is in the group and the partition counts."""
    rng = random.Random(seed)
    present = [m.member_id for m in members]
    counts = dict(topics)
    next_index = len(members)
    events: list[Event] = []

    def joiners(n: int) -> tuple[SimMember, ...]:
        nonlocal next_index
        out = tuple(new_member(next_index + i) for i in range(n))
        next_index += n
        present.extend(m.member_id for m in out)
        return out

    def leavers(n: int, named: str | None, label: str) -> tuple[str, ...]:
        if named is not None:
            if named not in present:
                raise ChurnError(f"{label!r}: no member {named!r} in the group")
            chosen = [named]
        else:
            if n >= len(present):
                raise ChurnError(f"{label!r}: the group has only {len(present)} member(s)")
            chosen = rng.sample(present, n)
        for m in chosen:
            present.remove(m)
        return tuple(chosen)

    queue = [(s.strip(), False) for s in specs]
    while queue:
        label, picked = queue.pop(0)
        words = label.split()
        if not words:
            continue
        kind, args = words[0].lower(), words[1:]
        if kind == RANDOM:
            n = _count(args, label)
            queue[:0] = [(rng.choice(_RANDOM_CHOICES), True) for _ in range(n)]
            continue
        if kind in (LEAVE, CRASH) and not args and len(present) <= 1:
            if picked:  # never empty the group at random: join instead
                kind, label = JOIN, JOIN
            else:
                raise ChurnError(f"{label!r}: the group would be empty")
        if kind == JOIN:
            events.append(Event(JOIN, joins=joiners(1), label=label))
        elif kind == SCALE_OUT:
            events.append(Event(SCALE_OUT, joins=joiners(_count(args, label)), label=label))
        elif kind in (LEAVE, CRASH):
            named = args[0] if args else None
            events.append(Event(kind, leaves=leavers(1, named, label), label=label))
        elif kind == SCALE_IN:
            events.append(
                Event(SCALE_IN, leaves=leavers(_count(args, label), None, label), label=label)
            )
        elif kind == ADD_PARTITIONS:
            events.append(Event(ADD_PARTITIONS, partitions=_grow(args, counts, label), label=label))
        elif kind == REBALANCE:
            events.append(Event(REBALANCE, label=label))
        else:
            raise ChurnError(f"unknown churn event {label!r}; see kafka_assignors.simulator.churn")
    return tuple(events)


def _count(args: Sequence[str], label: str) -> int:
    try:
        n = int(args[0]) if args else 1
    except ValueError:
        raise ChurnError(f"{label!r}: {args[0]!r} is not a number") from None
    if n < 1:
        raise ChurnError(f"{label!r}: the count must be at least 1")
    return n


def _grow(args: Sequence[str], counts: dict[str, int], label: str) -> dict[str, int]:
    if not args or len(args) > 2:
        raise ChurnError(f"{label!r}: use 'add-partitions [TOPIC] N' or '... +N'")
    amount = args[-1]
    chosen = [args[0]] if len(args) == 2 else sorted(counts)
    grown: dict[str, int] = {}
    for topic in chosen:
        if topic not in counts:
            raise ChurnError(f"{label!r}: no topic {topic!r}")
        try:
            n = counts[topic] + int(amount[1:]) if amount.startswith("+") else int(amount)
        except ValueError:
            raise ChurnError(f"{label!r}: {amount!r} is not a number") from None
        if n < counts[topic]:
            raise ChurnError(f"{label!r}: Kafka cannot shrink {topic} below {counts[topic]}")
        counts[topic] = grown[topic] = n
    return grown
