"""A new user with the checkout and the docs alone: the install block of docs/getting-started.md
(``<!-- install: from the checkout -->``: clone, make a virtual environment, ``pip install``
from the source tree) runs as written, without root, and the one line then gets a consumer
every partition of a topic on the suite's broker.

The clone is of this repository (the block's GitHub address is swapped for the checkout's
path: what is committed is what a clone gets). Run as root (as ``make test`` is), the block
runs as an unprivileged user (uid 65534 through ``setpriv``) with the system's Python, so a
step that needs root fails here; ``HOME`` is a temporary folder, so ``~`` is too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from integration_tests.conftest import BrokerHandle
from integration_tests.docs_examples import examples_of, for_broker
from integration_tests.test_docs_examples import TOPICS
from integration_tests.test_installed_wheel import README_CONSUMER

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- install: from the checkout -->"
UPSTREAM = "https://github.com/kafka-assignors/kafka-assignors"
NOBODY = 65534
#: A system Python without the checkout's virtual environment on its path.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def install_block(page: Path, mark: str = MARK) -> list[str]:
    """The command lines of the ```bash block right after the install mark."""
    lines = page.read_text().splitlines()
    start = lines.index(mark)
    assert lines[start + 1].startswith("```bash"), lines[start + 1]
    end = lines.index("```", start + 2)
    return [line for line in lines[start + 2:end] if line.strip()]


def _unprivileged() -> list[str]:
    """The prefix that drops root, where root can drop to a user whose Python is 3.11+."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = subprocess.run([*prefix, "env", f"PATH={SYSTEM_PATH}", "python3", "-c",
                            "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"],
                           capture_output=True, text=True, timeout=60, check=False)
    return prefix if probe.returncode == 0 else []


@dataclass(frozen=True)
class Installed:
    home: Path
    python: Path
    as_user: list[str]

    def run(self, *cmd: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.as_user, *cmd], cwd=self.home, env=_env(self.home),
                              capture_output=True, text=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_USER")}
    env.update(HOME=str(home), PATH=SYSTEM_PATH, PYTHONUNBUFFERED="1")
    return env


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, (
        f"{what}: exit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n"
        f"--- stderr\n{proc.stderr[-3000:]}")


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    # not pytest's tmp_path: its parent folders are root's alone, the user could not enter them
    with tempfile.TemporaryDirectory(prefix="kafka-assignors-new-user-") as folder:
        home = Path(folder)
        home.chmod(0o755)
        yield _install(home)


def _install(home: Path) -> Installed:
    as_user = _unprivileged()
    commands = install_block(ROOT / "docs" / "getting-started.md")
    clone = next(c for c in commands if c.startswith("git clone "))
    # the clone as root (git refuses a repository another user owns), the rest as the user
    local = clone.replace(UPSTREAM, f"{ROOT} kafka-assignors")
    _check(subprocess.run(local, shell=True, cwd=home, capture_output=True, text=True,
                          timeout=300, check=False), clone)
    if as_user:
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True, timeout=120)
    script = "set -euo pipefail\n" + "\n".join(c for c in commands if c != clone) + "\n"
    proc = subprocess.run([*as_user, "bash", "-c", script], cwd=home, env=_env(home),
                          capture_output=True, text=True, timeout=900, check=False)
    who = " as uid 65534" if as_user else ""
    _check(proc, f"the install block of docs/getting-started.md{who}")
    activate = next(c for c in commands if "bin/activate" in c)
    venv = re.search(r"\. (\S+)/bin/activate", activate)
    assert venv is not None, activate
    python = Path(venv.group(1).replace("~", str(home))) / "bin" / "python"
    assert python.is_file(), python
    return Installed(home, python, as_user)


def test_the_readme_installs_the_same_way() -> None:
    """The README's install block is the getting-started block without the clone."""
    readme = install_block(ROOT / "README.md")
    started = install_block(ROOT / "docs" / "getting-started.md")
    assert readme and set(readme) <= set(started), (readme, started)
    assert not [c for c in started if re.search(r"\bsudo\b|apt-get", c)], started


def test_the_package_comes_from_the_venv(installed: Installed) -> None:
    """The venv imports the installed package (not the clone), with the extras the block asks
    for, and the command line answers."""
    proc = installed.run(str(installed.python), "-c",
                         "import kafka_assignors, aiokafka, prometheus_client; "
                         "print(kafka_assignors.__file__)")
    _check(proc, "import kafka_assignors")
    assert Path(proc.stdout.strip()).is_relative_to(installed.python.parent.parent)
    _check(installed.run(str(installed.python.parent / "kafka-assignors"), "--help"),
           "kafka-assignors --help")


def test_the_one_line_gets_every_partition(installed: Installed,
                                           kafka_broker: BrokerHandle) -> None:
    """The one line, from the fresh install, in a consumer on the suite's broker."""
    script = installed.home / "one_line.py"
    script.write_text(textwrap.dedent(README_CONSUMER))
    if installed.as_user:
        os.chown(script, NOBODY, NOBODY)
    name = f"checkout-{uuid.uuid4().hex[:8]}"
    proc = installed.run(str(installed.python), str(script), kafka_broker.bootstrap, name, name)
    _check(proc, "the one line")
    assert proc.stdout.strip().splitlines()[-1] == "[0, 1, 2]", proc.stdout
    assert "Traceback" not in proc.stderr


def test_the_getting_started_example_runs_as_written(installed: Installed,
                                                     kafka_broker: BrokerHandle) -> None:
    """The one-line block of docs/getting-started.md ("Use it: one line"), as written, from the
    fresh install (its topics made first, its broker and group made the suite's)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap)
    try:
        missing = [t for t in TOPICS if t not in admin.list_topics()]
        if missing:
            admin.create_topics([NewTopic(t, num_partitions=3, replication_factor=1)
                                 for t in missing])
    except TopicAlreadyExistsError:
        pass  # test_docs_examples made them meanwhile
    finally:
        admin.close()
    block = examples_of(ROOT / "docs" / "getting-started.md")[0]
    assert "partition_assignment_strategy=[CooperativeBalancedStickyAssignor()]" in block.code
    script = installed.home / "getting_started.py"
    script.write_text(for_broker(block.code, kafka_broker.bootstrap, uuid.uuid4().hex[:8]))
    if installed.as_user:
        os.chown(script, NOBODY, NOBODY)
    _check(installed.run(str(installed.python), str(script)), "the getting-started block")
