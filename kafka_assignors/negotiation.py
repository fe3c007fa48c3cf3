"""How a consumer group agrees on an assignment strategy, and a clear error when it cannot.

The group coordinator (a broker) picks one strategy per rebalance by vote:

1. candidates are the strategies that *every* member lists;
2. each member votes for the first candidate in its own (preference-ordered) list;
3. the candidate with the most votes wins.

A member that shares no strategy with the members already in the group is refused
with ``INCONSISTENT_GROUP_PROTOCOL``; the group itself carries on unchanged.
:func:`vote` / :func:`choose_strategy` predict the coordinator's choice;
:func:`strategy_mismatch_error` and :func:`explain_strategy_mismatch` turn
kafka-python's bare ``InconsistentGroupProtocolError`` into a
:class:`StrategyMismatchError` that states the broker's rule and names the group's
protocol type and current strategy (or that it has none yet) and the consumer's own::

    from kafka_assignors.negotiation import explain_strategy_mismatch

    with explain_strategy_mismatch(consumer):
        for record in consumer:
            ...
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.errors import InconsistentGroupProtocolError

log = logging.getLogger("kafka_assignors")

__all__ = [
    "AmbiguousVoteError",
    "GroupMemberInfo",
    "GroupStrategy",
    "NoCommonStrategyError",
    "StrategyMismatchError",
    "Vote",
    "choose_strategy",
    "describe_group_strategy",
    "explain_strategy_mismatch",
    "shares_strategy",
    "strategy_mismatch_error",
    "strategy_names",
    "vote",
]

#: Admin client settings copied from a consumer's configuration (connection and security).
_ADMIN_KEYS = (
    "bootstrap_servers",
    "security_protocol",
    "client_dns_lookup",
    "api_version",
    "proxy_url",
    "socks5_proxy",
)
_ADMIN_PREFIXES = ("ssl_", "sasl_")
_DESCRIBE_TIMEOUT_MS = 10_000


class NoCommonStrategyError(ValueError):
    """The members share no strategy: the coordinator would refuse the last one to join."""


class AmbiguousVoteError(ValueError):
    """Several strategies tie and the broker's choice depends on its member order."""


# ---- the vote rule ------------------------------------------------------------------------------


def _java_string_hash(text: str) -> int:
    """``java.lang.String.hashCode`` (UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def _java_hashmap_bucket(text: str, entries: int) -> int:
    """Bucket of ``text`` in a default ``java.util.HashMap`` holding ``entries`` keys."""
    capacity = 16
    while entries > capacity * 3 // 4:
        capacity *= 2
    h = _java_string_hash(text)
    return (h ^ (h >> 16)) & (capacity - 1)


@dataclass(frozen=True)
class Vote:
    """The outcome of the coordinator's vote for one set of members."""

    #: strategies every member lists, in the first member's order
    candidates: tuple[str, ...]
    #: votes per candidate that got at least one
    votes: Mapping[str, int]
    #: the chosen strategy; None if no candidate, or a tie the broker breaks by member order
    winner: str | None
    #: the strategies that share the most votes (more than one on a tie)
    tied: tuple[str, ...]


def strategy_names(strategies: Iterable[Any]) -> list[str]:
    """Wire names of ``strategies``: strings as they are, assignor classes or instances by
    their ``name`` attribute."""
    names = []
    for s in strategies:
        name = s if isinstance(s, str) else getattr(s, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{s!r} is neither a strategy name nor an assignor with a 'name'")
        names.append(name)
    return names


def vote(member_lists: Sequence[Sequence[Any]]) -> Vote:
    """Run the coordinator's vote on the members' preference-ordered strategy lists.

    Ties: Apache Kafka 4.x's coordinator counts votes in a ``java.util.HashMap`` and
    keeps the first maximum in iteration order, i.e. the tied strategy whose hash
    bucket comes first; strategies in one bucket are ordered by which member voted
    first, which depends on the broker's member map, so such a tie has no
    predictable ``winner``.
    """
    lists = [strategy_names(m) for m in member_lists]
    if not lists:
        raise ValueError("a vote needs at least one member")
    if any(not m for m in lists):
        raise NoCommonStrategyError("a member lists no strategy")
    common = set(lists[0]).intersection(*map(set, lists[1:]))
    candidates = tuple(dict.fromkeys(s for s in lists[0] if s in common))
    if not candidates:
        return Vote((), {}, None, ())
    votes: dict[str, int] = {}
    for member in lists:
        choice = next(s for s in member if s in common)
        votes[choice] = votes.get(choice, 0) + 1
    best = max(votes.values())
    tied = tuple(s for s in votes if votes[s] == best)
    winner: str | None = tied[0]
    if len(tied) > 1:
        buckets = {s: _java_hashmap_bucket(s, len(votes)) for s in tied}
        first = min(buckets.values())
        in_first = [s for s in tied if buckets[s] == first]
        winner = in_first[0] if len(in_first) == 1 else None
    return Vote(candidates, votes, winner, tied)


def choose_strategy(member_lists: Sequence[Sequence[Any]]) -> str:
    """The strategy the coordinator picks for these members (see :func:`vote`).

    Raises NoCommonStrategyError if they share none and AmbiguousVoteError for a tie
    the broker breaks by member order.
    """
    result = vote(member_lists)
    if not result.candidates:
        lists = [strategy_names(m) for m in member_lists]
        raise NoCommonStrategyError(f"no strategy is listed by every member: {lists}")
    if result.winner is None:
        raise AmbiguousVoteError(
            f"{list(result.tied)} tie with {max(result.votes.values())} vote(s) each; "
            "the broker's member order decides"
        )
    return result.winner


def shares_strategy(group_lists: Sequence[Sequence[Any]], own: Sequence[Any]) -> bool:
    """Whether a member listing ``own`` may join members listing ``group_lists``: the
    coordinator's check is that one of its strategies is listed by every current member."""
    if not group_lists:
        return bool(own)
    common = set(strategy_names(group_lists[0])).intersection(
        *(set(strategy_names(m)) for m in group_lists[1:])
    )
    return any(s in common for s in strategy_names(own))


# ---- reading the group back from the broker --------------------------------------------------


@dataclass(frozen=True)
class GroupMemberInfo:
    """One member as DescribeGroups shows it."""

    member_id: str
    client_id: str
    client_host: str
    group_instance_id: str | None
    #: partitions the coordinator handed this member, sorted (topic, partition) pairs
    assignment: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class GroupStrategy:
    """A group's state and chosen strategy, as the coordinator reports them."""

    group_id: str
    #: Stable, PreparingRebalance, CompletingRebalance, Empty or Dead
    state: str
    #: 'consumer' for consumer groups ('' when the group has no members)
    protocol_type: str
    #: the strategy chosen at the last rebalance; None while there is none
    strategy: str | None
    members: tuple[GroupMemberInfo, ...]

    def assignments(self) -> dict[str, frozenset[tuple[str, int]]]:
        """Partitions of each member, by client id (members sharing one are merged)."""
        out: dict[str, set[tuple[str, int]]] = {}
        for m in self.members:
            out.setdefault(m.client_id, set()).update(m.assignment)
        return {k: frozenset(v) for k, v in out.items()}


def _assignment_pairs(raw: Any) -> tuple[tuple[str, int], ...]:
    if not isinstance(raw, Mapping):
        return ()
    pairs: list[tuple[str, int]] = []
    for item in raw.get("assigned_partitions") or ():
        if isinstance(item, Mapping):
            topic, partitions = item.get("topic"), item.get("partitions") or ()
        else:
            topic, partitions = item[0], item[1]
        pairs.extend((str(topic), int(p)) for p in partitions)
    return tuple(sorted(pairs))


def _group_from_description(group_id: str, data: Mapping[str, Any]) -> GroupStrategy:
    members = tuple(
        GroupMemberInfo(
            member_id=str(m.get("member_id", "")),
            client_id=str(m.get("client_id", "")),
            client_host=str(m.get("client_host", "")),
            group_instance_id=m.get("group_instance_id"),
            assignment=_assignment_pairs(m.get("member_assignment")),
        )
        for m in data.get("members") or ()
    )
    protocol = data.get("protocol_data") or data.get("protocol") or None
    return GroupStrategy(
        group_id=group_id,
        state=str(data.get("group_state") or data.get("state") or "Unknown"),
        protocol_type=str(data.get("protocol_type") or ""),
        strategy=str(protocol) if protocol else None,
        members=members,
    )


def describe_group_strategy(
    bootstrap_servers: str | Sequence[str], group_id: str, **admin_config: Any
) -> GroupStrategy:
    """Ask the group's coordinator for its state, chosen strategy and members (bounded).

    ``admin_config`` is passed to kafka-python's ``KafkaAdminClient`` (security
    settings such as ``security_protocol``, ``sasl_*``, ``ssl_*``).
    """
    from kafka import KafkaAdminClient

    servers = (
        bootstrap_servers.split(",") if isinstance(bootstrap_servers, str) else bootstrap_servers
    )
    config: dict[str, Any] = {
        "client_id": "kafka-assignors-negotiation",
        "request_timeout_ms": _DESCRIBE_TIMEOUT_MS,
        "bootstrap_timeout_ms": _DESCRIBE_TIMEOUT_MS,
        **admin_config,
        "bootstrap_servers": list(servers),
    }
    admin = KafkaAdminClient(**config)
    try:
        described = admin.describe_groups([group_id])
    finally:
        with contextlib.suppress(Exception):
            admin.close()
    return _group_from_description(group_id, described.get(group_id) or {})


# ---- the clear error -------------------------------------------------------------------------


class StrategyMismatchError(InconsistentGroupProtocolError):  # type: ignore[misc]
    """The coordinator refused a consumer whose strategies the group does not share.

    A subclass of kafka-python's ``InconsistentGroupProtocolError``, so existing
    handlers still catch it. The message states the broker's rule (a joining member
    must offer at least one strategy every current member offers), the strategies
    this consumer offered, the group's protocol type, current strategy (or that it
    has none yet), state and members as DescribeGroups reports them, and how to join.
    """

    def __init__(
        self,
        group_id: str,
        own: Sequence[str],
        group: GroupStrategy | None,
        problem: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.own_strategies = tuple(own)
        self.group = group
        self.group_strategy = group.strategy if group is not None else None
        super().__init__(self._compose(problem))

    def _compose(self, problem: str | None) -> str:
        own = list(self.own_strategies)
        lines = [
            f"consumer group {self.group_id!r} refused this consumer "
            "(INCONSISTENT_GROUP_PROTOCOL). The broker accepts a joining member only if it "
            "offers at least one strategy that every current member of the group offers too.",
            f"This consumer offered: {own}.",
        ]
        g = self.group
        if g is None:
            lines.append(
                f"The group could not be described ({problem or 'unknown error'}), so its "
                "current strategy is unknown."
            )
            return " ".join(lines)
        members = sorted({m.client_id for m in g.members})
        protocol_type = repr(g.protocol_type) if g.protocol_type else "none"
        strategy = repr(g.strategy) if g.strategy else "none"
        lines.append(
            f"The group, as DescribeGroups reports it: protocol type {protocol_type}, "
            f"current strategy {strategy}, state {g.state}, {len(g.members)} member(s)"
            + (f" {members}." if members else ".")
        )
        if g.protocol_type and g.protocol_type != "consumer":
            lines.append(
                f"{self.group_id!r} is not a consumer group: another application (protocol "
                f"type {g.protocol_type!r}) uses this group id; pick another group_id."
            )
        elif g.strategy is None:
            lines.append(
                "The group has no strategy yet (the coordinator names one only once a "
                "rebalance has completed), so none can be named; none of the strategies this "
                "consumer offered is offered by every current member."
            )
        elif g.strategy in own:
            lines.append(
                f"This consumer does offer {g.strategy!r}: the members changed since the "
                "group chose it and no longer all offer it; describe the group again once "
                "it has settled."
            )
        else:
            lines.append(
                f"Every member of the group's last rebalance offered {g.strategy!r} (it won "
                f"that vote); list it in partition_assignment_strategy after your preferred "
                f"one (e.g. {[*own, g.strategy]}) to join, then migrate the group with "
                "rolling restarts (docs/migration.md)."
            )
        return " ".join(lines)


def _consumer_settings(consumer: Any) -> tuple[str, list[str], dict[str, Any]]:
    config: Mapping[str, Any] = getattr(consumer, "config", None) or {}
    group_id = config.get("group_id")
    if not group_id:
        raise ValueError("the consumer has no group_id: it joins no group")
    own = strategy_names(config.get("partition_assignment_strategy") or ())
    admin = {
        k: v
        for k, v in config.items()
        if v is not None and (k in _ADMIN_KEYS or k.startswith(_ADMIN_PREFIXES))
    }
    return str(group_id), own, admin


def strategy_mismatch_error(
    consumer: Any = None,
    *,
    bootstrap_servers: str | Sequence[str] | None = None,
    group_id: str | None = None,
    strategies: Sequence[Any] | None = None,
    **admin_config: Any,
) -> StrategyMismatchError:
    """Build the clear error for a refused consumer: from a kafka-python ``KafkaConsumer``
    (its own connection and security settings are used), or from explicit settings.

    Describing the group is bounded (about 10 s); if it fails, the error says so.
    """
    if consumer is not None:
        gid, own, admin = _consumer_settings(consumer)
        admin.update(admin_config)
    else:
        if bootstrap_servers is None or group_id is None or strategies is None:
            raise TypeError("give a consumer, or bootstrap_servers, group_id and strategies")
        gid, own, admin = group_id, strategy_names(strategies), dict(admin_config)
        admin["bootstrap_servers"] = bootstrap_servers
    servers = admin.pop("bootstrap_servers")
    try:
        group = describe_group_strategy(servers, gid, **admin)
    except Exception as exc:  # the explanation must never hide the original refusal
        log.warning("could not describe group %s: %s", gid, exc)
        return StrategyMismatchError(gid, own, None, f"{type(exc).__name__}: {exc}")
    return StrategyMismatchError(gid, own, group)


@contextlib.contextmanager
def explain_strategy_mismatch(consumer: Any, **admin_config: Any) -> Iterator[None]:
    """Re-raise kafka-python's ``InconsistentGroupProtocolError`` from the block as a
    :class:`StrategyMismatchError` naming the group's current strategy and the consumer's own
    (see :class:`StrategyMismatchError` for the full message)."""
    try:
        yield
    except StrategyMismatchError:
        raise
    except InconsistentGroupProtocolError as exc:
        raise strategy_mismatch_error(consumer, **admin_config) from exc
