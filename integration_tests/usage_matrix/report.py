"""The matrix results as JSON and as a Markdown table (one row per cell and protocol)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .judge import SideResult, phase_allowance, time_allowed
from .runner import PairResult


def to_json(pairs: Sequence[PairResult], meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "meta": dict(meta),
        "cells": [
            {"cell": p.cell.key, "title": p.cell.title, "protocol": p.protocol,
             "clean": p.cell.clean, "slack_s": p.cell.slack_s, "seconds": p.seconds,
             "ours": p.ours.to_json(), "alone": p.alone.to_json(),
             **({"plain": p.plain.to_json()} if p.plain is not None else {}),
             "worse": p.worse, "alone_wrong": p.alone_wrong}
            for p in pairs
        ],
    }


def from_json(data: Mapping[str, Any], cells: Sequence[Any]) -> list[PairResult]:
    """The pairs of a results file again (to re-render it without running the matrix)."""
    by_key = {cell.key: cell for cell in cells}
    return [PairResult(by_key[c["cell"]], c["protocol"], SideResult(**c["ours"]),
                       SideResult(**c["alone"]), c["worse"], c["alone_wrong"], c["seconds"],
                       plain=SideResult(**c["plain"]) if "plain" in c else None)
            for c in data["cells"]]


def _settle(side: SideResult) -> str:
    parts = []
    for label, t in side.settle.items():
        parts.append(f"{label} {'never' if t is None else f'{t:.1f}'}")
    return ", ".join(parts)


def _did(side: SideResult, clean: bool, cooperative: bool) -> str:
    bits = []
    if side.exceptions:
        bits.append("**" + ", ".join(f"{n} x {k}" for k, n in side.exceptions.items()) + "**")
    bits.append(f"{side.read}/{side.produced} read, {side.lost} lost, "
                f"{side.duplicates} twice{'' if clean else ' (unclean)'}")
    if side.unread:
        bits.append(f"{side.unread} unread at the end (not committed past)")
    if side.expelled:
        bits.append(f"{len(side.expelled)} expelled")
    bits.append(f"settled (s): {_settle(side)}")
    if any(side.stall.values()):
        stalls = ", ".join(f"{k} {v:.1f}" for k, v in side.stall.items())
        bits.append(f"machine stall (s): {stalls}")
    if cooperative and side.pause_s is not None:
        bits.append(f"kept-partition pause {side.pause_s:.2f} s (floor {side.floor_s:.2f} s)")
    if side.longest_call_s >= 0.5:
        bits.append(f"longest call {side.longest_call_s:.1f} s")
    for key, value in side.extra.items():
        if key != "stop_wall":
            bits.append(f"{key}: {value}")
    return "; ".join(bits)


def _short(side: SideResult, clean: bool, cooperative: bool) -> str:
    """One cell of the compact table: what went wrong, else the total time to settle."""
    bits = [f"**{n} x {k}**" for k, n in side.exceptions.items()]
    if side.expelled:
        bits.append(f"**{len(side.expelled)} expelled**")
    if side.lost:
        bits.append(f"**{side.lost} lost**")
    if side.duplicates and clean:
        bits.append(f"{side.duplicates} read twice")
    never = [label for label, t in side.settle.items() if t is None]
    if never:
        bits.append("never settled: " + ", ".join(never))
    total = sum(t for t in side.settle.values() if t is not None)
    bits.append(f"settled in {total:.1f} s" if not never else "")
    if cooperative and side.pause_s is not None and side.pause_s >= 1.0:
        bits.append(f"kept partitions paused {side.pause_s:.1f} s")
    return ", ".join(b for b in bits if b)


def compact(pairs: Sequence[PairResult], client: str = "kafka-python") -> list[str]:
    """Every cell in one row: eager and cooperative, ours and alone side by side."""
    lines = [f"| how the consumer is used | eager: ours | eager: {client} alone "
             f"| cooperative: ours | cooperative: {client} alone | ours never worse |",
             "|---|---|---|---|---|---|"]
    by_cell: dict[str, dict[str, PairResult]] = {}
    p: PairResult | None  # a pair, then a cell's pair for a protocol (None: not run)
    for p in pairs:
        by_cell.setdefault(p.cell.title, {})[p.protocol] = p
    for title, row in by_cell.items():
        cells = []
        for protocol in ("eager", "cooperative"):
            p = row.get(protocol)
            if p is None:
                cells += ["-", "-"]
                continue
            coop = protocol == "cooperative"
            cells += [_short(p.ours, p.cell.clean, coop), _short(p.alone, p.cell.clean, coop)]
        verdicts = [f"**no** ({protocol})" for protocol, p in row.items() if p.worse]
        first = next(iter(row.values()))
        verdict = ", ".join(verdicts) or ("not judged" if first.cell.not_judged else "yes")
        lines.append(f"| {title} | {' | '.join(cells)} | {verdict} |")
    return lines


def markdown(pairs: Sequence[PairResult], meta: Mapping[str, Any]) -> str:
    lines = [
        f"# Usage matrix: {meta.get('client')}",
        "",
        "Generated by `python -m integration_tests.usage_matrix "
        f"--client {meta.get('client')} --out <dir>`; do not edit by hand.",
        "",
        "| run | |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in meta.items()]
    lines += [
        "",
        "Each cell runs the same workload twice at the same moment on one broker: a topic "
        "with numbered records at 60/s, two members form the group, a third joins, one leaves "
        "cleanly (or the cell's own change). \"settled\" is the time from a change until the "
        "members together hold every partition once and each holds one. Ours is worse when it "
        "raised more exceptions of a type, expelled or lost more (lost: the group committed "
        "past a record nobody read), read twice on a clean "
        "rebalance where alone did not (or more than twice as often where alone did too), "
        "never settled after a change where alone did, or took longer over the cell's changes "
        "than 1.5 x alone + 1 s + the cell's slack per change (twice that for a "
        "cooperative change: two rounds) + the machine stall a probe "
        "process measured in ours' own change windows (about 0 on an idle machine) "
        "(`integration_tests/usage_matrix/judge.py`).",
        "",
        "## Summary (settle times summed over the cell's changes)",
        "",
        *compact(pairs, str(meta.get('client'))),
        "",
        "## Every cell in detail",
        "",
        f"| cell | protocol | ours | {meta.get('client')} alone | ours never worse? "
        "| alone wrong |",
        "|---|---|---|---|---|---|",
    ]
    for p in pairs:
        cooperative = p.protocol == "cooperative"
        verdict = "yes" if not p.worse else "**no**: " + "; ".join(p.worse)
        if p.cell.not_judged:
            verdict = f"not judged: {p.cell.not_judged}"
        lines.append(
            f"| {p.cell.title} | {p.protocol} | {p.ours.strategy}: "
            f"{_did(p.ours, p.cell.clean, cooperative)}"
            + (f"<br>{p.plain.strategy}: {_did(p.plain, p.cell.clean, cooperative)}"
               if p.plain is not None else "")
            + f" | {p.alone.strategy}: "
            f"{_did(p.alone, p.cell.clean, cooperative)} | {verdict} | "
            f"{'; '.join(p.alone_wrong) or '-'} |")
    worse = sum(1 for p in pairs if p.worse)
    lines += ["", f"{len(pairs)} cells, ours worse in {worse}. Times: ours <= 1.5 x alone "
              f"+ 1 s + slack per change (alone 6.0 s over 3 changes, slack 3 s: "
              f"{time_allowed(6.0, 9.0):.1f} s eager, "
              f"{time_allowed(6.0, 3 * phase_allowance(3.0, 'cooperative')):.1f} s "
              "cooperative).", ""]
    return "\n".join(lines)


def write(pairs: Sequence[PairResult], meta: Mapping[str, Any], out: Path,
          stem: str) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"{stem}.json", out / f"{stem}.md"
    json_path.write_text(json.dumps(to_json(pairs, meta), indent=1) + "\n")
    md_path.write_text(markdown(pairs, meta))
    return json_path, md_path
