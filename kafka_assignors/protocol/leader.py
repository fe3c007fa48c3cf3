"""What the group leader does around any strategy, independent of the client library.

The client bindings turn their wire types into :class:`WireMember` and call
:meth:`Leader.assign`; this module builds the model, runs the strategy,
validates the result, applies the cooperative first round when members still
hold partitions, remembers static members' partitions, and logs what happened.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, is_not
from typing import cast

from ..core.cooperative import Holding, withhold_held
from ..core.metrics import count_spread, moved_partitions, topic_spread
from ..core.model import (
    UNKNOWN_GENERATION,
    Assignment,
    GroupSpec,
    MemberSpec,
    TopicPartition,
    TopicSpec,
    member_spec,
)
from ..core.names import some_ids
from ..core.validate import validate_assignment
from .user_data import (
    RACK_FIELD,
    RESERVED_FIELDS,
    decode_user_data,
    decode_user_data_text,
    read_ownership,
    same_but_owned,
    split_owned,
)

log = logging.getLogger("kafka_assignors")

#: A strategy: the one small function a custom assignor has to write.
Strategy = Callable[[GroupSpec], "AssignmentResult"]
#: What a strategy may return: the canonical form or ``{member: [TopicPartition, ...]}``.
AssignmentResult = Mapping[str, Mapping[str, Sequence[int]] | Iterable[tuple[str, int]]]

MODE_EAGER = "eager"
MODE_COOPERATIVE = "cooperative"
#: ConsumerProtocolSubscription versions: 1 added owned partitions, 2 their
#: generation, 3 the rack.  The leader reads these and warns about others.
KNOWN_SUBSCRIPTION_VERSIONS = (0, 1, 2, 3)
#: Versions whose own fields date the owned partitions; for others the user data does.
_DATED_OWNERSHIP = (2, 3)


@dataclass(slots=True)
class WireMember:
    """A member as any client library's JoinGroup response describes it."""

    member_id: str
    instance_id: str | None
    topics: Sequence[str]
    owned: Mapping[str, Sequence[int]]
    generation: int = UNKNOWN_GENERATION
    rack: str | None = None
    user_data: object = b""
    #: the subscription's version, None when the client library does not say
    version: object = None


class LeaderReport:
    """The figures of the last assignment this leader computed (also logged).

    ``partitions``, ``moved``, ``count_spread`` and ``topic_spread`` are worked out when
    first read (a leader whose INFO log is off and that nobody asks pays nothing for them).
    """

    __slots__ = (
        "_figures",
        "_members",
        "_topics",
        "members",
        "pending_second_round",
        "seconds",
        "sent",
        "strategy",
        "target",
    )

    def __init__(
        self,
        strategy: str,
        members: Sequence[MemberSpec],
        pending_second_round: int,
        seconds: float,
        target: Assignment,
        sent: Assignment,
        topics: Mapping[str, TopicSpec],
    ) -> None:
        self.strategy = strategy
        self.members = len(members)
        self.pending_second_round = pending_second_round
        self.seconds = seconds
        self.target = target
        self.sent = sent
        self._members = members
        self._topics = topics
        self._figures: dict[str, int] = {}

    @property
    def partitions(self) -> int:
        """Partitions in the target assignment."""
        return self._figure("partitions", lambda: sum(
            sum(map(len, by_t.values())) for by_t in self.target.values()))

    @property
    def moved(self) -> int:
        """Partitions a member owned that the target gives to another member."""
        return self._figure("moved", lambda: moved_partitions(
            {m.member_id: m.owned for m in self._members},
            self.target,
            {t: spec.partitions for t, spec in self._topics.items()},
        ))

    @property
    def count_spread(self) -> int:
        """Most minus fewest partitions of a member in the target."""
        return self._figure("count_spread", lambda: count_spread(self.target))

    @property
    def topic_spread(self) -> int:
        """Worst per-topic spread of ``target`` among each topic's subscribers."""
        return self._figure("topic_spread", lambda: topic_spread(
            self.target, {m.member_id: m.topics for m in self._members}))

    def _figure(self, name: str, compute: Callable[[], int]) -> int:
        value = self._figures.get(name)
        if value is None:
            value = self._figures[name] = compute()
        return value

    def __repr__(self) -> str:
        return (f"LeaderReport(strategy={self.strategy!r}, members={self.members}, "
                f"partitions={self.partitions}, moved={self.moved}, "
                f"pending_second_round={self.pending_second_round}, "
                f"count_spread={self.count_spread}, seconds={self.seconds!r}, "
                f"topic_spread={self.topic_spread})")


def normalize(result: AssignmentResult) -> Assignment:
    """Accept either assignment form a strategy may return."""
    if set(map(type, result.values())) <= _DICT_TYPE:
        # the usual case: every value already canonical (checked in C)
        return cast(Assignment, dict(result))
    out: Assignment = {}
    for member, value in result.items():
        if isinstance(value, dict):
            out[member] = value  # already canonical; validation checks the contents
        elif isinstance(value, Mapping):
            out[member] = {t: list(ps) for t, ps in value.items()}
        else:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in value:
                by_topic.setdefault(topic, []).append(partition)
            out[member] = {t: sorted(ps) for t, ps in by_topic.items()}
    return out


class Leader:
    """Leader-side state and steps shared by every assignor in every client library."""

    def __init__(self, strategy_name: str) -> None:
        self.strategy_name = strategy_name
        #: static member instance id -> partitions it was last sent by this leader
        self._static_memory: dict[str, dict[str, list[int]]] = {}
        self.last_report: LeaderReport | None = None

    def assign(
        self,
        strategy: Strategy,
        wire_members: Sequence[WireMember],
        topics: Mapping[str, TopicSpec],
        *,
        cooperative: bool,
        broadcast: bool = False,
        weights: Mapping[TopicPartition, float] | None = None,
    ) -> Assignment:
        """Run ``strategy`` on the group and return what to send to each member.

        Call it inside :func:`gc_paused` together with the wire conversion.
        """
        started = time.perf_counter()
        members, holding = self._model_members(wire_members, cooperative)
        group = GroupSpec(tuple(members), topics, weights)

        target = normalize(strategy(group))
        if not all(map(target.__contains__, map(_member_id, members))):  # (checked in C)
            for m in members:
                target.setdefault(m.member_id, {})
        validate_assignment(group, target, broadcast=broadcast)

        pending = 0
        sent = target
        if cooperative and holding and not broadcast:
            # (a broadcast never takes a partition away, so there is nothing to wait for:
            # withholding would leave it unassigned, as no member revokes and rejoins)
            sent, pending = withhold_held(target, holding)
        if any(map(is_not, map(_instance_id, members), repeat(None))):  # (checked in C)
            for m in members:
                if m.instance_id is not None:
                    self._static_memory[m.instance_id] = sent[m.member_id]

        report = LeaderReport(
            self.strategy_name, members, pending, time.perf_counter() - started, target, sent,
            topics,
        )
        self.last_report = report
        if log.isEnabledFor(logging.INFO):
            log.info(
                "%s: assigned %d partition(s) to %d member(s) in %.1f ms; %d moved owner%s; "
                "partition count spread (max-min) %d",
                report.strategy,
                report.partitions,
                report.members,
                report.seconds * 1000,
                report.moved,
                f", {pending} wait for the second cooperative round" if pending else "",
                report.count_spread,
            )
        return sent

    def _model_members(
        self, wire_members: Sequence[WireMember], cooperative: bool
    ) -> tuple[list[MemberSpec], dict[str, Holding]]:
        members: list[MemberSpec] = []
        # one frozenset per distinct subscription, so later steps can cache by it
        topic_sets: dict[tuple[str, ...], frozenset[str]] = {}
        # member -> (generation, partitions) of members that may still hold partitions
        holding: dict[str, Holding] = {}
        # member ids by what was wrong with their metadata: one warning per kind
        odd: dict[str, list[str]] = {}
        # members mostly send one subscription (the adapter may share its list) and, in a
        # fresh group, the same user data: each run of equal ones is worked out once
        last_topics: object = None
        topic_set: frozenset[str] = frozenset()
        last_raw: object = None
        last_fields: dict[str, object] | None = None
        split: tuple[str, bytes, bytes] | None = None
        # a dated subscription's user data is read without its owned partitions (its own
        # fields say what it owns): after a rebalance members differ in those alone
        # (and what the body below makes of its fields worked out once too: the fields
        # without the reserved ones, and the rack they name)
        last_dated_raw: object = None  # (the last user data read that way, as sent)
        last_text: str | None = None
        last_prepared: tuple[dict[str, object], str | None] | None = None
        # that text's bytes around the owned value, as sent: user data that is the same
        # around another owned value makes the same text (checked in bytes, not made)
        last_before: bytes | None = None
        last_after = b""
        # (and the shapes of user data shown to be that, see same_but_owned)
        shapes: set[bytes] = set()
        for w in wire_members:
            raw = w.user_data
            prepared = False
            if raw.__class__ is bytes and raw == last_raw:
                fields = None if last_fields is None else dict(last_fields)
            elif w.version in _DATED_OWNERSHIP and (
                (raw.__class__ is bytes and raw == last_dated_raw)
                or (last_before is not None
                    and same_but_owned(raw, last_before, last_after, shapes))
                or (split := split_owned(raw)) is not None
            ):
                if split is not None:  # (read just now; else the same text as the last one)
                    text, last_before, last_after = split
                    split = None
                    shapes = set()
                    last_dated_raw = raw
                    if text != last_text:
                        last_text = text
                        last_prepared = _prepare(decode_user_data_text(text))
                if last_prepared is None:
                    fields = None
                else:
                    fields = dict(last_prepared[0])
                    prepared = True
            else:
                fields = last_fields = decode_user_data(raw)
                last_raw = raw
            if w.topics is not last_topics:
                last_topics = w.topics
                key = tuple(w.topics)
                known = topic_sets.get(key)
                if known is None:
                    known = topic_sets[key] = frozenset(key)
                topic_set = known
            owned: Mapping[str, Sequence[int]] = w.owned
            generation = w.generation
            carried = None
            rack = w.rack
            if fields is not None and prepared:
                # (a dated member's (version 2 or 3): its ownership is not read from its
                # user data, and its version needs no warning)
                assert last_prepared is not None
                if rack is None:
                    rack = last_prepared[1]
            else:
                if fields is None:
                    odd.setdefault(_UNREADABLE, []).append(w.member_id)
                    fields, owned = {}, {}
                else:
                    if w.version not in _DATED_OWNERSHIP:
                        # (a dated subscription's own fields say what it owns: what its user
                        # data carries is not read, so it is not parsed either)
                        carried = read_ownership(fields)
                    if rack is None and isinstance(fields.get(RACK_FIELD), str):
                        rack = str(fields[RACK_FIELD])  # a leader that read version-0 fields only
                    if not RESERVED_FIELDS.isdisjoint(fields):
                        fields = {k: v for k, v in fields.items() if k not in RESERVED_FIELDS}
                if carried is not None and w.version not in _DATED_OWNERSHIP:
                    # version 0 (kafka-python 2.x, aiokafka, or any member as a 2.x leader reads
                    # it) and version 1 (undated): the user data says what it owns, and since when
                    owned, generation = carried
                elif w.version is not None and w.version not in KNOWN_SUBSCRIPTION_VERSIONS:
                    odd.setdefault(_UNKNOWN_VERSION, []).append(w.member_id)
                    owned = {}
                elif w.version == 0:
                    odd.setdefault(_VERSION_0, []).append(w.member_id)
                    owned = {}
                elif w.version == 1 and owned:
                    odd.setdefault(_VERSION_1, []).append(w.member_id)
            if not w.topics:
                odd.setdefault(_NO_TOPICS, []).append(w.member_id)
            mode = fields.get("mode")
            held, held_since = (owned, generation) if owned else (w.owned, w.generation)
            if cooperative and mode != MODE_EAGER and held:
                # An eager member revoked everything before joining; anyone else may
                # still hold what it reports, so it must let go before a new owner gets it.
                holding[w.member_id] = (held_since, held)
            if not owned and w.instance_id is not None and w.instance_id in self._static_memory:
                owned = self._static_memory[w.instance_id]
                generation = UNKNOWN_GENERATION
                log.info(
                    "%s: static member %s (%s) rejoined owning nothing; offering back the "
                    "partitions it had",
                    self.strategy_name,
                    w.instance_id,
                    w.member_id,
                )
            members.append(
                member_spec(w.member_id, topic_set, owned, generation, w.instance_id, rack, fields)
            )
        for problem, ids in odd.items():
            log.warning("%s: %d member(s) %s: %s", self.strategy_name, len(ids), problem,
                        some_ids(ids))
        return members, holding


def _prepare(fields: dict[str, object] | None) -> tuple[dict[str, object], str | None] | None:
    """What :meth:`Leader._model_members` makes of a dated member's fields: those a strategy
    sees (the reserved ones left out) and the rack they name; None if unreadable."""
    if fields is None:
        return None
    rack = fields.get(RACK_FIELD)
    return ({k: v for k, v in fields.items() if k not in RESERVED_FIELDS},
            str(rack) if isinstance(rack, str) else None)


_UNREADABLE = "sent user data this assignor cannot read; treating them as owning nothing"
_UNKNOWN_VERSION = (
    "sent a subscription version this assignor does not know; treating them as owning nothing"
)
_VERSION_0 = (
    "sent a version-0 subscription, which lists no owned partitions; treating them as "
    "owning nothing"
)
_VERSION_1 = (
    "sent a version-1 subscription, which dates no owned partitions; their claims count "
    "as the oldest"
)
_NO_TOPICS = "subscribe to no topics; they get no partitions"


_member_id = attrgetter("member_id")
_instance_id = attrgetter("instance_id")
_DICT_TYPE = {dict}


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one assignment runs.

    A large group allocates millions of small lists and tuples that are all
    alive at once; each automatic collection would scan them again (seconds at a
    million partitions).  Nothing here creates reference cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
