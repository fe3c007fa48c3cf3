"""The ``kafka-assignors`` command: one subcommand per module.

A subcommand module provides ``add_parser(subparsers)``, which adds its parser and
sets ``func`` (``Callable[[argparse.Namespace], int]``) as a default. Modules are
imported when the command line is parsed, so each must keep heavy imports (Docker,
Spark, ...) inside its ``func``. To add one (explain, simulate, profile, evaluate,
sizing, report, ...), write the module and list it in SUBCOMMANDS.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from . import __version__

SUBCOMMANDS: tuple[str, ...] = (
    "kafka_assignors.demo",
    "kafka_assignors.explain",
    "kafka_assignors.simulate_cli",
    "kafka_assignors.pipeline.cli",
)

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-assignors",
        description="Kafka consumer partition assignors: demo and tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging level (logs go to stderr; default INFO)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def setup_logging(level: str) -> None:
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    if level != "DEBUG":
        # kafka-python logs every refused connection and rebalance step; keep its warnings.
        logging.getLogger("kafka").setLevel(logging.WARNING)
        logging.getLogger("testcontainers").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.log_level)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        logging.getLogger("kafka_assignors").error("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
