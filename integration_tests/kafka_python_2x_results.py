"""The kafka-python 2.x rows of the compatibility table, from one run:

    python -m integration_tests.kafka_python_2x_results [--out docs/compat/kafka_python_2x.json]

Runs the adapter's unit tests in a venv per kafka-python 2.x version (:mod:`.client_venvs`)
and the live tests of ``test_kafka_python_2x_live.py`` (a broker of their own, Testcontainers
as in the suite; ``KAFKA_ASSIGNORS_KP2_LIVE`` picks the 2.x versions the live tests run),
and writes one entry per test and version, ``{component, version, column, test, outcome,
seconds}``: the raw results format of the compatibility matrix's table generator
(``table.py --from FILE --merge``). Every cell is the eager column: kafka-python 2.x has
no other. Exit status 1 if any test failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from .client_venvs import ROOT, child_env, kafka_python_venv

UNIT_TESTS = ("unit_tests/test_kafka_python_versions.py", "unit_tests/test_user_data_ownership.py")
LIVE_TESTS = "integration_tests/test_kafka_python_2x_live.py"
#: unit level: the two maintained lines and 2.0.2 (still in use); live: see the test file
UNIT_VERSIONS = ("2.0.2", "2.2.21", "2.3.3")
LIVE_ENV = "KAFKA_ASSIGNORS_KP2_LIVE"


def _cases(junit: Path) -> list[dict[str, Any]]:
    out = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        outcome = "passed"
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        out.append({"test": f"{path}.py::{case.get('name')}", "outcome": outcome,
                    "seconds": round(float(case.get("time", 0)), 1)})
    return out


def _pytest(python: str, args: list[str], junit: Path, env: dict[str, str]) -> None:
    subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={junit}", *args], cwd=ROOT, env=env, check=False,
                   timeout=3600)


def _version_of(test: str, default: str) -> str:
    """A live test's 2.x version: its parameter id, e.g. ``...[2.2.21]``."""
    if test.endswith("]") and "[" in test:
        return test[test.rindex("[") + 1:-1]
    return default


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m integration_tests.kafka_python_2x_results")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/compat/kafka_python_2x.json")
    args = parser.parse_args(argv)
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kp2-results-") as tmp:
        for version in UNIT_VERSIONS:
            junit = Path(tmp) / f"unit-{version}.xml"
            _pytest(str(kafka_python_venv(version)), list(UNIT_TESTS), junit, child_env())
            entries += [{"version": version, **case,
                         "test": f"{case['test']} (kafka-python {version})"}
                        for case in _cases(junit)]
        junit = Path(tmp) / "live.xml"
        _pytest(sys.executable, [LIVE_TESTS], junit, dict(os.environ))
        entries += [{"version": _version_of(case["test"], "2.3.3"), **case}
                    for case in _cases(junit)]
    cells = [{"component": "kafka-python", "column": "eager", **e} for e in entries
             if e["outcome"] != "skipped"]
    cells.sort(key=lambda e: (e["version"], e["test"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(cells, indent=1) + "\n")
    failed = [e for e in cells if e["outcome"] == "failed"]
    print(f"{len(cells)} results, {len(failed)} failed; wrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
