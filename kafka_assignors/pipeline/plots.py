"""The report's PNG plots (matplotlib, no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

DPI = 110
_PALETTE = [plt.get_cmap("tab10")(i) for i in range(10)]


def colour(name: str, names: Sequence[str]) -> Any:
    """The same colour for an assignor in every plot of a report."""
    return _PALETTE[sorted(names).index(name) % len(_PALETTE)] if name in names else "grey"


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _grouped_bars(ax: Any, table: Any, ylabel: str, baseline: float | None = None) -> None:
    """Bars for each row (group on the x axis) and column (one colour per assignor)."""
    groups, series = list(table.index), [str(c) for c in table.columns]
    width = 0.8 / max(1, len(series))
    for i, name in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, table[name].to_numpy(), width, label=name, color=colour(name, series))
    ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=15, ha="right")
    ax.set_ylabel(ylabel)
    if baseline is not None:
        ax.axhline(baseline, color="grey", linewidth=0.8, linestyle="--")
    ax.grid(axis="y", alpha=0.3)


def imbalance(steps: Any, path: Path) -> Path:
    """Mean load imbalance (busiest consumer / mean) per assignor, per cluster shape."""
    ok = steps[steps["error"].isna()]
    table = ok.pivot_table(
        index="cluster", columns="assignor", values="load_imbalance", aggfunc="mean"
    )
    fig, ax = plt.subplots(figsize=(9, 4.2))
    _grouped_bars(ax, table, "busiest consumer / mean load", baseline=1.0)
    ax.set_title("Load imbalance by cluster shape (1.0 = perfectly even; lower is better)")
    ax.set_ylim(bottom=max(0.0, min(0.9, float(table.min().min()) - 0.05)))
    ax.legend(fontsize=8, ncol=3)
    return _save(fig, path)


def movement(steps: Any, path: Path) -> Path:
    """Partitions moved per rebalance, per churn kind: all moves and the avoidable ones."""
    later = steps[steps["error"].isna() & (steps["step"] > 0)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, column, title in (
        (axes[0], "moved", "All partitions moved per rebalance"),
        (axes[1], "moved_from_stayers", "Of them, taken from consumers that stayed"),
    ):
        table = later.pivot_table(index="kind", columns="assignor", values=column, aggfunc="mean")
        _grouped_bars(ax, table, "partitions per rebalance (mean)")
        ax.set_title(title, fontsize=10)
    axes[1].legend(fontsize=8, ncol=2)
    fig.suptitle("Movement by event kind (lower is better)")
    return _save(fig, path)


def tradeoff(figures: Sequence[Any], path: Path) -> Path:
    """One point per assignor: mean avoidable moves against mean load imbalance."""
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    usable = [f for f in figures if not f.failures]
    xs = [f.moved_from_stayers for f in usable]
    ys = [f.load_imbalance for f in usable]
    # assignors landing on (nearly) the same point - a strategy and its cooperative variant,
    # say - share one marker and one label instead of printing over each other
    x_span = (max(xs) - min(xs)) if xs else 0.0
    y_span = (max(ys) - min(ys)) if ys else 0.0
    points: dict[tuple[int, int], list[Any]] = {}
    for f in usable:
        key = (round(f.moved_from_stayers / (x_span or 1.0) * 50),
               round(f.load_imbalance / (y_span or 1.0) * 50))
        points.setdefault(key, []).append(f)
    above: list[tuple[float, float]] = []  # points labelled above-right so far
    for group in sorted(points.values(), key=lambda g: g[0].moved_from_stayers):
        x, y = group[0].moved_from_stayers, group[0].load_imbalance
        ax.scatter(x, y, s=60)
        # a label would run into the one of a point just left of it at the same height:
        # put this one below its point
        crowded = any(abs(y - py) < 0.08 * (y_span or 1.0) and x - px < 0.3 * (x_span or 1.0)
                      for px, py in above)
        if not crowded:
            above.append((x, y))
        ax.annotate(
            "\n".join(f.assignor for f in group),
            (x, y),
            textcoords="offset points",
            xytext=(6, -14 * len(group)) if crowded else (6, 4),
            fontsize=9,
        )
    ax.margins(0.08, 0.12)  # room for the labels of points at the edges
    ax.set_xlabel("avoidable moves per rebalance (mean)")
    ax.set_ylabel("busiest consumer / mean load (mean)")
    ax.set_title("Balance against stickiness (best: bottom left)")
    ax.grid(alpha=0.3)
    return _save(fig, path)


def partition_load(
    rates: Mapping[str, float], capacity: float | None, unit: str, path: Path
) -> Path:
    """The measured rate of every partition, busiest first, against one consumer's capacity."""
    items = sorted(rates.items(), key=lambda kv: -kv[1])
    fig, ax = plt.subplots(figsize=(10, 3.8))
    ax.bar(range(len(items)), [v for _, v in items], color="#4C72B0")
    if len(items) <= 40:
        ax.set_xticks(range(len(items)), [k for k, _ in items], rotation=60, ha="right", fontsize=7)
    else:
        ax.set_xlabel(f"{len(items)} partitions, busiest first")
    if capacity:
        ax.axhline(capacity, color="#C44E52", linestyle="--", label="one consumer's capacity")
        ax.legend(fontsize=8)
    ax.set_ylabel(unit)
    ax.set_title("Measured load per partition")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def consumer_load(loads: Mapping[str, Mapping[str, float]], unit: str, path: Path) -> Path:
    """Load per consumer of the measured profile under each assignor (one panel each)."""
    names = list(loads)
    cols = min(3, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False, sharey=True
    )
    for ax in axes.flat[len(names) :]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names, strict=False):
        per = loads[name]
        values = [per[m] for m in sorted(per)]
        mean = sum(values) / len(values) if values else 0.0
        ax.bar(range(len(values)), values, color=colour(name, names))
        ax.axhline(mean, color="grey", linestyle="--", linewidth=0.8)
        top = max(values) / mean if mean else 1.0
        ax.set_title(f"{name}  (busiest {top:.2f}x mean)", fontsize=9)
        ax.set_xticks(range(len(values)), [str(i) for i in range(len(values))], fontsize=7)
        ax.set_xlabel("consumer", fontsize=8)
    axes[0][0].set_ylabel(unit)
    fig.suptitle("Measured load per consumer under each assignor (dashed: mean)")
    return _save(fig, path)
