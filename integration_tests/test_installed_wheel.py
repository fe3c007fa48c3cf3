"""The release as a user installs it: the built wheel in a fresh venv outside the checkout.

``scripts/dist.sh`` builds the sdist, the wheel (with the broker plugin jar inside) and the
jar; the wheel is installed with ``[embedded,spark]`` into a new virtual environment in a
temporary folder (no ``PYTHONPATH``, no editable install, the working directory outside the
checkout), and everything below runs from there: the import, every console command's
``--help``, ``simulate`` (quiet: nothing on stderr), the README's one line in a consumer
against the suite's broker, and ``kafka-assignors demo --short``, which builds its broker image
from the recipe inside the package (under its own tag, so the suite's image is untouched).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from integration_tests.conftest import BrokerHandle

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.search(
    r'__version__ = "(.+)"', (ROOT / "kafka_assignors" / "_version.py").read_text()
)
EXTRAS = "embedded,spark"
#: The demo's broker image, built from the installed package's recipe.
DEMO_IMAGE = "kafka-assignors/kafka:installed-wheel-test"


@dataclass(frozen=True)
class Installed:
    venv: Path
    home: Path  # the working directory: outside the checkout
    dist: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONUNBUFFERED"] = "1"
        env.update(extra)
        return env

    def run(self, *cmd: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(cmd), cwd=self.home, env=self.env(**env), capture_output=True, text=True,
            timeout=timeout, check=False, stdin=subprocess.DEVNULL,
        )


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, (
        f"{what}: exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
        f"--- stderr\n{proc.stderr[-4000:]}"
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("installed-wheel")
    assert ROOT not in base.parents, f"{base} is inside the checkout"
    dist, venv, home = base / "dist", base / "venv", base / "home"
    home.mkdir()
    built = subprocess.run(
        ["bash", str(ROOT / "scripts" / "dist.sh"), "--out", str(dist), "--skip-java-tests"],
        cwd=ROOT, env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True,
        timeout=1200, check=False,
    )
    _check(built, "scripts/dist.sh")
    assert VERSION is not None
    wheel = dist / f"kafka_assignors-{VERSION.group(1)}-py3-none-any.whl"
    assert wheel.is_file(), sorted(p.name for p in dist.iterdir())
    base_python = getattr(sys, "_base_executable", sys.executable)
    _check(subprocess.run([base_python, "-m", "venv", str(venv)], capture_output=True,
                          text=True, timeout=300, check=False), "python -m venv")
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         f"{wheel}[{EXTRAS}]"],
        cwd=home, capture_output=True, text=True, timeout=1200, check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    _check(pip, f"pip install {wheel.name}[{EXTRAS}]")
    yield Installed(venv, home, dist)


def test_import_is_the_installed_package(installed: Installed) -> None:
    """The venv imports the wheel's package (not the checkout), at the release's version,
    with the broker image's recipe and the plugin jar inside."""
    proc = installed.run(
        str(installed.bin / "python"), "-c",
        "import json, kafka_assignors as k, kafka_assignors.embedded.image as i; "
        "print(json.dumps({'file': k.__file__, 'version': k.__version__, "
        "'recipe': sorted(str(p.relative_to(i.RECIPE)) for p in i.RECIPE.rglob('*') "
        "if p.is_file())}))",
    )
    _check(proc, "import kafka_assignors")
    found = json.loads(proc.stdout)
    assert VERSION is not None and found["version"] == VERSION.group(1)
    assert Path(found["file"]).is_relative_to(installed.venv), found["file"]
    recipe = found["recipe"]
    for needed in ("build-image.sh", "Dockerfile", "entrypoint.sh", "ensure-docker.sh",
                   "lib.sh", "kafka-jars/broker/pom.xml", "kafka-jars/tools/pom.xml"):
        assert needed in recipe, recipe
    assert any(re.fullmatch(r"jars/kafka-assignors-broker-.+-kafka-api-\d+\.\d+\.jar", f)
               for f in recipe), recipe


def test_every_command_answers_help(installed: Installed) -> None:
    """Every console script, every subcommand and ``python -m kafka_assignors`` print help."""
    scripts = installed.run(
        str(installed.bin / "python"), "-c",
        "from importlib.metadata import entry_points; "
        "print('\\n'.join(e.name for e in entry_points(group='console_scripts') "
        "if e.value.startswith('kafka_assignors')))",
    )
    _check(scripts, "entry points")
    names = scripts.stdout.split()
    assert "kafka-assignors" in names
    listed = installed.run(
        str(installed.bin / "python"), "-c",
        "from kafka_assignors.cli import build_parser; p = build_parser(); "
        "print(' '.join(next(a for a in p._actions if isinstance(a.choices, dict)).choices))",
    )
    _check(listed, "the subcommands")
    commands = listed.stdout.split()
    assert {"demo", "simulate", "explain", "analyze"} <= set(commands), commands
    for name in names:
        top = installed.run(str(installed.bin / name), "--help")
        _check(top, f"{name} --help")
        for command in commands:
            assert command in top.stdout, top.stdout
            _check(installed.run(str(installed.bin / name), command, "--help"),
                   f"{name} {command} --help")
    _check(installed.run(str(installed.bin / "python"), "-m", "kafka_assignors", "--help"),
           "python -m kafka_assignors --help")


def test_simulate_is_quiet(installed: Installed) -> None:
    """``simulate`` prints its tables and logs nothing (no consumer runtime, no warnings)."""
    proc = installed.run(str(installed.bin / "kafka-assignors"), "simulate", "--topics",
                         "a:4,b:2", "--members", "2")
    _check(proc, "simulate")
    assert "cooperative-balanced-sticky" in proc.stdout
    assert proc.stderr == "", proc.stderr


README_CONSUMER = """
import sys, time
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka_assignors import CooperativeBalancedStickyAssignor

bootstrap, topic, group = sys.argv[1:4]
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, 3, 1)])
admin.close()
consumer = KafkaConsumer(
    topic,
    bootstrap_servers=bootstrap,
    group_id=group,
    partition_assignment_strategy=[CooperativeBalancedStickyAssignor()],
)
deadline = time.monotonic() + 90
while not consumer.assignment() and time.monotonic() < deadline:
    consumer.poll(timeout_ms=500)
print(sorted(tp.partition for tp in consumer.assignment()))
consumer.close()
"""


def test_readme_line_in_a_consumer(installed: Installed, kafka_broker: BrokerHandle) -> None:
    """The README's one line, run from the installed package, gets the consumer every partition."""
    script = installed.home / "readme_consumer.py"
    script.write_text(textwrap.dedent(README_CONSUMER))
    suffix = uuid.uuid4().hex[:8]
    proc = installed.run(str(installed.bin / "python"), str(script), kafka_broker.bootstrap,
                         f"installed-{suffix}", f"installed-{suffix}", timeout=180)
    _check(proc, "the README's consumer")
    assert proc.stdout.strip().splitlines()[-1] == "[0, 1, 2]", proc.stdout
    assert "Traceback" not in proc.stderr


def test_demo_short_runs_to_its_report(installed: Installed) -> None:
    """``kafka-assignors demo --short`` builds its broker from the package and ends with the
    recommendation and the report's path among its last 10 lines, with no WARNING."""
    try:
        # --max-time: the demo's own deadline (900 s by default), with room for the image
        # build and a loaded machine; the demo cleans up within about a minute after it
        proc = installed.run(str(installed.bin / "kafka-assignors"), "demo", "--short",
                             "--max-time", "1200", timeout=1500,
                             KAFKA_ASSIGNORS_BUILD_IMAGE=DEMO_IMAGE)
    finally:
        subprocess.run(["docker", "image", "rm", "-f", DEMO_IMAGE], capture_output=True,
                       timeout=120, check=False)
    _check(proc, "kafka-assignors demo --short")
    output = (proc.stdout + proc.stderr).splitlines()
    last = proc.stdout.strip().splitlines()[-10:]
    assert any(line.startswith("recommendation:") for line in last), "\n".join(last)
    report = next((line.split(":", 1)[1].strip() for line in last
                   if line.startswith("HTML report:")), None)
    assert report is not None and Path(report).is_file(), "\n".join(last)
    assert Path(report).is_relative_to(installed.home)
    assert not [line for line in output if "WARNING" in line], "\n".join(output[-40:])
    assert "Traceback" not in proc.stderr


def test_the_getting_started_wheel_line_installs(installed: Installed) -> None:
    """docs/getting-started.md's wheel line (``<!-- install: from the wheel -->``), as written,
    in a new venv from the folder holding ``dist/``: the package and the extras it names."""
    from integration_tests.test_install_from_checkout import install_block

    lines = install_block(ROOT / "docs" / "getting-started.md", "<!-- install: from the wheel -->")
    assert len(lines) == 1 and "dist/kafka_assignors-" in lines[0], lines
    venv = installed.dist.parent / "venv-getting-started"
    base_python = getattr(sys, "_base_executable", sys.executable)
    _check(subprocess.run([base_python, "-m", "venv", str(venv)], capture_output=True,
                          text=True, timeout=300, check=False), "python -m venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    _check(subprocess.run(["bash", "-c", f"set -euo pipefail\n{lines[0]}"],
                          cwd=installed.dist.parent, env=env, capture_output=True, text=True,
                          timeout=900, check=False), lines[0])
    proc = installed.run(str(venv / "bin" / "python"), "-c",
                         "import kafka_assignors, aiokafka, prometheus_client; "
                         "print(kafka_assignors.__file__)")
    _check(proc, "import from the getting-started venv")
    assert Path(proc.stdout.strip()).is_relative_to(venv), proc.stdout
