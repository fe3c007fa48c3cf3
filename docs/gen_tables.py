"""Build hook: the site's result tables, generated from the committed result files.

mkdocs loads this file as a hook (mkdocs.yml, ``hooks:``). A page asks for a table with a
marker line ``<!-- gen:NAME -->``; the marker is replaced by the table built from the result
file named in ``TABLES[NAME]``, followed by the one command that regenerates that file. An
unknown name, or a result file whose recorded command is not that command, fails the build.

Run as a script it prints every table (``python docs/gen_tables.py [NAME ...]``).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPO_URL = "https://github.com/kafka-assignors/kafka-assignors"
MARKER = re.compile(r"^<!-- gen:([a-z_]+) -->$", re.MULTILINE)
#: ``<!-- api: module[.Name] -->``: the API reference of something another branch of this round
#: adds; rendered (``::: target``) once it exists, a note until then.
API = re.compile(r"^<!-- api: ([\w.]+) -->$", re.MULTILINE)

#: Images from outside docs/ that pages show: site path -> repository path.
IMAGES = {
    "img/assignors_time.png": "benchmarks/results/assignors_time.png",
    "img/new_assignors.png": "benchmarks/results/new_assignors.png",
}


@dataclass(frozen=True)
class Table:
    source: str  # the committed result file, relative to the repository
    command: str  # the one command that regenerates it
    render: Callable[[Any], str]
    recorded: Callable[[Any], str | None] = lambda data: None  # the command the file records

    def markdown(self) -> str:
        path = ROOT / self.source
        data: Any = path.read_text() if path.suffix == ".txt" else json.loads(path.read_text())
        recorded = self.recorded(data)
        module = self.command.split(" -m ", 1)[-1].split()[0]
        if recorded is not None and module not in recorded:
            raise ValueError(f"{self.source} was written by {recorded!r}, not by {self.command!r}")
        return (f"{self.render(data)}\n\nRegenerate: `{self.command}` "
                f"([{self.source}]({REPO_URL}/blob/main/{self.source})).\n")


def _ms(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s" if seconds < 100 else f"{seconds:.0f} s"
    return f"{seconds * 1000:.2g} ms" if seconds < 0.01 else f"{seconds * 1000:.0f} ms"


def _assignor_cell(cell: dict[str, Any] | None, timeout: float) -> str:
    if cell is None:
        return "not run"
    if cell["status"] == "ok":
        return _ms(cell["median"])
    if cell["status"] == "timeout":
        return f"> {timeout:.0f} s"
    if cell["status"].startswith("error"):
        return "error"
    return "not run"


def _count(n: int) -> str:
    return f"{n:,}"


def assignors(data: dict[str, Any]) -> str:
    """Median time of one leader assign() call, uniform subscriptions, fresh / one leaves."""
    columns = ["roundrobin", "sticky", "cooperative-sticky", "balanced-sticky",
               "cooperative-balanced-sticky"]
    ours = {"balanced-sticky", "cooperative-balanced-sticky"}
    timeout = data["settings"]["timeout_s"]
    cells = {(c["shape"], c["mode"], c["event"], c["assignor"]): c for c in data["cells"]}
    head = ["partitions x consumers"] + [f"**{c}**" if c in ours else c for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|--:" * len(columns) + "|"]
    for shape in data["settings"]["shapes"]:
        row = [f"{_count(shape['partitions'])} x {_count(shape['consumers'])}"]
        for assignor in columns:
            fresh = cells.get((shape["name"], "uniform", "fresh", assignor))
            leave = cells.get((shape["name"], "uniform", "leave", assignor))
            row.append(f"{_assignor_cell(fresh, timeout)} / {_assignor_cell(leave, timeout)}")
        lines.append("| " + " | ".join(row) + " |")
    mine = [c for c in data["cells"] if c["assignor"] in ours and c["status"] == "ok"]
    valid = sum(1 for c in mine if c["valid"])
    spread = max(c["spread"] for c in mine)
    lines.append("")
    lines.append(f"Our assignors' results were valid in {valid} of {len(mine)} cells (uniform and "
                 f"unequal subscriptions), with a spread of at most {spread}.")
    return "\n".join(lines)


def new_assignors(data: dict[str, Any]) -> str:
    """The special-purpose assignors at 10,000 x 1,000, fresh / one leaves."""
    cells = {(c["shape"], c["event"], c["assignor"]): c for c in data["cells"]}
    timeout = data["settings"]["timeout_s"]
    rows = [("10k", "roundrobin", "kafka-python"), ("10k", "load-aware", "ours"),
            ("10k", "rack-aware", "ours"), ("10k-join", "co-partitioned", "ours"),
            ("10k", "pinned", "ours"), ("10k", "broadcast", "ours")]
    lines = ["| assignor | shape | fresh / one leaves | moved on leave |",
             "|---|---|--:|--:|"]
    shapes = {s["name"]: s for s in data["settings"]["shapes"]}
    for shape, assignor, who in rows:
        fresh, leave = cells.get((shape, "fresh", assignor)), cells.get((shape, "leave", assignor))
        s = shapes[shape]
        moved = leave.get("moved") if leave else None
        name = f"**{assignor}**" if who == "ours" else f"{assignor} ({who})"
        lines.append(f"| {name} | {s['topics']} topics x {_count(s['per_topic'])}, "
                     f"{_count(s['consumers'])} members | {_assignor_cell(fresh, timeout)} / "
                     f"{_assignor_cell(leave, timeout)} | "
                     f"{_count(moved) if isinstance(moved, int) else ''} |")
    return "\n".join(lines)


PROTOCOLS = {
    "eager": "kafka-python eager, the plain one line",
    "cooperative-plain": "kafka-python cooperative, the plain one line",
    "cooperative": "**kafka-python cooperative, with the runtime**",
    "bridge-eager": "confluent-kafka bridge, eager",
    "bridge-cooperative": "**confluent-kafka bridge, cooperative**",
    "aiokafka-eager": "aiokafka, eager (our assignor)",
    "aiokafka-roundrobin": "aiokafka alone, `roundrobin`",
    "aiokafka-cooperative": "**aiokafka cooperative, `kafka_assignors.aiokafka`**",
    "consumer-protocol": "**kafka-python, consumer group protocol** (balanced-sticky on the "
                         "broker)",
    "java-consumer-protocol": "Java consumer, consumer group protocol (balanced-sticky on the "
                              "broker; reference)",
    "java-cooperative": "Java consumer, `CooperativeStickyAssignor` (reference)",
}


def rebalance_timings(data: dict[str, Any]) -> str:
    """Join to stable and the pauses beside their noise floors, medians over the repeats."""
    groups: dict[tuple[int, int, str], list[dict[str, Any]]] = defaultdict(list)
    for cell in data["cells"]:
        groups[(cell["size"], cell["revoke_delay_ms"], cell["protocol"])].append(cell)

    def med(cells: list[dict[str, Any]], key: str) -> str:
        values = [c[key] for c in cells
                  if c.get(key) is not None and not math.isnan(c[key])]
        return f"{statistics.median(values):.2f} s" if values else "-"

    def pause(cells: list[dict[str, Any]], key: str, floor: str) -> str:
        shown = med(cells, key)
        return shown if shown == "-" else f"{shown} / {med(cells, floor)}"

    lines = ["| consumers | revoke callback | client, protocol | join -> stable | "
             "members that keep all: pause / floor | members that lose some: kept "
             "partitions' pause / floor |", "|--:|--:|---|--:|--:|--:|"]
    for (size, delay, protocol), cells in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1], list(PROTOCOLS).index(kv[0][2]))):
        lines.append(f"| {size} | {delay} ms | {PROTOCOLS.get(protocol, protocol)} | "
                     f"{med(cells, 'join_to_stable_s')} | "
                     f"{pause(cells, 'keepers_pause_s', 'keepers_floor_s')} | "
                     f"{pause(cells, 'kept_pause_s', 'kept_floor_s')} |")
    return "\n".join(lines)


def broker_assignor(data: dict[str, Any]) -> str:
    """The broker plugin's balanced-sticky against Kafka's uniform, side by side."""
    lines = ["| group | event | balanced-sticky | uniform | ratio | topic spread (ours; uniform) "
             "| moved (ours; uniform) |", "|---|---|--:|--:|--:|---|---|"]
    for case in data["cases"]:
        ours, uniform = case["balanced-sticky"], case["uniform"]
        event = case.get("event", case.get("phase"))
        moved = f"{ours['moved']}; {uniform['moved']}" if event != "fresh" else ""
        lines.append(f"| {case.get('group', case['scenario'])} | {event} | {ours['ms']:.3g} ms | "
                     f"{uniform['ms']:.3g} ms | {ours['ms'] / uniform['ms']:.2f}x | "
                     f"{ours['topic_spread']}; {uniform['topic_spread']} | {moved} |")
    return "\n".join(lines)


def per_topic_spread(data: dict[str, Any]) -> str:
    """Worst per-topic spread / partitions moved, per published shape."""
    shapes = data["shapes"]
    columns = list(next(iter(shapes.values())))
    lines = ["| shape | " + " | ".join(columns) + " |", "|---" + "|--:" * len(columns) + "|"]
    for shape, by_assignor in shapes.items():
        row = [f"{by_assignor[c]['topic_spread']} / {by_assignor[c]['moved']}" for c in columns]
        lines.append(f"| {shape} | " + " | ".join(row) + " |")
    random_runs = data["random"]
    lines.append("")
    lines.append(f"Over {random_runs['rebalances']} random rebalances `balanced-sticky` moved "
                 f"{_count(random_runs['moved'])} partitions, exactly as many as total balance "
                 f"alone needs ({_count(random_runs['moved_total_balance_only'])}), with a worst "
                 f"per-topic spread of {random_runs['worst_topic_spread']}.")
    return "\n".join(lines)


def metrics_scrape(text: str) -> str:
    """The committed Prometheus scrape, as it was written."""
    kept = [line for line in text.splitlines() if line.startswith("kafka_consumer_")
            and ("rebalance" in line or "assignment_metrics" in line)]
    return "```text\n" + "\n".join(kept) + "\n```"


def compatibility(data: dict[str, Any]) -> str:
    """The compatibility matrix (integration_tests/test_compat/table.py renders it)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from integration_tests.test_compat.table import render

    table = render(data)
    # The renderer's last line names its source with a path relative to the repository.
    return "\n".join(line for line in table.splitlines() if not line.startswith("Generated by"))


TABLES = {
    "assignors": Table("benchmarks/results/assignors.json", "python -m benchmarks.assignors",
                       assignors, lambda d: d["command"]),
    "new_assignors": Table("benchmarks/results/new_assignors.json",
                           "python -m benchmarks.assignors --suite new", new_assignors,
                           lambda d: d["command"]),
    "rebalance_timings": Table(
        "benchmarks/results/rebalance_timings.json",
        "python -m benchmarks.rebalance_timings --plan '3:0,200:3 10:0,200:3 30:0,200:3'",
        rebalance_timings, lambda d: d["command"]),
    "rebalance_timings_consumer_protocol": Table(
        "benchmarks/results/rebalance_timings_consumer_protocol.json",
        "python -m benchmarks.rebalance_timings --sizes 3,10 --repeats 2 --revoke-delay-ms 0 "
        "--protocols consumer-protocol,java-consumer-protocol,cooperative,java-cooperative",
        rebalance_timings, lambda d: d["command"]),
    "broker_assignor": Table("benchmarks/results/broker_assignor.json",
                             "python -m benchmarks.broker_assignor", broker_assignor,
                             lambda d: d["meta"]["command"]),
    "per_topic_spread": Table("benchmarks/results/per_topic_spread.json",
                              "python -m benchmarks.per_topic_spread", per_topic_spread),
    "metrics_scrape": Table("docs/results/metrics_scrape.txt",
                            "python -m integration_tests.metrics_scrape --out docs/results/",
                            metrics_scrape),
    "compatibility": Table("docs/compat/results.json", "scripts/compat-matrix.sh",
                           compatibility),
}


def expand(markdown: str) -> str:
    """Replace every ``<!-- gen:NAME -->`` marker with its table."""
    def table(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise KeyError(f"<!-- gen:{name} -->: no such table (known: {sorted(TABLES)})")
        return TABLES[name].markdown()

    return API.sub(_api, MARKER.sub(table, markdown))


def _exists(target: str) -> bool:
    import importlib

    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        return all((obj := getattr(obj, attr, None)) is not None for attr in parts[cut:])
    return False


def _api(match: re.Match[str]) -> str:
    target = match.group(1)
    if _exists(target):
        return f"::: {target}"
    return f"`{target}` is not in this build of the documentation."


# mkdocs hook events -----------------------------------------------------------------------

def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for site_path, source in IMAGES.items():
        files.append(File.generated(config, site_path, abs_src_path=str(ROOT / source)))
    return files


if __name__ == "__main__":
    for name in sys.argv[1:] or list(TABLES):
        print(f"## {name}\n\n{TABLES[name].markdown()}")
