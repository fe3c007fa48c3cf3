"""python -m integration_tests.usage_matrix --client kafka-python --out docs/results/

Starts its own broker (or uses ``--bootstrap``), runs the client's matrix and writes
``usage_matrix_<client>.json`` and ``.md`` into ``--out``. Exit status 1 if ours was worse
than the client alone in any cell.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import CLIENTS, zygote
from .report import from_json, write
from .runner import run_matrix, summary


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).parent, check=False).stdout.strip()
    except OSError:
        return ""


def run_meta(client: Any, parallel: int) -> dict[str, Any]:
    dirty = " (with uncommitted changes)" if _git("status", "--porcelain", "--", ".") else ""
    return {
        "client": client.name,
        "commit": f"{_git('rev-parse', '--short', 'HEAD')}{dirty} "
                  f"({_git('log', '-1', '--format=%s')[:90]})",
        **client.describe(),
        "python": platform.python_version(),
        "date (UTC)": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "parallel pairs": parallel,
        "members": zygote.describe(),
        "cores, load (1 min) at start": f"{os.cpu_count()}, {os.getloadavg()[0]:.1f}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m integration_tests.usage_matrix")
    parser.add_argument("--client", choices=sorted(CLIENTS), default="kafka-python")
    parser.add_argument("--out", type=Path, default=Path("docs/results"))
    parser.add_argument("--bootstrap", help="an existing broker (default: start one)")
    parser.add_argument("--cells", help="comma-separated cell keys (default: all)")
    parser.add_argument("--protocols", default="eager,cooperative")
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--stem", help="file name without suffix (default usage_matrix_<client>)")
    parser.add_argument("--note", help="what this run is against, for the results file")
    parser.add_argument("--render", type=Path,
                        help="only write the Markdown again from this results JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    module, _, name = CLIENTS[args.client].partition(":")
    client = getattr(importlib.import_module(module), name)()
    cells = client.cells
    stem = args.stem or f"usage_matrix_{client.name.replace('-', '_')}"
    if args.render is not None:
        data = json.loads(args.render.read_text())
        data["meta"]["written again from the JSON at"] = _git("rev-parse", "--short", "HEAD")
        print(write(from_json(data, cells), data["meta"], args.out, stem))
        return 0
    if args.cells:
        keys = args.cells.split(",")
        cells = tuple(c for c in client.cells if c.key in keys)
    cluster = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from kafka_assignors.embedded import start_single_broker

        cluster = start_single_broker()
        bootstrap = cluster.bootstrap
    try:
        meta = run_meta(client, args.parallel)
        if args.note:
            meta["run against"] = args.note
        started = time.monotonic()
        pairs = run_matrix(bootstrap, client, cells=cells,
                           protocols=args.protocols.split(","), parallel=args.parallel,
                           broker_log=cluster.logs if cluster is not None else None)
        meta["wall time"] = f"{time.monotonic() - started:.0f} s"
    finally:
        if cluster is not None:
            cluster.close()
    paths = write(pairs, meta, args.out, stem)
    print(f"{summary(pairs)}; wrote {paths[0]} and {paths[1]}")
    for pair in pairs:
        if pair.worse:
            print(f"WORSE {pair.cell.key} {pair.protocol}: {'; '.join(pair.worse)}",
                  file=sys.stderr)
    return 1 if any(p.worse for p in pairs) else 0


if __name__ == "__main__":
    sys.exit(main())
