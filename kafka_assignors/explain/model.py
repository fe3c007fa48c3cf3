"""What ``explain`` shows about a group, built from plain data (no I/O, unit-testable).

Inputs are what the admin client returns: the DescribeGroups entry (members with
their subscription and assignment, decoded by kafka-python when the protocol
type is ``consumer``), the group's committed offsets and the log end offsets.
"""

from __future__ import annotations

import codecs
import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from ..protocol.user_data import decode_user_data

Partition = tuple[str, int]
#: Raw user data longer than this is shown truncated (hex characters).
RAW_HEX_LIMIT = 64


@dataclass
class MemberReport:
    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    rack: str | None
    topics: list[str]
    assignment: dict[str, list[int]]
    subscription_user_data: dict[str, Any] | None
    assignment_user_data: dict[str, Any] | None
    partitions: int = 0
    lag: dict[str, int | None] = field(default_factory=dict)
    total_lag: int = 0
    # consumer-protocol groups only (ConsumerGroupDescribe); left out of classic reports
    member_epoch: int | None = None
    target_assignment: dict[str, list[int]] | None = None
    topic_regex: str | None = None
    member_type: str | None = None


@dataclass
class GroupReport:
    group: str
    state: str
    protocol_type: str
    strategy: str | None
    #: The generation of the current assignment: the one our assignors write in each
    #: member's assignment user data, else the newest one members' subscriptions carry
    #: (v1+ subscriptions: the generation of the partitions they owned), else None.
    generation: int | None
    #: DescribeGroups does not name the leader; our assignors write the leader's member id
    #: in each member's assignment user data.  None when no member carries it.
    leader: str | None
    members: list[MemberReport]
    count_imbalance: int
    lag_imbalance: float | None
    idle_members: int
    total_lag: int
    unassigned: list[str]
    notes: list[str] = field(default_factory=list)
    #: Where ``generation`` comes from: "assignment" (user data), "subscriptions" or None.
    generation_source: str | None = None
    #: Where ``leader`` comes from: "assignment" (user data) or None (not reported).
    leader_source: str | None = None
    #: "classic" (DescribeGroups) or "consumer" (KIP-848, ConsumerGroupDescribe)
    group_type: str = "classic"
    #: consumer-protocol groups only: the group epoch and the target assignment's epoch
    group_epoch: int | None = None
    assignment_epoch: int | None = None
    #: classic groups: the last rebalance's figures (moved, newly_owned, count_spread,
    #: topic_spread, members_with_claims, members) from the members' claims at the join
    #: against what they hold now; None without decoded members (see ``explain.quality``)
    last_rebalance: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.group_type != "classic":
            out.pop("last_rebalance")
        if self.group_type == "classic":  # the classic report keeps its shape
            for key in _CONSUMER_GROUP_KEYS:
                out.pop(key)
            for member in out["members"]:
                for key in _CONSUMER_MEMBER_KEYS:
                    member.pop(key)
        return out


_CONSUMER_GROUP_KEYS = ("group_type", "group_epoch", "assignment_epoch")
#: (consumer-protocol groups have no claims at a join: the key is left out of their JSON)
_CONSUMER_MEMBER_KEYS = ("member_epoch", "target_assignment", "topic_regex", "member_type")


def as_bytes(value: Any) -> bytes:
    """Bytes from the wire, or from kafka-python's JSON-friendly form of them.

    ``describe_groups`` turns bytes fields into text decoded with
    ``errors="backslashreplace"``; this undoes it (``\\xNN`` back to the byte).
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    text = str(value)
    data = text.encode("utf-8")
    if "\\" in text:
        with contextlib.suppress(ValueError):
            data = codecs.escape_decode(data)[0]
    return data


def user_data_view(raw: Any) -> dict[str, Any] | None:
    """Our user data decoded (``{"decoded": {...}}``), anything else as hex (``{"raw": ...}``)."""
    if raw is None or raw in (b"", ""):
        return None
    decoded = decode_user_data(str(raw).encode("utf-8") if isinstance(raw, str) else raw)
    if decoded is None:
        decoded = decode_user_data(as_bytes(raw))
    if decoded is not None:
        return {"decoded": decoded}
    data = as_bytes(raw)
    text = data.hex()
    if len(text) > RAW_HEX_LIMIT:
        text = text[:RAW_HEX_LIMIT] + f"... ({len(data)} bytes)"
    return {"raw": text}


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def _decoded(value: Any) -> bool:
    """A decoded subscription/assignment (object or dict), not raw bytes or text."""
    return value is not None and not isinstance(value, bytes | bytearray | memoryview | str)


def _pairs(value: Any) -> dict[str, list[int]]:
    """``[(topic, [partitions])...]`` (or dicts of it) as ``{topic: sorted partitions}``."""
    out: dict[str, list[int]] = {}
    for item in value or ():
        if isinstance(item, Mapping):
            topic = _field(item, "topic", "name")
            parts = _field(item, "partitions")
        else:
            topic, parts = item[0], item[1]
        if parts:
            out.setdefault(str(topic), []).extend(int(p) for p in parts)
    return {t: sorted(set(ps)) for t, ps in sorted(out.items())}


def member_report(
    member: Mapping[str, Any], lag_of: Mapping[Partition, int | None]
) -> MemberReport:
    """One member of a DescribeGroups entry (metadata/assignment decoded or raw bytes)."""
    meta = member.get("member_metadata")
    assignment = member.get("member_assignment")
    decoded_meta = _decoded(meta)
    decoded_assign = _decoded(assignment)
    topics = sorted(str(t) for t in (_field(meta, "topics") or ())) if decoded_meta else []
    parts = (
        _pairs(_field(assignment, "assigned_partitions", "assignment")) if decoded_assign else {}
    )
    rack = _field(meta, "rack_id") if decoded_meta else None
    report = MemberReport(
        member_id=str(member.get("member_id", "")),
        client_id=str(member.get("client_id", "")),
        host=str(member.get("client_host", "")).lstrip("/"),
        instance_id=member.get("group_instance_id"),
        rack=str(rack) if rack else None,
        topics=topics,
        assignment=parts,
        subscription_user_data=user_data_view(
            _field(meta, "user_data") if decoded_meta else meta
        ),
        assignment_user_data=user_data_view(
            _field(assignment, "user_data") if decoded_assign else assignment
        ),
    )
    return with_lag(report, lag_of)


def with_lag(report: MemberReport, lag_of: Mapping[Partition, int | None]) -> MemberReport:
    """``report`` with its partition count and the lag of each partition it holds."""
    report.partitions = sum(len(ps) for ps in report.assignment.values())
    for topic, ps in report.assignment.items():
        for p in ps:
            lag = lag_of.get((topic, p))
            report.lag[f"{topic}-{p}"] = lag
            report.total_lag += lag or 0
    return report


def lag_by_partition(
    committed: Mapping[Partition, int], end_offsets: Mapping[Partition, int]
) -> dict[Partition, int | None]:
    """End offset minus committed offset (None without a commit); never negative."""
    out: dict[Partition, int | None] = {}
    for tp, end in end_offsets.items():
        done = committed.get(tp)
        out[tp] = None if done is None or done < 0 else max(int(end) - int(done), 0)
    return out


def imbalance(counts: list[int], lags: list[int]) -> tuple[int, float | None, int]:
    """(max - min partitions, heaviest lag / mean lag or None when no lag, idle members)."""
    if not counts:
        return 0, None, 0
    spread = max(counts) - min(counts)
    mean = sum(lags) / len(lags) if lags else 0.0
    lag_ratio = round(max(lags) / mean, 3) if mean > 0 else None
    return spread, lag_ratio, sum(1 for c in counts if c == 0)


class Balance(NamedTuple):
    """The balance figures of a report (the ``GroupReport`` fields of the same names)."""

    count_imbalance: int
    lag_imbalance: float | None
    idle_members: int
    total_lag: int
    unassigned: list[str]


MemberBuilder = Callable[[Mapping[str, Any], Mapping[Partition, int | None]], MemberReport]


def members_and_balance(
    raw_members: Iterable[Mapping[str, Any]] | None,
    build: MemberBuilder,
    committed: Mapping[Partition, int],
    end_offsets: Mapping[Partition, int],
) -> tuple[list[MemberReport], Balance]:
    """The members (built by ``build``, sorted by client id) and the group's balance."""
    lag_of = lag_by_partition(committed, end_offsets)
    members = [build(m, lag_of) for m in raw_members or ()]
    members.sort(key=lambda m: (m.client_id, m.member_id))
    spread, lag_ratio, idle = imbalance(
        [m.partitions for m in members], [m.total_lag for m in members]
    )
    owned = {(t, p) for m in members for t, ps in m.assignment.items() for p in ps}
    subscribed = {t for m in members for t in m.topics}
    unassigned = sorted(
        f"{t}-{p}" for t, p in end_offsets if t in subscribed and (t, p) not in owned
    )
    total_lag = sum(v or 0 for v in lag_of.values())
    return members, Balance(spread, lag_ratio, idle, total_lag, unassigned)


def group_report(
    group_id: str,
    description: Mapping[str, Any],
    committed: Mapping[Partition, int],
    end_offsets: Mapping[Partition, int],
) -> GroupReport:
    """The whole picture: members, their lag, and balance figures."""
    members, balance = members_and_balance(
        description.get("members"), member_report, committed, end_offsets
    )
    generations = [
        int(g)
        for m in description.get("members") or ()
        if (g := _field(m.get("member_metadata"), "generation_id")) is not None and int(g) >= 0
    ]
    notes: list[str] = []
    leader, assigned_generation = _leader_and_generation(members, notes)
    subscribed_generation = max(generations) if generations else None
    if (
        assigned_generation is not None
        and subscribed_generation is not None
        and subscribed_generation > assigned_generation
    ):
        notes.append(
            f"members' subscriptions carry generation {subscribed_generation}, newer than the "
            f"assignment's {assigned_generation}: the assignment is stale (a rebalance is under "
            "way or did not complete)"
        )
    if leader is not None and leader not in {m.member_id for m in members}:
        notes.append(f"the leader {leader} is no longer a member of the group")
    protocol_type = str(description.get("protocol_type") or "")
    if members and protocol_type not in ("consumer", ""):
        notes.append(f"protocol type {protocol_type!r}: member metadata shown raw")
    if not members:
        notes.append("the group has no active members (offsets only)")
    return GroupReport(
        group=group_id,
        state=str(description.get("group_state") or description.get("state") or "Unknown"),
        protocol_type=protocol_type,
        strategy=(description.get("protocol_data") or description.get("protocol")) or None,
        generation=assigned_generation
        if assigned_generation is not None
        else subscribed_generation,
        generation_source="assignment"
        if assigned_generation is not None
        else "subscriptions"
        if subscribed_generation is not None
        else None,
        leader=leader,
        leader_source="assignment" if leader is not None else None,
        members=members,
        notes=notes,
        **balance._asdict(),
    )


def _leader_and_generation(
    members: list[MemberReport], notes: list[str]
) -> tuple[str | None, int | None]:
    """The leader and generation our assignors write in each member's assignment user data.

    Every member of one assignment carries the same pair; when they differ (members
    holding assignments of different generations, mid-rebalance) the newest generation's
    leader wins and a note says so.
    """
    pairs: dict[str, tuple[str | None, int | None]] = {}
    for m in members:
        decoded = (m.assignment_user_data or {}).get("decoded")
        if not isinstance(decoded, Mapping):
            continue
        leader = decoded.get("leader")
        generation = decoded.get("generation")
        gen = int(generation) if isinstance(generation, int) and generation >= 0 else None
        if leader is not None or gen is not None:
            pairs[m.member_id] = (str(leader) if leader is not None else None, gen)
    if not pairs:
        return None, None
    generations = sorted({g for _, g in pairs.values() if g is not None})
    leaders = sorted({ld for ld, _ in pairs.values() if ld is not None})
    if len(generations) > 1:
        notes.append(
            "members hold assignments of different generations "
            f"({', '.join(map(str, generations))}): a rebalance is under way or did not complete"
        )
    newest = generations[-1] if generations else None
    current = [ld for ld, g in pairs.values() if ld is not None and g == newest]
    leader = current[0] if current else (leaders[0] if leaders else None)
    named = sorted(set(current or leaders))
    if len(named) > 1:
        notes.append(f"members name different leaders: {', '.join(named)}")
    missing = [mid for mid in (m.member_id for m in members) if mid not in pairs]
    if missing and len(missing) < len(members):
        notes.append(
            f"{len(missing)} member(s) carry no leader/generation in their assignment user data"
        )
    return leader, newest
