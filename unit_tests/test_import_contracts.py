"""The layering of docs/architecture.md holds: import-linter's contracts in pyproject.toml."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kafka_assignors"


def test_the_import_contracts_are_kept() -> None:
    """core imports no client and nothing above it, `import kafka_assignors` stays light, and
    no module imports from a layer above its own (listed exceptions aside)."""
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "4 kept, 0 broken" in proc.stdout, proc.stdout[-2000:]


def test_every_module_of_the_package_has_a_layer() -> None:
    """A new top-level module or package cannot escape the layers: each is
    named in the layers contract, or lies inside a package that is."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    named = {m.strip("() \n") for layer in layers for m in re.split(r"[:|]", layer)}
    modules = [f"kafka_assignors.{p.stem if p.is_file() else p.name}"
               for p in PACKAGE.iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()]
    unlayered = [m for m in modules
                 if not any(m == n or m.startswith(n + ".") for n in named)]
    assert not unlayered, f"give these a layer in pyproject.toml: {unlayered}"
