"""Virtual environments holding another kafka-python version, made on first use.

    python -m integration_tests.client_venvs python 2.3.3           # prints its interpreter
    python -m integration_tests.client_venvs pytest 2.3.3 FILE...   # runs pytest in it

Each lives under ``~/.cache/kafka-assignors/venvs/`` (``$XDG_CACHE_HOME`` is honoured),
holds ``kafka-python==VERSION`` plus the test tools at the versions this interpreter has,
and never this project: processes started with :func:`child_env` import the checkout
through ``PYTHONPATH``, so what runs is the code under test and the kafka-python asked for.
A lock file keeps parallel runs from building the same venv twice.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: The kafka-python 2.x releases the suite runs against (the newest 2.2 and 2.3).
KAFKA_PYTHON_2X = ("2.2.21", "2.3.3")
#: The test tools a venv gets (at this interpreter's versions), for unit tests run in it.
TEST_TOOLS = ("pytest", "hypothesis")
ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kafka-assignors" / "venvs"


def _requirements(version: str, tools: Sequence[str]) -> list[str]:
    pins = [f"kafka-python=={version}"]
    for tool in tools:
        try:
            pins.append(f"{tool}=={importlib.metadata.version(tool)}")
        except importlib.metadata.PackageNotFoundError:
            pins.append(tool)
    return pins


def kafka_python_venv(version: str, tools: Sequence[str] = TEST_TOOLS) -> Path:
    """The interpreter of a venv with ``kafka-python==version`` (made if missing)."""
    py = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    home = cache_dir() / f"kafka-python-{version}-{py}"
    python = home / "bin" / "python"
    requirements = _requirements(version, tools)
    ready = home / ".kafka-assignors-ready"
    want = "\n".join(requirements) + "\n"
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / f"{home.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if ready.exists() and ready.read_text() == want and python.exists():
            return python
        shutil.rmtree(home, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(home)], check=True, timeout=300)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        *requirements], check=True, timeout=600)
        ready.write_text(want)
    return python


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment with the checkout first on ``PYTHONPATH`` (and nothing of ours
    installed in the venv, so the checkout is what gets imported)."""
    env = dict(os.environ)
    paths = [str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) >= 2 and args[0] == "python":
        print(kafka_python_venv(args[1]))
        return 0
    if len(args) >= 2 and args[0] == "pytest":
        python = kafka_python_venv(args[1])
        command = [str(python), "-m", "pytest", "-p", "no:cacheprovider", *args[2:]]
        return subprocess.run(command, cwd=ROOT, env=child_env(), check=False).returncode
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
