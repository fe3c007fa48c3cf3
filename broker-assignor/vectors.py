"""Test vectors for the broker-side balanced-sticky: the Python core is the reference.

    python broker-assignor/vectors.py            # (re)writes src/test/resources/vectors.json
    python broker-assignor/vectors.py --check    # exit 1 if the committed file is stale
    python broker-assignor/vectors.py --seed 7 --scale 5 --out /tmp/v.json
    mvn -f broker-assignor/pom.xml test -Dvectors=/tmp/v.json   # the Java side on those

Seeded random group histories (unequal and identical subscriptions, static members, topics
that do not exist or have no partitions), each a first assignment and then events: a member
joins, leaves, crashes (comes back under a new member id, with its instance id if static, owning
nothing), two leave at once, a topic gets more partitions, a member changes its
subscription.  Every step is one case: the members (in shuffled order) with what they own
from the previous step, and what :func:`kafka_assignors.core.balanced_sticky` achieves on
it: the sums of squares it minimises (objectives 1 and 2), the total spread, the worst
per-topic spread and the partitions moved.  The Java ``VectorEquivalenceTest`` requires the
same numbers, the worst per-topic spread up to rare ties (the exact assignment may differ
where ties allow).  Topics are named ``t00``, ``t01``...: the Java side gives them ids in
name order, so both sides order topics the same way.  ``unit_tests/test_broker_vectors.py``
checks that the committed file is what the core computes now.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from kafka_assignors.core import GroupSpec, MemberSpec, balanced_sticky
from kafka_assignors.core.metrics import count_spread, moved_partitions, topic_spread

SEED = 848
HISTORIES = 70
STEPS = 5
OUT = Path(__file__).resolve().parent / "src" / "test" / "resources" / "vectors.json"

Owned = dict[str, list[int]]


class _Member:
    def __init__(self, member_id: str, instance_id: str | None, topics: list[str]) -> None:
        self.member_id = member_id
        self.instance_id = instance_id
        self.topics = topics
        self.owned: Owned = {}


def _subscription(rng: random.Random, names: list[str], same: list[str] | None) -> list[str]:
    if same is not None:
        return list(same)
    picked = [t for t in names if rng.random() < 0.6] or [rng.choice(names)]
    if rng.random() < 0.05:
        picked.append("t99")  # a topic the cluster does not have
    return sorted(picked)


class _History:
    """Makes the members of one history: ids unique within it, subscriptions as it goes."""

    def __init__(self, rng: random.Random, names: list[str], same: list[str] | None) -> None:
        self.rng = rng
        self.names = names
        #: everybody's subscription while the group is homogeneous, else None
        self.same = same
        self.serial = 0

    def new_member(self, like: _Member | None = None) -> _Member:
        """A new member, or one that comes back after a crash like ``like``."""
        self.serial += 1
        rng = self.rng
        instance_id: str | None
        if like is not None:
            instance_id = like.instance_id
        elif rng.random() < 0.3:
            instance_id = f"i{rng.randint(0, 99):02d}-{self.serial}"
        else:
            instance_id = None
        member_id = f"m{rng.randint(0, 999):03d}-{self.serial}"
        topics = like.topics if like is not None else _subscription(rng, self.names, self.same)
        return _Member(member_id, instance_id, topics)


def _case(
    name: str, rng: random.Random, counts: dict[str, int], members: list[_Member]
) -> dict[str, Any]:
    specs = [
        MemberSpec(m.member_id, frozenset(m.topics), dict(m.owned), instance_id=m.instance_id)
        for m in members
    ]
    group = GroupSpec.build(specs, counts)
    result = balanced_sticky(group)
    previous = {m.member_id: m.owned for m in members}
    subscriptions = {m.member_id: m.topics for m in members}
    shuffled = list(members)
    rng.shuffle(shuffled)
    case = {
        "name": name,
        "topics": dict(sorted(counts.items())),
        "members": [
            {
                "id": m.member_id,
                "instance_id": m.instance_id,
                "topics": m.topics,
                "owned": {t: sorted(ps) for t, ps in sorted(m.owned.items())},
            }
            for m in shuffled
        ],
        "expected": {
            # objectives 1 and 2 themselves (the spreads follow from them but for ties)
            "load_squares": sum(sum(map(len, got.values())) ** 2 for got in result.values()),
            "topic_squares": sum(len(ps) ** 2 for got in result.values() for ps in got.values()),
            "spread": count_spread(result),
            "topic_spread": topic_spread(result, subscriptions),
            "moved": moved_partitions(previous, result, counts),
        },
    }
    for m in members:
        # sorted, as the cases show them: the core's choice among tied optima depends on the
        # order of topics in a member's claims, and a result's order on the hash seed
        m.owned = {t: sorted(ps) for t, ps in sorted(result[m.member_id].items()) if ps}
    return case


def cases(
    seed: int = SEED, histories: int = HISTORIES, steps: int = STEPS, scale: int = 1
) -> list[dict[str, Any]]:
    """Every case of every history, in order (deterministic for a seed); ``scale`` multiplies
    the members and partitions (the committed file is scale 1)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for h in range(histories):
        names = [f"t{i:02d}" for i in range(rng.randint(1, 6))]
        sizes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16]
        counts = {t: scale * rng.choice(sizes) for t in names}
        same = _subscription(rng, names, None) if h % 3 == 0 else None
        history = _History(rng, names, same)
        members = [history.new_member() for _ in range(rng.randint(1, 8 * scale))]
        out.append(_case(f"h{h:02d}-0-first", rng, counts, members))
        for step in range(1, steps + 1):
            event = rng.choice(["join", "leave", "crash", "two-leave", "partitions", "resubscribe"])
            if event in ("leave", "crash", "two-leave") and len(members) < 2:
                event = "join"
            if event == "join":
                members.append(history.new_member())
            elif event == "leave":
                members.pop(rng.randrange(len(members)))
            elif event == "two-leave":
                for _ in range(min(2, len(members) - 1)):
                    members.pop(rng.randrange(len(members)))
            elif event == "crash":
                i = rng.randrange(len(members))
                members[i] = history.new_member(like=members[i])
            elif event == "partitions":
                t = rng.choice(names)
                counts[t] += rng.randint(1, 6)
            else:
                m = rng.choice(members)
                m.topics = _subscription(rng, names, None)
                history.same = None  # the group is heterogeneous from now on
            out.append(_case(f"h{h:02d}-{step}-{event}", rng, counts, members))
    return out


def render(all_cases: list[dict[str, Any]]) -> str:
    """One case per line (small diffs when the core changes)."""
    lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in all_cases)
    head = json.dumps({"generator": "broker-assignor/vectors.py", "seed": SEED})[:-1]
    return f'{head}, "cases": [\n{lines}\n]}}\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=SEED, help="another set (not committed)")
    parser.add_argument("--scale", type=int, default=1, help="more members and partitions")
    args = parser.parse_args(argv)
    text = render(cases(args.seed, scale=args.scale))
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run python broker-assignor/vectors.py", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {len(json.loads(text)['cases'])} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
