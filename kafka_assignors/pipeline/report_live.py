"""The report's section on live groups: what the consumers' own rebalance metrics said.

Input: a JSON file (the demo writes one, ``live_metrics.json``)::

    {"source": "...", "groups": [{"label": ..., "strategy": ..., "group_id": ...,
                                  "metrics": {GroupFigures fields} | null}, ...]}

``metrics`` are :class:`kafka_assignors.demo.live_metrics.GroupFigures`: Java's
``consumer-coordinator-metrics`` and our assignment-quality group, folded over a group's
members.  A group whose assignor reports no metrics (kafka-python's own) has ``null``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

LIVE_JSON = "live_metrics.json"


def read_live(path: str | Path) -> dict[str, Any]:
    """The file's content; ValueError when it is not such a file."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or not isinstance(data.get("groups"), list):
        raise ValueError(f"{path}: not a live metrics file (no 'groups' list)")
    return data


def _cell(value: object, digits: int = 0) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def section_live(data: dict[str, Any]) -> str:
    """The HTML of the section (a table and how to read it)."""
    header = (
        "<tr><th>assignor</th><th>members reporting</th><th>rebalances</th><th>failed</th>"
        "<th>latency avg ms</th><th>latency max ms</th><th>assignments</th><th>moved</th>"
        "<th>withheld (last)</th><th>partitions: max &minus; min (last)</th>"
        "<th>one topic: max &minus; min (last)</th><th>assign ms (max)</th>"
        "<th>kept pause s (max)</th></tr>"
    )
    rows = []
    for g in data["groups"]:
        name = html.escape(str(g.get("strategy") or g.get("label") or "?"))
        f = g.get("metrics")
        if not f:
            rows.append(f"<tr><td>{name}</td><td class='text' colspan='12'>no kafka-assignors "
                        "metrics: this assignor is not ours</td></tr>")
            continue
        rows.append(
            f"<tr><td>{name}</td><td>{_cell(f.get('members'))}</td>"
            f"<td>{_cell(f.get('rebalances'))}</td><td>{_cell(f.get('failed'))}</td>"
            f"<td>{_cell(f.get('latency_avg_ms'))}</td><td>{_cell(f.get('latency_max_ms'))}</td>"
            f"<td>{_cell(f.get('assignments'))}</td><td>{_cell(f.get('moved'))}</td>"
            f"<td>{_cell(f.get('withheld_last'))}</td><td>{_cell(f.get('count_spread_last'))}</td>"
            f"<td>{_cell(f.get('topic_spread_last'))}</td>"
            f"<td>{_cell(f.get('assignment_ms_max'), 1)}</td>"
            f"<td>{_cell(f.get('kept_pause_max_s'), 2)}</td></tr>"
        )
    source = html.escape(str(data.get("source") or "live consumer groups"))
    return f"""
<p>Measured by the consumers themselves ({source}), with the metrics every consumer of our
assignors keeps: Java's <code>consumer-coordinator-metrics</code> (rebalances, failed
rebalances, rebalance latency from JoinGroup to SyncGroup) and our
<code>kafka-assignors-assignment-metrics</code> (what the leader moved and how even its
assignment was, how long a kept partition went unread). The same numbers are in
<code>consumer.metrics()</code> and in the Prometheus and OpenTelemetry exports.</p>
<div class="wide"><table class="assignors">{header}{"".join(rows)}</table></div>
<p class="note">Rebalances: the most one member took part in. Moved: partitions the leaders
gave to another owner, summed over their assignments. Withheld: partitions the last
cooperative assignment held back for a second round. "(last)": the newest assignment.
Kept pause: the longest a partition that stayed with its member could not be read during a
rebalance: short when the member reads on through it, as a cooperative member of ours does;
the whole rebalance for a member that stops.</p>
"""
