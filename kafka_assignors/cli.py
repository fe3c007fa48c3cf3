"""The ``kafka-assignors`` command (also ``python -m kafka_assignors``): one subcommand per module.

A subcommand module provides ``add_parser(subparsers)``, which adds its parser and
sets ``func`` (``Callable[[argparse.Namespace], int]``) as a default. Modules are
imported when the command line is parsed, so each must keep heavy imports (Docker,
Spark, ...) inside its ``func``. To add one (explain, simulate, profile, evaluate,
sizing, report, ...), write the module and list it in SUBCOMMANDS.

What every subcommand gets from here:

* a user's mistake on the command line is one line on stderr naming the argument and what it
  expected, exit status 2 (no usage dump, no traceback);
* ``--log-level`` works before and after the subcommand;
* a missing optional dependency is named with the ``pip install 'kafka-assignors[EXTRA]'``
  that brings it, before the command starts its work (:data:`REQUIRES`), and a command that
  needs kafka-python 3 says so in one line on kafka-python 2.x;
* an unexpected error is one line too (exit 1); ``--log-level DEBUG`` shows its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn

from ._version import __version__

SUBCOMMANDS: tuple[str, ...] = (
    "kafka_assignors.demo",
    "kafka_assignors.explain",
    "kafka_assignors.simulate_cli",
    "kafka_assignors.pipeline.cli",
)

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
PROG = "kafka-assignors"
#: Set (to anything) to print the traceback of an unexpected error too: the demo sets it for
#: its pipeline step, whose output goes to a log file.
TRACEBACK_ENV = "KAFKA_ASSIGNORS_TRACEBACK"

#: The extra that brings each optional top-level module.
EXTRA_OF_MODULE = {
    "pyspark": "spark",
    "pyarrow": "spark",
    "pandas": "spark",
    "matplotlib": "spark",
    "grpc": "spark",
    "yaml": "yaml",
    "testcontainers": "embedded",
    "docker": "embedded",
    "confluent_kafka": "confluent",
    "aiokafka": "aiokafka",
    "prometheus_client": "prometheus",
    "opentelemetry": "otel",
}
_SPARK = ("pyspark", "pyarrow", "pandas", "matplotlib", "yaml")


def _demo_requires(args: argparse.Namespace) -> tuple[str, ...]:
    broker = () if args.bootstrap else ("testcontainers", "docker")
    report = () if args.no_report else _SPARK
    return broker + report


#: The optional modules a command needs (checked before it starts), by subcommand: a tuple,
#: or a function of the parsed arguments.
REQUIRES: dict[str, tuple[str, ...] | Callable[[argparse.Namespace], tuple[str, ...]]] = {
    "demo": _demo_requires,
    "profile": ("pyspark", "pyarrow", "pandas"),
    "evaluate": ("pyspark", "pyarrow", "pandas", "yaml"),
    "analyze": _SPARK,
    "report": ("pandas", "pyarrow", "matplotlib"),
}
#: Subcommands that build on kafka-python 3's internals (on 2.x they say so in one line):
#: everything but sizing from given rates and the report.
NEEDS_KAFKA_PYTHON_3: dict[str, bool | Callable[[argparse.Namespace], bool]] = {
    "demo": True,
    "explain": True,
    "simulate": True,
    "profile": True,
    "evaluate": True,
    "analyze": True,
    "sizing": lambda args: bool(args.measure),
}


class CommandLineError(Exception):
    """A user's mistake found after parsing: one line, exit status 2."""


class MissingDependency(Exception):
    """The command needs a package that is not installed: one line, exit status 1."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``PROG CMD: error: ...``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    # On a subcommand the default is SUPPRESS: given there, it wins; not given, the top
    # level's value (or default) stays.
    parser.add_argument(
        "--log-level",
        type=str.upper,
        default="INFO" if top else argparse.SUPPRESS,
        choices=LOG_LEVELS,
        help="logging level (logs go to stderr; default INFO); before or after the command",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Kafka consumer partition assignors: demo and tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _global_options(parser, top=True)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    for name in SUBCOMMANDS:
        importlib.import_module(name).add_parser(subparsers)
    for sub in subparsers.choices.values():
        _global_options(sub, top=False)
    return parser


def setup_logging(level: str) -> None:
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    if level != "DEBUG":
        # kafka-python logs every refused connection and rebalance step; keep its warnings.
        logging.getLogger("kafka").setLevel(logging.WARNING)
        logging.getLogger("testcontainers").setLevel(logging.WARNING)


def install_hint(*modules: str) -> str:
    """What to install for missing modules: ``pip install 'kafka-assignors[spark]'``."""
    tops = [m.split(".")[0] for m in modules]
    extras = {EXTRA_OF_MODULE[t] for t in tops if t in EXTRA_OF_MODULE}
    if "spark" in extras:
        extras.discard("yaml")  # the spark extra brings PyYAML too
    others = [t for t in tops if t not in EXTRA_OF_MODULE]
    hints = [f"pip install 'kafka-assignors[{','.join(sorted(extras))}]'"] if extras else []
    hints += [f"pip install {t}" for t in others]
    return " and ".join(hints)


def _kafka_python_major() -> int | None:
    try:
        from kafka.version import __version__ as version
    except ImportError:
        return None
    head = str(version).split(".")[0]
    return int(head) if head.isdigit() else None


def check_requirements(args: argparse.Namespace) -> None:
    """Raise MissingDependency naming what to install when a command lacks a dependency."""
    needs_3 = NEEDS_KAFKA_PYTHON_3.get(args.command, False)
    if (needs_3(args) if callable(needs_3) else needs_3) and (_kafka_python_major() or 3) < 3:
        raise MissingDependency(_needs_kafka_python_3())
    needed = REQUIRES.get(args.command, ())
    modules = needed(args) if callable(needed) else needed
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependency(
            f"this needs {', '.join(missing)}, not installed here: {install_hint(*missing)}"
        )


def _needs_kafka_python_3() -> str:
    from kafka.version import __version__ as version

    return (
        f"this command needs kafka-python 3 (installed: {version}): "
        "pip install 'kafka-python>=3,<4'"
    )


def _fail(command: str, message: str, code: int) -> int:
    print(f"{PROG} {command}: error: {message}", file=sys.stderr)
    return code


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command, turning any error into one line and an exit status."""
    command = str(args.command)
    log = logging.getLogger("kafka_assignors")
    try:
        check_requirements(args)
        return int(args.func(args))
    except CommandLineError as exc:
        return _fail(command, str(exc), 2)
    except MissingDependency as exc:
        return _fail(command, str(exc), 1)
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except BrokenPipeError:
        # the reader went away (`... | head`): nothing more to say, and nowhere to say it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except ModuleNotFoundError as exc:
        log.debug("missing module", exc_info=True)
        name = exc.name or ""
        if name.split(".")[0] == "kafka" and (_kafka_python_major() or 3) < 3:
            return _fail(command, _needs_kafka_python_3(), 1)
        return _fail(command, f"this needs {name}, not installed here: {install_hint(name)}", 1)
    except Exception as exc:
        log.debug("%s failed", command, exc_info=True)
        if isinstance(exc, _input_errors()):
            return _fail(command, str(exc), 2)
        if (_kafka_python_major() or 3) < 3 and _from_kafka_python(exc):
            return _fail(command, _needs_kafka_python_3(), 1)
        if os.environ.get(TRACEBACK_ENV):
            traceback.print_exc()
        detail = str(exc) or type(exc).__name__
        return _fail(
            command,
            f"{type(exc).__name__}: {detail} (--log-level DEBUG shows where)",
            1,
        )


#: Errors about a file or name the user gave (a grid, a profile, an assignor): exit 2.
_INPUT_ERRORS = (
    ("kafka_assignors.simulator.grid", "GridError"),
    ("kafka_assignors.load.profile", "LoadProfileError"),
    ("kafka_assignors.simulator.registry", "UnknownAssignorError"),
)


def _input_errors() -> tuple[type[BaseException], ...]:
    """The classes of :data:`_INPUT_ERRORS` whose modules are loaded (none is imported here)."""
    found = []
    for module, name in _INPUT_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


def _from_kafka_python(exc: BaseException) -> bool:
    """An AttributeError about one of kafka-python's modules (its 2.x lacks some names)."""
    return isinstance(exc, AttributeError) and "module 'kafka" in str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.log_level)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
