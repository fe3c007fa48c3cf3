"""``report``: one HTML page with PNG plots from evaluate's output, a profile and sizing.

Needs pandas and matplotlib, not a SparkSession: the data is small by then.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..load.profile import LoadProfile, read_profile
from ..simulator import Scenario, SimMember, simulate
from . import plots
from .report_live import read_live, section_live
from .report_sizing import SIZING_JSON, section_sizing
from .sizing import Sizing
from .summary import AssignorFigures, per_assignor, recommend

DEFAULT_PROFILE_ASSIGNORS = ("range", "roundrobin", "cooperative-sticky", "balanced-sticky")


@dataclass(frozen=True, slots=True)
class Report:
    html: Path
    plots: tuple[Path, ...]
    recommendation: str | None
    #: The sections, as (anchor, title), in the order of the table of contents.
    sections: tuple[tuple[str, str], ...] = ()


def profile_loads(
    profile: LoadProfile, assignors: Sequence[str], consumers: int
) -> dict[str, dict[str, float]]:
    """Load per consumer for the profile's first assignment under each assignor."""
    topics: dict[str, int] = {}
    for p in profile.partitions:
        topics[p.topic] = max(topics.get(p.topic, 0), p.partition + 1)
    members = tuple(SimMember(f"consumer-{i:04d}", tuple(sorted(topics))) for i in range(consumers))
    scenario = Scenario("measured", topics, members, weights=profile.weights())
    out = {}
    for name in assignors:
        first = next(simulate(scenario, name))
        if first.error is None:
            out[name] = first.loads
    return out


def build_report(
    out_dir: str | Path,
    *,
    steps_path: str | Path | None = None,
    profile_path: str | Path | None = None,
    sizing: Sizing | None = None,
    consumers: int | None = None,
    title: str = "Kafka partition assignment report",
    live_path: str | Path | None = None,
) -> Report:
    """Write ``report.html``, its PNGs and (with ``sizing``) ``sizing.json`` into
    ``out_dir``; with ``live_path`` (a live metrics file, see ``report_live``) a section on
    what live consumers' own rebalance metrics said."""
    import pandas as pd

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    body: list[tuple[str, str, str]] = []  # (anchor, title, html)
    figures: list[AssignorFigures] = []
    pick: str | None = None
    reasons: list[str] = []
    if steps_path is not None:
        steps = pd.read_parquet(steps_path)
        figures = per_assignor(steps)
        pick, reasons = recommend(figures)
        made += [
            plots.imbalance(steps, out / "imbalance.png"),
            plots.movement(steps, out / "movement.png"),
            plots.tradeoff(figures, out / "tradeoff.png"),
        ]
        body.append(("assignors", f"What each assignor does across "
                     f"{steps['scenario'].nunique()} scenarios",
                     _section_evaluate(steps, figures)))
    profile = read_profile(profile_path) if profile_path is not None else None
    if profile is not None:
        n = consumers or (sizing.consumers_worth_running if sizing else 0) or 6
        n = max(1, min(n, len(profile.partitions)))  # more would sit idle
        names = [f.assignor for f in figures if not f.failures] or list(DEFAULT_PROFILE_ASSIGNORS)
        loads = profile_loads(profile, names, n)
        unit = profile.weight_metric.replace("_per_s", "/s").replace("_", " ")
        rates = {f"{p.topic}:{p.partition}": p.weight for p in profile.partitions}
        capacity = (
            sizing.consumer_per_partition
            if sizing and sizing.unit.startswith(unit.split("/")[0])
            else None
        )
        made += [
            plots.partition_load(rates, capacity, unit, out / "partition_load.png"),
            plots.consumer_load(loads, unit, out / "consumer_load.png"),
        ]
        body.append(("load", "Your measured load", _section_profile(profile, loads, n)))
    if live_path is not None:
        body.append(("live", "Live groups: the consumers' own rebalance metrics",
                     section_live(read_live(live_path))))
    if sizing is not None:
        (out / SIZING_JSON).write_text(json.dumps(sizing.to_json(), indent=1, default=str) + "\n")
        body.append(("sizing", "Sizing: partitions and consumers", section_sizing(sizing)))
    page = _page(title, pick, reasons, body)
    path = out / "report.html"
    path.write_text(page)
    return Report(path, tuple(made), pick, (("verdict", "Recommendation"),
                                            *((a, t) for a, t, _ in body)))


def _section_evaluate(steps: Any, figures: list[AssignorFigures]) -> str:
    header = (
        "<tr><th>assignor</th><th>scenarios</th><th>rebalances</th><th>failed</th>"
        "<th>load: busiest / mean</th><th>worst</th><th>partitions: max &minus; min</th>"
        "<th>one topic: max &minus; min</th><th>worst topic</th>"
        "<th>moved</th><th>from stayers</th><th>rounds</th><th>idle</th><th>rack-local</th>"
        "<th>co-partition splits</th><th>assign ms</th></tr>"
    )
    rows = []
    for f in figures:
        rack = "&ndash;" if f.rack_locality is None else f"{f.rack_locality:.0%}"
        rows.append(
            f"<tr><td>{_e(f.assignor)}</td><td>{f.scenarios}</td><td>{f.steps}</td>"
            f"<td class='{'bad' if f.failures else ''}'>{f.failures}</td>"
            f"<td>{f.load_imbalance:.2f}</td><td>{f.worst_load_imbalance:.2f}</td>"
            f"<td>{f.count_imbalance:.2f}</td><td>{f.topic_spread:.2f}</td>"
            f"<td>{f.worst_topic_spread:.0f}</td><td>{f.moved:.1f}</td>"
            f"<td>{f.moved_from_stayers:.1f}</td><td>{f.rounds:.2f}</td>"
            f"<td>{f.idle_members:.2f}</td><td>{rack}</td>"
            f"<td>{f.copartition_violations:.1f}</td><td>{f.assign_ms:.2f}</td></tr>"
        )
    return f"""
<p>Each scenario is a cluster shape, a group size, a subscription pattern, partition weights,
racks and a sequence of joins, leaves, crashes, scale-outs and partition increases. Every
rebalance ran the assignor's real code as a group leader would. Figures are means over all
rebalances; movement leaves out each scenario's first assignment. "One topic" is, per
rebalance, the worst topic's most minus fewest partitions per subscribed consumer: a high
value means one consumer holds much more of some topic than another, so a hot topic lands
on a few consumers even when the partition totals are even.</p>
<div class="wide"><table class="assignors">{header}{"".join(rows)}</table></div>
<figure><img src="imbalance.png" alt="Load imbalance per assignor and cluster shape">
<figcaption>How far the busiest consumer is above the mean load. 1.0 means perfectly even.
</figcaption></figure>
<figure><img src="movement.png" alt="Partitions moved per rebalance per assignor">
<figcaption>Every moved partition pauses its consumption and re-reads from the last commit.
The right panel counts only partitions taken from consumers that stayed in the group: after
a leave or a crash a sticky assignor takes none, after a join it takes only what the newcomer
needs.</figcaption></figure>
<figure><img src="tradeoff.png" alt="Balance against stickiness, one point per assignor">
<figcaption>The best assignor sits bottom left: even load and few moves. Assignors that
failed in some scenario are left out (see the table).</figcaption></figure>
"""


def _section_profile(profile: LoadProfile, loads: dict[str, dict[str, float]], n: int) -> str:
    window = profile.meta.get("window", {})
    seconds = window.get("seconds") if isinstance(window, dict) else None
    span = f" over {seconds:,.0f} s" if isinstance(seconds, int | float) else ""
    items = []
    for name, per in loads.items():
        values = list(per.values())
        mean = sum(values) / len(values) if values else 0
        items.append(
            f"<li>{_e(name)}: busiest consumer {max(values) / mean:.2f}x the mean</li>"
            if mean
            else f"<li>{_e(name)}: no load</li>"
        )
    return f"""
<p>{len(profile.partitions)} partitions measured{span}, weighted by
<code>{_e(profile.weight_metric)}</code>. Assigned to {n} consumers:</p>
<ul>{"".join(items)}</ul>
<figure><img src="partition_load.png" alt="Measured load per partition"></figure>
<figure><img src="consumer_load.png" alt="Measured load per consumer under each assignor">
<figcaption>The same measured partitions, assigned by each assignor to {n} consumers.
Bars far above the dashed mean are consumers that will lag first.</figcaption></figure>
"""


def _page(
    title: str, pick: str | None, reasons: list[str], body: list[tuple[str, str, str]]
) -> str:
    verdict = "".join(f"<li>{_e(r)}</li>" for r in reasons)
    headline = f"Recommendation: {_e(pick)}" if pick else "Recommendation"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(
        f'<li><a href="#{a}">{_e(t)}</a></li>'
        for a, t in (("verdict", "Recommendation"), *((a, t) for a, t, _ in body))
    )
    sections = "".join(
        f'<section id="{a}"><h2>{_e(t)}</h2>{content}</section>' for a, t, content in body
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, "DejaVu Sans", sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }}
h1 {{ margin-bottom: 0.1em; }} .when {{ color: #777; margin-top: 0; }}
h2 {{ border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }}
h3 {{ margin: 1.4em 0 0.3em; }}
nav ol {{ margin: 0.3em 0; }} nav {{ font-size: 0.95em; }}
.verdict {{ background: #eef6ee; border-left: 5px solid #55A868; padding: 0.6em 1.2em; }}
.verdict h2 {{ border: 0; margin-top: 0.4em; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0 0.3em; }}
.wide {{ overflow-x: auto; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: right;
          vertical-align: top; }}
th:first-child, td:first-child {{ text-align: left; }}
th.text, td.text, th.unit, td.unit, td.kind {{ text-align: left; }}
td.text {{ max-width: 38em; }} td:first-child {{ white-space: nowrap; }}
table.assignors {{ font-size: 0.78em; }} table.assignors th {{ padding: 4px 5px; }}
th {{ background: #f4f4f4; }} td.bad {{ color: #b00; font-weight: bold; }}
td.ok {{ color: #2a7a3a; }}
td.measured {{ color: #2a7a3a; font-weight: bold; }} td.assumed {{ color: #a05a00; }}
tr.aside td {{ color: #777; }}
ul.rule {{ list-style: none; padding-left: 0; }}
ul.rule code {{ background: #f4f4f4; padding: 2px 6px; font-size: 0.9em; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; border: 1px solid #eee; }}
figcaption, .note {{ color: #555; font-size: 0.9em; }}
</style></head><body>
<h1>{_e(title)}</h1><p class="when">Generated {when} by kafka-assignors.</p>
<nav aria-label="Contents"><strong>Contents</strong><ol>{toc}</ol></nav>
<section id="verdict" class="verdict"><h2>{headline}</h2>
<ul>{verdict or "<li>No evaluation given.</li>"}</ul></section>
{sections}
</body></html>
"""


def _e(value: object) -> str:
    return html.escape(str(value))
