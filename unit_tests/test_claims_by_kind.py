"""Claims read kind by kind (members with the same claimed topics in the same order under one
subscription, issue 41) are exactly what the member-by-member resolution gives: the same
claims, dict keys in the same order, the same claimed partitions, for any input, including
contested, stale, invalid, empty, tuple and unsubscribed claims."""

from __future__ import annotations

import importlib
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_assignors.core import claims as claims_module
from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.claims import Claims, resolve_claims
from kafka_assignors.core.model import GroupSpec, MemberSpec, TopicSpec
from kafka_assignors.core.uniform import HeldCounts, plan_uniform

# (the package exports a function of the module's name)
balanced_sticky_module = importlib.import_module("kafka_assignors.core.balanced_sticky")
TOPICS = ["a", "b", "c", "d", "e"]


@st.composite
def groups(draw: st.DrawFn) -> tuple[list[MemberSpec], list[frozenset[str]], dict[str, int]]:
    """Members built from a few topic orders and subscriptions (so kinds repeat), each list
    one partition (the usual case) or anything: duplicates, out of range, empty, a tuple."""
    counts = {t: draw(st.integers(1, 30)) for t in TOPICS}
    orders = draw(st.lists(st.permutations(TOPICS).flatmap(
        lambda p: st.integers(1, len(p)).map(lambda k: p[:k])), min_size=1, max_size=3))
    subscriptions = [frozenset(TOPICS), frozenset(TOPICS[:3]), frozenset(TOPICS[1:])]
    usual = draw(st.booleans())  # disjoint single claims on subscribed topics, in range
    taken: set[tuple[str, int]] = set()
    members: list[MemberSpec] = []
    subs: list[frozenset[str]] = []
    for i in range(draw(st.integers(1, 14))):
        order = draw(st.sampled_from(orders))
        owned: dict[str, object] = {}
        if draw(st.integers(0, 5)):  # (sometimes a member owns nothing)
            for t in order:
                if usual:
                    free = [p for p in range(counts[t]) if (t, p) not in taken]
                    ps: object = free[:draw(st.sampled_from([1, 1, 1, 2]))] if free else []
                    taken.update((t, p) for p in ps)  # type: ignore[attr-defined]
                else:
                    ps = draw(st.lists(st.integers(-1, 9), max_size=3))
                    if draw(st.integers(0, 9)) == 0:
                        ps = tuple(ps)
                owned[t] = ps
        sub = frozenset(TOPICS) if usual else draw(st.sampled_from(subscriptions))
        members.append(MemberSpec(f"m{i:02d}", sub, owned, draw(st.integers(0, 2))))  # type: ignore[arg-type]
        subs.append(sub)
    return members, subs, counts


def _shape(c: Claims) -> tuple[object, ...]:
    return ([list(o.items()) for o in c.owned], list(c.claimed.items()), c.dropped_stale,
            c.dropped_conflict, c.dropped_invalid)


@settings(max_examples=800, deadline=None)
@given(groups())
def test_claims_by_kind_equal_member_by_member(group) -> None:  # type: ignore[no-untyped-def]
    members, subs, counts = group
    with mock.patch.object(claims_module, "_whole_claims", lambda *_args: None):
        want = resolve_claims(members, subs, counts)
    # (by kind however small the kinds: a few members here, where the leader asks for 8 a kind)
    with mock.patch.object(claims_module, "_MEMBERS_PER_KIND", 1):
        got = resolve_claims(members, subs, counts)
    assert _shape(got) == _shape(want)
    assert _shape(resolve_claims(members, subs, counts)) == _shape(want)
    for mine, theirs in zip(got.owned, want.owned, strict=True):
        assert all(ps.__class__ is list for ps in mine.values())
        assert [ps.__class__ for ps in mine.values()] == [ps.__class__ for ps in theirs.values()]


def test_the_kind_path_is_taken_after_a_leave() -> None:
    """Many members with one kind of claims: decided kind by kind (not member by member)."""
    topics = frozenset(TOPICS)
    counts = dict.fromkeys(TOPICS, 10)
    members = [MemberSpec(f"m{i}", topics, {t: [i] for t in TOPICS}, 1) for i in range(9)]
    fast = claims_module._whole_claims(members, [topics] * 9, counts)
    assert fast is not None
    assert fast.claimed == {t: set(range(9)) for t in TOPICS}
    assert all(fast.owned[i] is members[i].owned for i in range(9))


@settings(max_examples=800, deadline=None)
@given(groups(), st.sampled_from([0, 1, 2]))
def test_uniform_plan_by_kind_equals_member_by_member(group, sub) -> None:  # type: ignore[no-untyped-def]
    """The uniform plan read kind by kind (the claims' kinds) decides what it decides from
    each member's lists: for the members of one subscription, kinds of others beside."""
    members, subs, counts = group
    with mock.patch.object(claims_module, "_MEMBERS_PER_KIND", 1):
        claims = resolve_claims(members, subs, counts)
    wanted = [frozenset(TOPICS), frozenset(TOPICS[:3]), frozenset(TOPICS[1:])][sub]
    ids = [i for i, s in enumerate(subs) if s == wanted]
    if not ids:
        return
    topics = sorted(wanted)
    want = plan_uniform(ids, topics, counts, HeldCounts(claims.owned), claims.owned)
    got = plan_uniform(ids, topics, counts, HeldCounts(claims.owned), claims.owned, claims.kinds)
    assert got == want


@settings(max_examples=400, deadline=None)
@given(groups())
def test_balanced_sticky_with_kinds_equals_without(group) -> None:  # type: ignore[no-untyped-def]
    members, _subs, counts = group
    spec = GroupSpec(tuple(members), {t: TopicSpec(t, n) for t, n in counts.items()})

    def without_kinds(*args: object) -> object:
        return plan_uniform(*args[:5])  # type: ignore[arg-type]

    with mock.patch.object(balanced_sticky_module, "plan_uniform", without_kinds):
        want = balanced_sticky(spec)
    with mock.patch.object(claims_module, "_MEMBERS_PER_KIND", 1):
        got = balanced_sticky(spec)
    assert got == want
    assert {m: list(by_t.items()) for m, by_t in got.items()} == {
        m: list(by_t.items()) for m, by_t in want.items()}


def test_kinds_are_read_after_a_leave() -> None:
    topics = frozenset(TOPICS)
    counts = dict.fromkeys(TOPICS, 20)
    members = [MemberSpec(f"m{i}", topics, {t: [i] for t in TOPICS}, 1) for i in range(9)]
    members += [MemberSpec(f"n{i}", topics, {t: [10 + i] for t in reversed(TOPICS)}, 1)
                for i in range(9)]
    claims = resolve_claims(members, [topics] * 18, counts)
    assert claims.kinds == [(tuple(TOPICS), list(range(9)), True),
                            (tuple(TOPICS), list(range(9, 18)), True)]


@st.composite
def after_leaves(draw: st.DrawFn) -> tuple[list[MemberSpec], list[frozenset[str]], dict[str, int]]:
    """Groups as after a leave, where the uniform plan reads kinds: topics with fewer
    partitions than members (or fewer than twice as many), each member claiming one free
    partition of each topic in one of a few orders; sometimes two, none, another
    subscription, a duplicate or an out-of-range claim."""
    m = draw(st.integers(2, 14))
    few = draw(st.booleans())
    counts = {t: draw(st.integers(1, m - 1) if few else st.integers(m, 2 * m - 1))
              for t in TOPICS}
    orders = draw(st.lists(st.permutations(TOPICS).flatmap(
        lambda p: st.integers(1, len(p)).map(lambda k: tuple(p[:k]))), min_size=1, max_size=3))
    free = {t: list(range(n)) for t, n in counts.items()}
    members: list[MemberSpec] = []
    subs: list[frozenset[str]] = []
    for i in range(m):
        order = draw(st.sampled_from(orders))
        sub = frozenset(TOPICS) if draw(st.integers(0, 7)) else frozenset(TOPICS[:3])
        owned: dict[str, list[int]] = {}
        odd = draw(st.integers(0, 11))
        for t in order:
            take = 2 if odd == 1 else 1
            ps, free[t] = free[t][:take], free[t][take:]
            if ps or odd == 2:
                owned[t] = ps
        if odd == 3 and owned:
            next(iter(owned.values())).append(draw(st.sampled_from([0, 99, -1])))
        if odd == 4:
            owned = {}
        members.append(MemberSpec(f"m{i:02d}", sub, owned, draw(st.sampled_from([1, 1, 1, 0]))))
        subs.append(sub)
    return members, subs, counts


@settings(max_examples=1500, deadline=None)
@given(after_leaves())
def test_uniform_plan_by_kind_after_a_leave(group) -> None:  # type: ignore[no-untyped-def]
    members, subs, counts = group
    with mock.patch.object(claims_module, "_MEMBERS_PER_KIND", 1):
        claims = resolve_claims(members, subs, counts)
    for wanted in set(subs):
        ids = [i for i, s in enumerate(subs) if s == wanted]
        topics = sorted(wanted)
        want = plan_uniform(ids, topics, counts, HeldCounts(claims.owned), claims.owned)
        got = plan_uniform(ids, topics, counts, HeldCounts(claims.owned), claims.owned,
                           claims.kinds)
        assert got == want
    spec = GroupSpec(tuple(members), {t: TopicSpec(t, n) for t, n in counts.items()})

    def without_kinds(*args: object) -> object:
        return plan_uniform(*args[:5])  # type: ignore[arg-type]

    with mock.patch.object(balanced_sticky_module, "plan_uniform", without_kinds):
        want_all = balanced_sticky(spec)
    with mock.patch.object(claims_module, "_MEMBERS_PER_KIND", 1):
        got_all = balanced_sticky(spec)
    assert {m: list(by_t.items()) for m, by_t in got_all.items()} == {
        m: list(by_t.items()) for m, by_t in want_all.items()}
