"""The Python examples of the documentation: every ```python block of every page in the site's
navigation (mkdocs.yml) and of README.md, in order, with what each needs.

Conventions (docs/architecture.md, "The documentation"):

* a block runs as written, in a fresh interpreter, from the repository's root;
* ``broker:9092`` stands for a broker: the test replaces it with the suite's broker, and every
  ``group_id="X"`` / ``"group.id": "X"`` gets a suffix unique to the run;
* ``<!-- example: needs MODULE[.NAME] -->`` on the line before a block names a module (or a
  name in it) the block needs; where it does not exist the block is expected to fail.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BROKER = "broker:9092"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)")
_NEEDS = re.compile(r"<!--\s*example:\s*needs\s+(?P<name>[\w.]+)\s*-->")


@dataclass(frozen=True)
class Example:
    page: str  # relative to the repository
    index: int  # 1-based among the page's Python blocks
    line: int  # of the opening fence
    code: str
    needs: str | None

    @property
    def id(self) -> str:
        return f"{self.page}#{self.index}"

    @property
    def uses_broker(self) -> bool:
        return BROKER in self.code

    def available(self) -> bool:
        """Whether what the block says it needs exists here."""
        if self.needs is None:
            return True
        parts = self.needs.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
            if found:
                obj: object = importlib.import_module(module)
                for attr in parts[cut:]:
                    if not hasattr(obj, attr):
                        return False
                    obj = getattr(obj, attr)
                return True
        return False


def nav_pages() -> list[Path]:
    """Every Markdown page the site's navigation lists, in order."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages: list[Path] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            pages.append(DOCS / node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    return pages


def examples_of(path: Path) -> list[Example]:
    lines = path.read_text().splitlines()
    found: list[Example] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match or not match.group("lang"):
            i += 1
            continue
        indent, lang, start = match.group("indent"), match.group("lang"), i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if lang != "python":
            continue
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        needs = _NEEDS.search(before)
        found.append(Example(str(path.relative_to(ROOT)), len(found) + 1, start + 1,
                             "\n".join(body) + "\n", needs.group("name") if needs else None))
    return found


def all_examples() -> list[Example]:
    return [e for page in [*nav_pages(), ROOT / "README.md"] for e in examples_of(page)]


def for_broker(code: str, bootstrap: str, suffix: str) -> str:
    """The block as it runs against the suite's broker."""
    code = code.replace(BROKER, bootstrap)
    code = re.sub(r'(group_id=")([^"]+)(")', rf"\g<1>\g<2>-{suffix}\g<3>", code)
    return re.sub(r'("group\.id":\s*")([^"]+)(")', rf"\g<1>\g<2>-{suffix}\g<3>", code)
