"""Reading a group back from the coordinator, and the textbook layouts of range/roundrobin."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka import KafkaProducer

from kafka_assignors.embedded import GroupRunner
from kafka_assignors.embedded.admin import admin_client
from kafka_assignors.embedded.strategies import wire_name
from kafka_assignors.negotiation import GroupStrategy, describe_group_strategy

TP = tuple[str, int]
Layout = dict[str, frozenset[TP]]


def wait_described(
    bootstrap: str,
    group_id: str,
    clients: Iterable[str],
    partitions: Iterable[TP],
    *,
    timeout: float,
    settle: float = 2.0,
) -> GroupStrategy:
    """Wait until the coordinator reports the group Stable with exactly ``clients`` (client
    ids) as members, every partition assigned exactly once, unchanged for ``settle`` s."""
    want_clients = sorted(clients)
    want = frozenset(partitions)
    deadline = time.monotonic() + timeout
    since: float | None = None
    last_key: Any = None
    problem = "not described yet"
    while True:
        try:
            group = describe_group_strategy(bootstrap, group_id)
        except Exception as exc:  # coordinator moving
            group, problem = None, f"{type(exc).__name__}: {exc}"
        if group is not None:
            owned = [tp for m in group.members for tp in m.assignment]
            clients_now = sorted(m.client_id for m in group.members)
            if group.state != "Stable":
                problem = f"state {group.state}"
            elif clients_now != want_clients:
                problem = f"members {clients_now}, want {want_clients}"
            elif len(owned) != len(set(owned)) or set(owned) != want:
                problem = f"assignment does not cover {len(want)} partitions once: {group}"
            else:
                problem = ""
        now = time.monotonic()
        if not problem and group is not None:
            key = (group.strategy, tuple(sorted((m.member_id, m.assignment)
                                                for m in group.members)))
            if key != last_key:
                last_key, since = key, now
            if since is not None and now - since >= settle:
                return group
        else:
            last_key = since = None
        if now >= deadline:
            raise TimeoutError(f"group {group_id} not stable after {timeout:.0f} s: {problem}")
        time.sleep(0.5)


def strategy_lists(group: GroupRunner) -> dict[str, list[str]]:
    """Wire names each live kafka-python member lists, by member name."""
    return {
        v.name: [wire_name(s) for s in v.config.strategies]
        for v in group.members()
        if v.alive and not v.stopping
    }


def range_layout(member_ids: Mapping[str, str], topic: str, partitions: int) -> Layout:
    """What ``range`` gives (members sorted by member id, the first ones get one extra)."""
    ordered = sorted(member_ids, key=lambda name: member_ids[name])
    base, extra = divmod(partitions, len(ordered))
    out: Layout = {}
    start = 0
    for i, name in enumerate(ordered):
        n = base + (1 if i < extra else 0)
        out[name] = frozenset((topic, p) for p in range(start, start + n))
        start += n
    return out


def roundrobin_layout(member_ids: Mapping[str, str], topic: str, partitions: int) -> Layout:
    """What ``roundrobin`` gives for one topic (partition i to the i-th member by id, cyclic)."""
    ordered = sorted(member_ids, key=lambda name: member_ids[name])
    return {
        name: frozenset((topic, p) for p in range(partitions) if p % len(ordered) == i)
        for i, name in enumerate(ordered)
    }


def produce_probes(bootstrap: str, topic: str, partitions: int, tag: str) -> dict[str, int]:
    """One message per partition, value ``<tag>-<partition>``; returns value -> partition."""
    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all")
    try:
        values = {f"{tag}-{p}": p for p in range(partitions)}
        for value, p in values.items():
            producer.send(topic, value=value.encode(), partition=p).get(timeout=30)
    finally:
        producer.close(timeout=10)
    return values


def readers_of(values: Iterable[str], records: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Which members read each value (a member reading it twice is listed twice)."""
    out: dict[str, list[str]] = {v: [] for v in values}
    for r in records:
        value = r.get("value")
        if value in out:
            out[str(value)].append(str(r["member"]))
    return out


_ASSIGNED_LINE = re.compile(r"^(\S+ \S+) \S+ kafka_assignors INFO (\S+): assigned", re.M)


def leader_lines(group: GroupRunner, index: int) -> list[str]:
    """Timestamps of the assignments member ``index`` computed as leader, oldest first (our
    assignors log one INFO line each; the member must run with log_level='INFO')."""
    return [m[1] for m in _ASSIGNED_LINE.finditer(group.member_log(index))]


def coordinator_of(bootstrap: str, group_id: str) -> int:
    """Node id of the group's coordinator (asks with a fresh client: no cached answer)."""
    with admin_client(bootstrap) as admin:
        return int(admin._manager.run(admin._find_coordinator_id, group_id))


def live_names(group: GroupRunner) -> Sequence[str]:
    return [v.name for v in group.members() if v.alive and not v.stopping]


def member_modes(bootstrap: str, group_id: str) -> dict[str, str | None]:
    """The rebalance protocol each member announced in our assignors' user data ('eager' or
    'cooperative'), by client id; None for members whose user data is not ours."""
    from kafka_assignors.protocol.user_data import decode_user_data

    with admin_client(bootstrap) as admin:
        described = admin.describe_groups([group_id])[group_id]
    out: dict[str, str | None] = {}
    for m in described.get("members") or ():
        metadata = m.get("member_metadata")
        raw = getattr(metadata, "user_data", None)
        if isinstance(metadata, Mapping):
            raw = metadata.get("user_data")
        if isinstance(raw, str):
            raw = raw.encode("latin-1", "replace")
        fields = decode_user_data(raw) or {}
        mode = fields.get("mode")
        out[str(m["client_id"])] = str(mode) if mode is not None else None
    return out
