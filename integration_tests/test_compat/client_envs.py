"""Throwaway virtual environments with one client library pinned, and pytest runs in them.

``client_python("aiokafka", "0.12.0")`` returns the Python of a venv under
``~/.cache/kafka-assignors/client-envs/`` (``$XDG_CACHE_HOME`` respected; one per checkout)
holding this checkout (editable), its ``embedded`` extra, pytest and ``aiokafka==0.12.0``; made once
(pip, about half a minute with a warm cache) and reused while pyproject.toml is unchanged.
The version installed in the project's .venv needs none: its Python is returned.
:func:`run_pytest` runs some of the suite's tests with such a Python against a running
broker (``BOOTSTRAP_SERVERS``), so the member processes they start import that version.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .matrix import REPO, installed

ENV_TIMEOUT_S = 900.0
TEST_DEPS = ("pytest>=8", "pytest-timeout>=2.3")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-assignors" / "client-envs"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # parallel runs share the cache
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(cmd: Sequence[str], what: str) -> None:
    try:
        proc = subprocess.run(list(cmd), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=ENV_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{what}: no result in {ENV_TIMEOUT_S:.0f} s") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{tail}")


def client_python(package: str, version: str) -> str:
    """A Python whose ``package`` is exactly ``version`` (a venv made once, then reused)."""
    if installed(package) == version:
        return sys.executable
    recipe = "\n".join([package, version, str(REPO), *TEST_DEPS,
                        (REPO / "pyproject.toml").read_text()])
    key = hashlib.sha256(recipe.encode()).hexdigest()[:12]
    # one set per checkout (the venv installs it editable): clones that run at once must not
    # remove each other's venvs as "earlier recipes" (two fresh clones' compat cells failed so)
    checkout = hashlib.sha256(str(REPO).encode()).hexdigest()[:8]
    root = cache_dir()
    env = root / f"{package}-{version}-{checkout}-{key}"
    python = env / "bin" / "python"
    with _locked(root / f"{package}-{version}-{checkout}.lock"):
        if (env / ".complete").is_file():
            return str(python)
        # this checkout's earlier recipes, and the venvs of checkouts that are gone
        for old in root.glob(f"{package}-{version}-{checkout}-*"):
            shutil.rmtree(old, ignore_errors=True)
        _remove_orphans(root)
        _run([sys.executable, "-m", "venv", str(env)], f"venv for {package} {version}")
        _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
              "-e", f"{REPO}[embedded]", f"{package}=={version}", *TEST_DEPS],
             f"pip install of {package}=={version} into {env}")
        got = subprocess.run([str(python), "-c", "import sys; from importlib import metadata;"
                              f" print(metadata.version({package!r}))"],
                             capture_output=True, text=True, timeout=60, check=False)
        if got.stdout.strip() != version:
            raise RuntimeError(f"{env} has {package} {got.stdout.strip()!r}, not {version}")
        (env / ".complete").write_text(version + "\n")
    return str(python)


def _checkout_of(env: Path) -> Path | None:
    """The checkout a venv installed editable (pip's direct_url.json), None if unreadable."""
    for record in env.glob("lib/python*/site-packages/kafka_assignors-*.dist-info/direct_url.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            url = urllib.parse.urlparse(json.loads(record.read_text())["url"])
            if url.scheme == "file":
                return Path(urllib.parse.unquote(url.path))
    return None


def _remove_orphans(root: Path) -> None:
    """Delete the venvs whose checkout no longer exists (each fresh clone makes its own set,
    about 30 MB each: without this the cache only grows)."""
    for env in root.iterdir():
        checkout = _checkout_of(env) if env.is_dir() else None
        if checkout is None or checkout.exists():
            continue
        lock = root / (env.name.rsplit("-", 1)[0] + ".lock")
        with _locked(lock):
            shutil.rmtree(env, ignore_errors=True)
        lock.unlink(missing_ok=True)


@dataclass
class NestedRun:
    """The outcome of one pytest run in a client environment."""

    passed: int
    failed: int
    skipped: int
    output: str

    def check(self, expected: int) -> None:
        """Every one of the ``expected`` tests ran and passed (a skip is a failure here)."""
        assert (self.passed, self.failed, self.skipped) == (expected, 0, 0), (
            f"expected {expected} passed; got {self.passed} passed, {self.failed} failed, "
            f"{self.skipped} skipped:\n" + "\n".join(self.output.splitlines()[-80:]))


def run_pytest(python: str, tests: Sequence[str], bootstrap: str,
               timeout: float = 1200.0) -> NestedRun:
    """Run ``tests`` (node ids under integration_tests/) with ``python`` on ``bootstrap``."""
    with tempfile.TemporaryDirectory(prefix="compat-") as tmp:
        junit = Path(tmp) / "junit.xml"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("KAFKA_ASSIGNORS_COMPAT", "PYTEST_"))}
        env["BOOTSTRAP_SERVERS"] = bootstrap
        cmd = [python, "-m", "pytest", *tests, "-q", "-p", "no:cacheprovider",
               f"--junitxml={junit}", "--timeout=600"]
        try:
            proc = subprocess.run(cmd, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"{' '.join(tests)} did not finish in {timeout:.0f} s") from exc
        output = proc.stdout + proc.stderr
        if not junit.is_file():
            return NestedRun(0, 1, 0, output)
        suite = ET.parse(junit).getroot()
        suite = suite if suite.tag == "testsuite" else suite[0]
        total, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        return NestedRun(total - skipped - failed, failed, skipped, output)
