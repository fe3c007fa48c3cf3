"""Argument types and checks shared by the ``kafka-assignors`` subcommands.

Each type either returns the parsed value or raises :class:`argparse.ArgumentTypeError`
with what the argument expected; the command line (:mod:`kafka_assignors.cli`) turns that
into one line naming the argument, and exit status 2.  Light imports only: the command
line imports this module to build its parser.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "bootstrap_servers",
    "count",
    "count_list",
    "existing_file",
    "existing_file_name",
    "existing_path",
    "factor",
    "headroom",
    "key_value",
    "non_negative",
    "non_negative_int",
    "offsets_spec",
    "positive",
    "rate",
    "time_spec",
    "topics_spec",
    "weights_spec",
]


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def _whole(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def count(text: str) -> int:
    """A whole number at least 1 (members, racks, records, consumers)."""
    value = _whole(text, "a whole number at least 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number at least 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """A whole number at least 0."""
    value = _whole(text, "a whole number at least 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number at least 0, got {text!r}")
    return value


def positive(text: str) -> float:
    """A number above 0 (timeouts, durations, rates in records/s)."""
    value = _number(text, "a number above 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}")
    return value


def non_negative(text: str) -> float:
    """A number at least 0 (a processing time)."""
    value = _number(text, "a number at least 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number at least 0, got {text!r}")
    return value


def factor(text: str) -> float:
    """A growth factor: a number above 0 (1 = no growth, 2 = twice the load)."""
    value = _number(text, "a factor above 0 (1 = no growth)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a factor above 0 (1 = no growth), got {text!r}")
    return value


def headroom(text: str) -> float:
    """A headroom factor: at least 1 (1 = no headroom, 1.5 = half again)."""
    value = _number(text, "a factor at least 1 (1 = no headroom)")
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a factor at least 1 (1 = no headroom), got {text!r}"
        )
    return value


_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def rate(text: str) -> float:
    """A throughput above 0, with an optional k/M/G suffix (decimal): 5M = 5,000,000."""
    what = "a rate above 0 (k/M/G suffixes, e.g. 5M)"
    stripped = text.strip()
    scale = _SCALE.get(stripped[-1:], 1.0)
    number = stripped[:-1] if stripped[-1:] in _SCALE else stripped
    try:
        value = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def count_list(text: str) -> list[int]:
    """Comma-separated whole numbers at least 1 (``2,3,6``)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers at least 1, comma-separated (e.g. 2,3,6), got {text!r}"
        )
    out = []
    for part in parts:
        if not part.isdigit() or int(part) < 1:
            raise argparse.ArgumentTypeError(
                f"expected whole numbers at least 1, comma-separated (e.g. 2,3,6), got {text!r}"
            )
        out.append(int(part))
    return out


def existing_file(text: str) -> Path:
    """The path of a file that exists."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"expected an existing file, got {text!r} (no such file)")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"expected a file, got {text!r} (not a file)")
    return path


def existing_file_name(text: str) -> str:
    """:func:`existing_file`, as the string given (for clients that take path strings)."""
    existing_file(text)
    return text


def existing_path(text: str) -> Path:
    """The path of a file or directory that exists (a Parquet output is a directory)."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(
            f"expected an existing file or directory, got {text!r} (no such path)"
        )
    return path


def key_value(text: str) -> str:
    """``KEY=VALUE`` with a non-empty key (kept as given; split by the command)."""
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return text


def bootstrap_servers(text: str) -> str:
    """``HOST[:PORT][,HOST[:PORT]...]`` with ports 1-65535 (the clients' default is 9092)."""
    parts = [p.strip() for p in text.split(",")]
    for part in parts:
        host, sep, port = part.rpartition(":") if ":" in part else (part, "", "")
        if not host or (sep and (not port.isdigit() or not 0 < int(port) < 65536)):
            raise argparse.ArgumentTypeError(
                f"expected HOST:PORT[,HOST:PORT...] (e.g. localhost:9092), got {text!r}"
            )
    return ",".join(parts)


def topics_spec(text: str) -> str:
    """``TOPIC:PARTITIONS[,...]`` with counts at least 1 (kept as text; parsed by the command)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(
            f"expected TOPIC:PARTITIONS[,...] (e.g. orders:12,payments:6), got {text!r}"
        )
    for part in parts:
        name, _, n = part.rpartition(":")
        if not name or not n.isdigit() or int(n) < 1:
            raise argparse.ArgumentTypeError(
                f"expected TOPIC:PARTITIONS[,...] with at least 1 partition each "
                f"(e.g. orders:12,payments:6), got {part!r}"
            )
    return text


#: Partition weight distributions: ``uniform``, or KIND:NUMBER with the number's range.
WEIGHT_KINDS: dict[str, tuple[str, Callable[[float], bool]]] = {
    "zipf": ("zipf:S (S > 0)", lambda x: x > 0),
    "hot": ("hot:SHARE (0 < SHARE < 1)", lambda x: 0 < x < 1),
    "lognormal": ("lognormal:SIGMA (SIGMA > 0)", lambda x: x > 0),
}
WEIGHT_FORMS = "uniform, zipf:S (S > 0), hot:SHARE (0 < SHARE < 1) or lognormal:SIGMA (SIGMA > 0)"


def weights_spec(text: str) -> str:
    """``uniform``, ``zipf:S``, ``hot:SHARE`` or ``lognormal:SIGMA`` (parameter required)."""
    spec = text.strip()
    if spec == "uniform":
        return spec
    kind, sep, arg = spec.partition(":")
    if kind not in WEIGHT_KINDS or not sep:
        raise argparse.ArgumentTypeError(f"expected {WEIGHT_FORMS}, e.g. zipf:1.2; got {text!r}")
    form, ok = WEIGHT_KINDS[kind]
    try:
        value = float(arg)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {form}; got {text!r}") from None
    if not math.isfinite(value) or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {form}; got {text!r}")
    return spec


def offsets_spec(boundary: str) -> Callable[[str], str]:
    """``earliest``/``latest`` (whichever ``boundary`` is) or Spark's JSON offsets."""

    def parse(text: str) -> str:
        if text.strip() in ("earliest", "latest"):
            return text.strip()
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError(
                f"expected '{boundary}' or Spark's JSON offsets like "
                f"'{{\"topic\":{{\"0\":100}}}}', got {text!r}"
            )
        return text

    return parse


def time_spec(text: str) -> str:
    """A time as ``profile --since`` takes it: ISO 8601, epoch ms, or relative ``-15m``."""
    from datetime import datetime

    stripped = text.strip()
    ok = stripped.isdigit()
    if not ok and stripped.startswith("-") and stripped[-1:] in ("s", "m", "h", "d"):
        try:
            ok = float(stripped[1:-1]) >= 0
        except ValueError:
            ok = False
    if not ok:
        try:
            datetime.fromisoformat(stripped)
            ok = True
        except ValueError:
            ok = False
    if not ok:
        raise argparse.ArgumentTypeError(
            "expected an ISO time (2026-01-31T12:00), epoch milliseconds or a relative time "
            f"like -15m, -2h, -1d; got {text!r}"
        )
    return stripped
