"""``kafka-assignors simulate``: any assignor on a described or measured group, no Spark.

The quick what-if before the pipeline's big sweep.  The group is described on
the command line (``--topics orders:12,payments:6 --members 4``), in a small
YAML/JSON file (``--file``), or measured (``--profile reports/profile/profile.json``
gives partition counts and weights).  Every assignor runs exactly as a group
leader would (wire round trip, cooperative rounds); optional ``--churn`` steps
follow the initial rebalance.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from ._cli_args import count, existing_file, topics_spec, weights_spec

DEFAULT_ASSIGNORS = ("range", "cooperative-sticky", "cooperative-balanced-sticky")
FIGURES = (
    ("step", "step", "{}"),
    ("label", "event", "{}"),
    ("members", "members", "{}"),
    ("count_imbalance", "spread", "{}"),
    ("topic_spread", "topic spread", "{}"),
    ("load_imbalance", "load", "{:.2f}"),
    ("moved", "moved", "{}"),
    ("rounds", "rounds", "{}"),
    ("rack_locality", "rack-local", "{:.2f}"),
    ("copartition_violations", "co-part", "{}"),
    ("ms", "ms", "{:.1f}"),
)


class SimulateError(ValueError):
    """A group description that cannot be simulated."""


def add_parser(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "simulate",
        help="run assignors on a described or measured group (no Spark)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--topics", type=topics_spec, help="TOPIC:PARTITIONS[,...], e.g. orders:12,payments:6"
    )
    p.add_argument("--members", type=count, help="group members, at least 1 (default 3)")
    p.add_argument(
        "--subscriptions",
        help="all | unequal | halves, or explicit per-member topic lists separated by ';' "
        "(cycled), e.g. 'orders,payments;orders'",
    )
    p.add_argument(
        "--weights",
        type=weights_spec,
        help="uniform (default) | zipf:S | hot:SHARE | lognormal:SIGMA, e.g. zipf:1.2",
    )
    p.add_argument(
        "--racks", type=count, help="racks, at least 1 (members and replicas spread over them)"
    )
    p.add_argument(
        "--profile", type=existing_file, help="measured load profile JSON (counts and weights)"
    )
    p.add_argument(
        "--file", type=existing_file, help="YAML/JSON group description (keys as the options)"
    )
    p.add_argument(
        "--assignor",
        action="append",
        dest="assignors",
        metavar="NAME",
        help="wire name (ours or kafka-python's) or module:Class; repeatable "
        f"(default {', '.join(DEFAULT_ASSIGNORS)})",
    )
    p.add_argument(
        "--churn",
        action="append",
        metavar="EVENT",
        help="churn step after the first rebalance: join, leave [ID], crash [ID], scale-out N, "
        "scale-in N, add-partitions [TOPIC] N|+N, rebalance, random N; repeatable",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for weights and churn (0)")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object on stdout (times in milliseconds, key 'ms', as in the text)",
    )
    p.set_defaults(func=run)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SimulateError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            try:
                import yaml
            except ModuleNotFoundError:
                raise SimulateError(
                    f"--file {path}: reading YAML needs PyYAML: pip install "
                    "'kafka-assignors[yaml]' (or describe the group in a .json file)"
                ) from None
            data = yaml.safe_load(text)
    except SimulateError:
        raise
    except Exception as exc:
        raise SimulateError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise SimulateError(f"{path}: a group description is a mapping")
    if "profile" in data:
        data["profile"] = str((path.parent / str(data["profile"])).resolve())
    return data


def parse_topics(text: str | Mapping[str, Any]) -> dict[str, int]:
    """``orders:12,payments:6`` (or a mapping) -> ``{"orders": 12, "payments": 6}``."""
    if isinstance(text, Mapping):
        items = [(str(k), str(v)) for k, v in text.items()]
    else:
        items = []
        for part in filter(str.strip, text.split(",")):
            name, _, count = part.strip().rpartition(":")
            items.append((name, count))
    out: dict[str, int] = {}
    for name, count in items:
        if not name or not count.isdigit() or int(count) < 1:
            raise SimulateError(f"topic {name or '?'}:{count}: use TOPIC:PARTITIONS (at least 1)")
        out[name] = int(count)
    return out


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """File values overridden by the options given."""
    data = _read_file(args.file) if args.file else {}
    for key in ("topics", "members", "subscriptions", "weights", "racks", "churn", "assignors"):
        value = getattr(args, key)
        if value is not None:
            data[key] = value
    if args.profile is not None:
        data["profile"] = str(args.profile)
    return data


def build(settings: Mapping[str, Any], seed: int = 0) -> tuple[Any, list[str]]:
    """(Scenario, assignor names) from the merged settings."""
    from .simulator import Scenario, SimMember, expand_events
    from .simulator.grid import GridError, make_weights, subscribe

    weights: Any = None
    if settings.get("profile"):
        from .load.profile import read_profile

        profile = read_profile(settings["profile"])
        topics: dict[str, int] = {}
        for p in profile.partitions:
            topics[p.topic] = max(topics.get(p.topic, 0), p.partition + 1)
        weights = profile.weights()
    elif settings.get("topics"):
        topics = parse_topics(settings["topics"])
    else:
        raise SimulateError("describe the topics: --topics orders:12,... or --profile FILE")
    n = _setting_count(settings, "members", 3)
    names = sorted(topics)
    pattern = str(settings.get("subscriptions") or "all")
    racks = tuple(f"rack-{i}" for i in range(_setting_count(settings, "racks", 0)))
    explicit = _explicit(pattern, topics) if pattern not in ("all", "unequal", "halves") else None

    def member(i: int) -> SimMember:
        subs = explicit[i % len(explicit)] if explicit else subscribe(pattern, i, names)
        return SimMember(f"c{i}", subs, rack=racks[i % len(racks)] if racks else None)

    members = tuple(member(i) for i in range(n))
    try:
        if weights is None:
            spec = str(settings.get("weights") or "uniform")
            try:
                weights_spec(spec)
            except argparse.ArgumentTypeError as exc:
                raise SimulateError(f"weights: {exc}") from None
            weights = make_weights(spec, topics, seed)
        churn = [str(c) for c in settings.get("churn") or ()]
        events = expand_events(churn, members, topics, member, seed=seed)
    except (GridError, ValueError) as exc:
        raise SimulateError(str(exc)) from None
    assignors = [str(a) for a in settings.get("assignors") or DEFAULT_ASSIGNORS]
    scenario = Scenario("simulate", topics, members, events, weights, racks)
    return scenario, assignors


def _setting_count(settings: Mapping[str, Any], key: str, default: int) -> int:
    """A count from the options or the file: absent -> ``default``; else a whole number >= 1."""
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not str(value).strip().isdigit() or int(value) < 1:
        raise SimulateError(f"{key}: expected a whole number at least 1, got {value!r}")
    return int(value)


def _explicit(pattern: str, topics: Mapping[str, int]) -> list[tuple[str, ...]]:
    lists = [tuple(t.strip() for t in part.split(",") if t.strip()) for part in pattern.split(";")]
    for subs in lists:
        missing = [t for t in subs if t not in topics]
        if missing or not subs:
            raise SimulateError(f"subscription {','.join(subs) or '(empty)'}: unknown {missing}")
    return lists


def simulate_all(scenario: Any, assignors: Sequence[str]) -> list[dict[str, Any]]:
    """One entry per assignor: its steps (figures and the assignment after each)."""
    from .simulator import UnknownAssignorError, run_scenario

    results = []
    for name in assignors:
        try:
            steps = run_scenario(scenario, name, keep_assignments=True)
        except UnknownAssignorError as exc:
            raise SimulateError(str(exc)) from None
        rows = []
        for s in steps:
            row = s.row()
            row.pop("seconds", None)
            row["ms"] = round(s.seconds * 1000, 3)  # milliseconds, in the text and the JSON
            row["assignment"] = s.assignment or {}
            rows.append(row)
        results.append({"assignor": name, "steps": rows})
    return results


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def render_text(scenario: Any, results: list[dict[str, Any]], out: TextIO) -> None:
    topics = ", ".join(f"{t}:{n}" for t, n in scenario.topics.items())
    out.write(f"group: {len(scenario.members)} members; topics {topics}\n")
    for m in scenario.members:
        out.write(f"  {m.member_id}: {','.join(m.topics)}{f' ({m.rack})' if m.rack else ''}\n")
    for result in results:
        out.write(f"\n== {result['assignor']}\n")
        out.write("  ".join(f"{h:>10}" for _, h, _ in FIGURES) + "\n")
        for row in result["steps"]:
            cells = [_cell(row.get(k), fmt) for k, _, fmt in FIGURES]
            out.write("  ".join(f"{c:>10}" for c in cells) + "\n")
            if row.get("error"):
                out.write(f"  error: {row['error']}\n")
        last = result["steps"][-1]["assignment"] if result["steps"] else {}
        out.write("assignment after the last step:\n")
        for member, by_topic in sorted(last.items()):
            parts = " ".join(f"{t}{sorted(ps)}" for t, ps in sorted(by_topic.items()) if ps)
            count = sum(len(ps) for ps in by_topic.values())
            out.write(f"  {member:<6} {count:>3}  {parts}\n")


def run(args: argparse.Namespace) -> int:
    try:
        scenario, assignors = build(_settings(args), args.seed)
        results = simulate_all(scenario, assignors)
    except SimulateError as exc:
        print(f"kafka-assignors simulate: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        doc = {
            "topics": dict(scenario.topics),
            "members": [
                {"id": m.member_id, "topics": list(m.topics), "rack": m.rack}
                for m in scenario.members
            ],
            "results": results,
        }
        json.dump(doc, sys.stdout, indent=2, sort_keys=True, default=str)
        sys.stdout.write("\n")
    else:
        render_text(scenario, results, sys.stdout)
    return 0
