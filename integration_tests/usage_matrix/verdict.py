"""The one check every usage-matrix test makes: run the client's matrix on the suite's shared
broker, write the results, and fail with each worse cell's logs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..scheduling import LoadSampler, describe
from .plans import Client
from .report import write
from .runner import run_matrix, summary
from .zygote import describe as members


def assert_never_worse(kafka_broker: Any, client: Client, tmp_path: Path, *, alone: str,
                       protocols: Sequence[str] = ("eager", "cooperative"),
                       nothing_twice_on_clean: bool = False) -> None:
    """Ours is worse than ``alone`` (the client without us) in no cell; with
    ``nothing_twice_on_clean``, ours also reads nothing twice on a clean rebalance."""
    broker_log = kafka_broker.cluster.logs if kafka_broker.cluster is not None else None
    load = LoadSampler()  # the machine's, beside the judge's own stall probe
    try:
        pairs = run_matrix(kafka_broker.bootstrap, client, protocols=tuple(protocols),
                           broker_log=broker_log)
    finally:
        load.close()
    machine = describe([sample for _, sample in load.samples])
    waited = sorted(p.admission_wait for p in pairs)
    meta = {"client": client.name, **client.describe(), "machine load": machine,
            "pairs waited for CPU room": (f"{sum(waited):.0f} s in all, at most "
                                          f"{waited[-1] if waited else 0:.0f} s"),
            "members": members()}
    stem = f"usage_matrix_{client.name.replace('-', '_')}"
    _, md_path = write(pairs, meta, tmp_path, stem)
    print(f"usage matrix ({client.name} {client.version}): {summary(pairs)}; {machine}; "
          f"{md_path}")
    failures = [f"{p.cell.key} ({p.protocol}): {'; '.join(p.worse)}\n"
                + "\n".join(f"[{side}]\n{tail}" for side, tail in p.logs.items())
                for p in pairs if p.worse]
    assert not failures, (f"ours worse than {alone} (results: {md_path}; {machine}):\n"
                          + "\n\n".join(failures))
    if nothing_twice_on_clean:
        twice = [f"{p.cell.key} ({p.protocol}): {p.ours.duplicates}" for p in pairs
                 if p.cell.clean and p.ours.duplicates]
        assert not twice, f"read twice on a clean rebalance: {twice}"
