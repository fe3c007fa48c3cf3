"""The report's sizing section: inputs, the rule with the numbers put in, the answer and
the hot keys, as tables a person reads.  The same figures go to ``sizing.json`` beside
the page, linked from it (no JSON in the page itself)."""

from __future__ import annotations

import html
import re

from .sizing import ASSUMED, MEASURED, Sizing, human, human_parts, memory, rule_lines

#: Hot keys shown in the page; the rest are in sizing.json.
HOT_KEY_ROWS = 15
SIZING_JSON = "sizing.json"


def _e(value: object) -> str:
    return html.escape(str(value))


def _text(sentence: str) -> str:
    """Escaped, with `commands` in backticks set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(sentence))


def _inputs(s: Sizing) -> str:
    rows = []
    for i in s.inputs:
        value, unit = human_parts(i.value, i.unit)
        kind = i.kind if i.used else f"{i.kind}, not used"
        rows.append(
            f"<tr class='{'' if i.used else 'aside'}'><td>{_e(i.name)}</td><td>{_e(value)}</td>"
            f"<td class='unit'>{_e(unit)}</td><td class='kind {_e(i.kind)}'>{_e(kind)}</td>"
            f"<td class='text'>{_text(i.detail)}</td></tr>"
        )
    assumed = [i.name for i in s.inputs if i.used and i.kind == ASSUMED]
    measured = [i.name for i in s.inputs if i.used and i.kind == MEASURED]
    summary = f"{len(measured)} of the inputs measured"
    if assumed:
        summary += f"; assumed: {', '.join(assumed)} (how to measure each is in its row)"
    return (
        "<table class='inputs'><tr><th>input</th><th>value</th><th class='unit'>unit</th>"
        "<th class='text'>how we know it</th><th class='text'>where it came from</th></tr>"
        f"{''.join(rows)}</table><p class='note'>{_e(summary)}.</p>"
    )


def _answer(s: Sizing) -> str:
    capacity = s.partitions_recommended * min(s.producer_per_partition, s.consumer_per_partition)
    rows = [
        ("partitions", f"{s.partitions_recommended}",
         f"{_partitions(s.partitions_needed)} the target; {s.headroom:g}x headroom, because "
         "adding partitions later moves keys to other partitions"),
        ("consumers worth running", f"{s.consumers_worth_running}",
         f"each takes {human(s.consumer_per_partition, s.unit)} from a partition; more than "
         f"{s.partitions_recommended} would sit idle"),
        ("headroom", f"{s.headroom:g}x",
         f"{s.partitions_recommended} partitions carry up to {human(capacity, s.unit)}, "
         f"{capacity / s.target:.1f}x the target, before partitions must be added"),
        ("producer buffer memory", memory(s.producer_buffer_mib),
         f"one {s.batch_bytes // 1024} KiB batch per partition, in each producer that writes "
         "every partition"),
    ]
    if s.current_partitions is not None:
        enough = s.current_partitions >= s.partitions_needed
        rows.insert(0, (
            "partitions now", f"{s.current_partitions}",
            "enough for the target" if enough
            else f"too few: it takes {s.partitions_needed} to carry the target",
        ))
    body = "".join(
        f"<tr><td>{_e(a)}</td><td>{_e(b)}</td><td class='text'>{_e(c)}</td></tr>"
        for a, b, c in rows
    )
    return (
        "<table class='answer'><tr><th>figure</th><th>value</th><th class='text'>why</th></tr>"
        f"{body}</table>"
    )


def _partitions(n: int) -> str:
    return "1 partition carries" if n == 1 else f"{n} partitions carry"


def _per_topic(s: Sizing) -> str:
    if not s.per_topic:
        return ""
    rows = "".join(
        f"<tr><td>{_e(t.topic)}</td><td>{_e(human(t.target, s.unit))}</td>"
        f"<td>{t.partitions_now}</td><td>{t.partitions_needed}</td>"
        f"<td>{t.partitions_recommended}</td><td>{t.consumers_worth_running}</td></tr>"
        for t in s.per_topic
    )
    return (
        "<p>The figures above are for all profiled topics read together (one group "
        "subscribed to all of them). Sized one topic at a time, with the same Tp and Tc:</p>"
        "<table class='per-topic'><tr><th>topic</th><th>target</th><th>partitions now</th>"
        "<th>needed</th><th>recommended</th><th>consumers worth running</th></tr>"
        f"{rows}</table>"
    )


def _hot_keys(s: Sizing) -> str:
    if not s.hot_keys:
        return (
            "<p>The profile names no hot keys (unkeyed traffic, or sizing without a "
            "profile).</p>"
        )
    shown = s.hot_keys[:HOT_KEY_ROWS]
    rows = []
    for h in shown:
        over = h.rate > s.consumer_per_partition
        verdict = "no: split the key or speed up its processing" if over else "yes"
        rows.append(
            f"<tr><td>{_e(h.topic)}</td><td>{h.partition}</td><td class='text'>{_e(h.key)}</td>"
            f"<td>{_e(human(h.rate, s.unit))}</td><td>{h.share:.0%}</td>"
            f"<td class='text {'bad' if over else 'ok'}'>{_e(verdict)}</td></tr>"
        )
    over_count = sum(1 for h in s.hot_keys if h.rate > s.consumer_per_partition)
    more = (
        f" The other {len(s.hot_keys) - len(shown)} are in "
        f"<a href='{SIZING_JSON}'>{SIZING_JSON}</a>."
        if len(s.hot_keys) > len(shown)
        else ""
    )
    verdict = (
        f"{'1 key alone carries' if over_count == 1 else f'{over_count} keys alone carry'} "
        "more than one consumer takes "
        f"({_e(human(s.consumer_per_partition, s.unit))}): no partition count helps them."
        if over_count
        else f"No key alone carries more than one consumer takes "
        f"({_e(human(s.consumer_per_partition, s.unit))})."
    )
    return (
        "<p>Each partition's hottest key. A key always lands on one partition, so one "
        f"consumer reads all of it. {verdict}{more}</p>"
        "<table class='hot'><tr><th>topic</th><th>partition</th><th class='text'>key</th>"
        "<th>rate</th><th>share of the partition</th>"
        "<th class='text'>one consumer can take it</th></tr>"
        f"{''.join(rows)}</table>"
    )


def section_sizing(s: Sizing) -> str:
    """The HTML of the section (its heading is added by the page)."""
    rule = "".join(f"<li><code>{_e(line)}</code></li>" for line in rule_lines(s))
    return f"""
<p>How many partitions the topics need and how many consumers are worth running, from what
one partition takes from producers (Tp) and gives to one consumer (Tc). The same figures
as JSON: <a href="{SIZING_JSON}" download>{SIZING_JSON}</a>.</p>
<h3>Inputs</h3>
{_inputs(s)}
<h3>The rule, with these numbers</h3>
<p>A topic needs at least max(Tt/Tp, Tt/Tc) partitions, whichever side is slower;
consumers beyond the partition count sit idle.</p>
<ul class="rule">{rule}</ul>
<h3>Recommendation</h3>
{_answer(s)}
{_per_topic(s)}
<h3 id="hot-keys">Hot keys</h3>
{_hot_keys(s)}
"""
