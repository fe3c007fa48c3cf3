"""What a user reads: the site's pages (mkdocs.yml's nav), the README, the changelog, the
contributing guide, the examples; and how to pull module paths, commands, repository paths and
links out of them (for unit_tests/test_docs_references.py and test_docs_for_users.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SITE = "https://kafka-assignors.readthedocs.io/en/latest/"
REPO = "https://github.com/kafka-assignors/kafka-assignors/"
RAW = "https://raw.githubusercontent.com/kafka-assignors/kafka-assignors/main/"
#: Pages written for contributors, where test files and runs may be named.
FOR_CONTRIBUTORS = ("docs/architecture.md", "CONTRIBUTING.md")


@dataclass(frozen=True)
class Line:
    page: str  # relative to the repository
    number: int
    text: str
    in_code: bool  # inside a fenced code block

    @property
    def commands(self) -> str:
        """What on this line a user would type: the whole line in a code block, else the
        spans in backquotes."""
        return self.text if self.in_code else "\n".join(re.findall(r"`([^`]+)`", self.text))

    def __str__(self) -> str:
        return f"{self.page}:{self.number}: {self.text.strip()[:140]}"


def git_tags(root: Path = ROOT) -> set[str]:
    """The repository's tags, read from its files (a unit test starts no ``git`` process):
    ``refs/tags/`` and ``packed-refs`` of the common git directory (a worktree's ``.git`` is
    a file naming its own directory, whose ``commondir`` leads to the shared one)."""
    git = root / ".git"
    if git.is_file():
        git = (root / git.read_text().split("gitdir:", 1)[1].strip()).resolve()
    if (git / "commondir").is_file():
        git = (git / (git / "commondir").read_text().strip()).resolve()
    tags = {str(p.relative_to(git / "refs" / "tags")) for p in (git / "refs" / "tags").rglob("*")
            if p.is_file()} if (git / "refs" / "tags").is_dir() else set()
    packed = git / "packed-refs"
    if packed.is_file():
        tags |= {line.split("refs/tags/", 1)[1].strip() for line in packed.read_text().splitlines()
                 if "refs/tags/" in line and not line.startswith("^")}
    return tags


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


def user_files() -> list[Path]:
    """Every file a user reads: pages, README, changelog (and its fragments), the contributing
    guide and the examples."""
    files = [*nav_pages(), ROOT / "README.md", ROOT / "CHANGELOG.md"]
    files += sorted(p for p in (ROOT / "changelog.d").glob("*.md") if p.name != "README.md")
    files += [p for p in (ROOT / "CONTRIBUTING.md",) if p.is_file()]
    files += sorted((ROOT / "examples").glob("*.py"))
    files += [p for p in (ROOT / "examples" / "README.md",) if p.is_file()]
    return [p for p in files if p.name != "changelog.md"]  # docs/changelog.md includes CHANGELOG.md


def lines_of(path: Path) -> list[Line]:
    page = str(path.relative_to(ROOT))
    lines, in_code = [], path.suffix == ".py"
    for n, text in enumerate(path.read_text().splitlines(), 1):
        fence = text.lstrip().startswith("```")
        if fence:
            in_code = not in_code
        lines.append(Line(page, n, text, in_code and not fence))
    return lines


def all_lines() -> list[Line]:
    return [line for path in user_files() for line in lines_of(path)]


def text_of(path: Path) -> str:
    return path.read_text()


#: ``python -m module`` (also ``python3``, ``.venv/bin/python``).
PYTHON_M = re.compile(r"\bpython3?(?:\.\d+)? -m ([A-Za-z_][\w.]*)")
#: A dotted name of the package in backquotes: ``kafka_assignors.x.y``.
DOTTED = re.compile(r"`(kafka_assignors(?:\.[A-Za-z_]\w*)+)")
#: A path in the repository in backquotes or a code line.
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:kafka_assignors|integration_tests|unit_tests|benchmarks|scripts|docker"
    r"|examples|broker-assignor|changelog\.d)/[\w./-]*)")
#: ``kafka-assignors SUBCOMMAND``.
CLI = re.compile(r"(?:^|[\s`$(])kafka-assignors ([a-z][\w-]*)")
#: ``make TARGET``.
MAKE = re.compile(r"(?:^|[\s`;&(])make ([a-z][\w-]*)")
#: A Markdown link's target.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchors(path: Path) -> set[str]:
    """The anchors mkdocs' toc gives a page's headings (its default slugify)."""
    anchors: set[str] = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip())
        slug = re.sub(r"[^\w\s-]", "", title).strip().lower()
        anchors.add(re.sub(r"[-\s]+", "-", slug))
    return anchors
