"""Per-topic spread and moved partitions on the public shapes where sticky assignors pile a
topic onto one member, ours against kafka-python's ``sticky``, ``roundrobin`` and ``range``.

    python -m benchmarks.per_topic_spread              # writes results/per_topic_spread.{md,json}
    python -m benchmarks.per_topic_spread --out DIR

Every assignor runs through the simulator, i.e. as kafka-python's group leader
would: one assignor instance per member, subscriptions and assignments through
``encode()``/``decode()``, cooperative rounds until nothing is withheld.
"Per-topic spread" is the worst over topics of the most minus the fewest
partitions of that topic held by one member, the worst over every rebalance of
the shape; "moved" counts partitions taken from their previous owner over the
shape's events (the first assignment moves nothing).

A second figure runs seeded random groups (identical subscriptions, 2-7 topics of
1-24 partitions, 2-9 members, joins and leaves) and compares, at every event and
from the same previous assignment, the partitions ``balanced-sticky`` moves with
the fewest any total-balanced assignment needs (``per_topic_balance=False`` is
exactly that minimum): what even topics cost.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kafka

from kafka_assignors import BalancedStickyAssignor
from kafka_assignors.core.balanced_sticky import balanced_sticky
from kafka_assignors.core.metrics import moved_partitions, topic_spread
from kafka_assignors.core.model import GroupSpec, MemberSpec
from kafka_assignors.simulator import Event, Scenario, SimMember, run_scenario

RESULTS = Path(__file__).parent / "results"

#: ``balanced-sticky`` with the old tie-breaking (what version 0.1 did), by import path
OLD_TIE_BREAKING = BalancedStickyAssignor(per_topic_balance=False)
ASSIGNORS = (
    ("balanced-sticky", "balanced-sticky"),
    ("cooperative-balanced-sticky", "cooperative-balanced-sticky"),
    ("balanced-sticky, per_topic_balance=False", "benchmarks.per_topic_spread:OLD_TIE_BREAKING"),
    ("sticky (kafka-python)", "sticky"),
    ("roundrobin (kafka-python)", "roundrobin"),
    ("range (kafka-python)", "range"),
)


@dataclass(frozen=True)
class Shape:
    name: str
    source: str
    counts: dict[str, int]
    members: int
    #: events after the first assignment: ("join" | "leave", how many)
    events: tuple[tuple[str, int], ...]


SHAPES = (
    Shape("2 topics x 18, 8 members, one joins", "librdkafka #4044",
          {"t0": 18, "t1": 18}, 8, (("join", 1),)),
    Shape("24 / 24 / 96, one member, one joins", "franz-go #795",
          {"T1": 24, "T2": 24, "T3": 96}, 1, (("join", 1),)),
    Shape("2 topics x 4, 4 members, one leaves, one joins", "issue 16",
          {"t0": 4, "t1": 4}, 4, (("leave", 1), ("join", 1))),
    Shape("10 topics x 12, 6 members, 2 leave, 2 join", "issue 16",
          {f"t{i}": 12 for i in range(10)}, 6, (("leave", 2), ("join", 2))),
)


def scenario(shape: Shape) -> Scenario:
    topics = tuple(sorted(shape.counts))
    names = [f"c{i:02d}" for i in range(shape.members)]
    next_id = shape.members
    events = []
    for kind, n in shape.events:
        if kind == "leave":
            # the members in the middle leave (neither the leader nor the newest)
            mid = len(names) // 2
            gone, names = names[mid - n // 2 : mid - n // 2 + n], names[: mid - n // 2] + names[
                mid - n // 2 + n :
            ]
            events.append(Event("leave", leaves=tuple(gone)))
        else:
            new = [f"c{next_id + i:02d}" for i in range(n)]
            next_id += n
            names += new
            events.append(Event("join", joins=tuple(SimMember(m, topics) for m in new)))
    first = tuple(SimMember(f"c{i:02d}", topics) for i in range(shape.members))
    return Scenario(shape.name, shape.counts, first, events=tuple(events))


def measure(shape: Shape, assignor: str) -> dict[str, Any]:
    steps = run_scenario(scenario(shape), assignor)
    failed = [s.error for s in steps if s.error]
    if failed:
        return {"error": failed[0]}
    return {
        "topic_spread": max(s.topic_spread or 0 for s in steps),
        "final_topic_spread": steps[-1].topic_spread,
        "spread": max(s.count_imbalance or 0 for s in steps),
        "moved": sum(s.moved or 0 for s in steps[1:]),
    }


def random_groups(seed: int, groups: int) -> dict[str, int]:
    """Moves of balanced-sticky against the total-balance minimum over random histories:
    at every event both start from balanced-sticky's previous assignment (core level)."""
    rnd = random.Random(seed)
    ours = minimum = rebalances = worst = 0
    for _g in range(groups):
        counts = {f"t{i}": rnd.randint(1, 24) for i in range(rnd.randint(2, 7))}
        topics = frozenset(counts)
        owned: dict[str, dict[str, list[int]]] = {f"m{i}": {} for i in range(rnd.randint(2, 9))}
        next_id = len(owned)
        for step in range(rnd.randint(2, 5)):
            if step:
                if len(owned) > 2 and rnd.random() < 0.5:
                    for m in rnd.sample(sorted(owned), rnd.randint(1, min(2, len(owned) - 1))):
                        del owned[m]
                else:
                    for _ in range(rnd.randint(1, 2)):
                        owned[f"m{next_id}"] = {}
                        next_id += 1
            group = GroupSpec.build(
                [MemberSpec(m, topics, o, step) for m, o in owned.items()], counts
            )
            new = balanced_sticky(group)
            if step:
                old = balanced_sticky(group, per_topic=False)
                ours += moved_partitions(owned, new)
                minimum += moved_partitions(owned, old)
                rebalances += 1
            worst = max(worst, topic_spread(new))
            owned = {m: new[m] for m in owned}
    return {"groups": groups, "rebalances": rebalances, "moved": ours,
            "moved_total_balance_only": minimum, "worst_topic_spread": worst}


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def markdown(doc: dict[str, Any]) -> str:
    names = [label for label, _ in ASSIGNORS]
    lines = [
        "# Per-topic spread on the public shapes",
        "",
        f"`python -m benchmarks.per_topic_spread` — {doc['date']}, commit {doc['commit']}, "
        f"kafka-python {doc['kafka_python']}, CPython {doc['python']}.",
        "",
        "Worst per-topic spread over every rebalance of the shape (most minus fewest of one "
        "topic's partitions held by a member; 0 or 1 is even) / partitions moved over the "
        "shape's events. Every assignor ran as kafka-python's leader would (wire round trip, "
        "cooperative rounds).",
        "",
        "| shape | source | " + " | ".join(names) + " |",
        "|---|---|" + "--:|" * len(names),
    ]
    for shape in SHAPES:
        cells = []
        for label in names:
            r = doc["shapes"][shape.name][label]
            cells.append("error" if "error" in r else f"{r['topic_spread']} / {r['moved']}")
        lines.append(f"| {shape.name} | {shape.source} | " + " | ".join(cells) + " |")
    rg = doc["random"]
    overhead = rg["moved"] / rg["moved_total_balance_only"] - 1 if rg[
        "moved_total_balance_only"] else 0.0
    lines += [
        "",
        f"Random groups (seed {doc['seed']}): {rg['groups']} histories, {rg['rebalances']} "
        f"rebalances after the first: balanced-sticky moved {rg['moved']} partitions, the "
        f"fewest for total balance alone from the same assignments is "
        f"{rg['moved_total_balance_only']} "
        f"({overhead:+.1%}); worst per-topic spread over all their rebalances: "
        f"{rg['worst_topic_spread']}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--groups", type=int, default=200)
    args = p.parse_args(argv)
    doc: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "kafka_python": kafka.__version__,
        "python": sys.version.split()[0],
        "seed": args.seed,
        "shapes": {},
    }
    for shape in SHAPES:
        doc["shapes"][shape.name] = {label: measure(shape, a) for label, a in ASSIGNORS}
        print(shape.name, {k: v.get("topic_spread", v.get("error"))
                           for k, v in doc["shapes"][shape.name].items()}, flush=True)
    doc["random"] = random_groups(args.seed, args.groups)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "per_topic_spread.json").write_text(json.dumps(doc, indent=2) + "\n")
    (args.out / "per_topic_spread.md").write_text(markdown(doc))
    print(markdown(doc))


if __name__ == "__main__":
    main()
