"""Everything the docs tell a user to run or open exists: every ``python -m`` module imports,
every ``kafka_assignors.*`` name resolves, every repository path, ``kafka-assignors``
subcommand and ``make`` target is there, and every link into the site or the repository
resolves (unit_tests/docs_pages.py says which files a user reads)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from kafka_assignors.cli import build_parser

from .docs_pages import (
    CLI,
    DOCS,
    DOTTED,
    LINK,
    MAKE,
    PYTHON_M,
    RAW,
    REPO,
    REPO_PATH,
    ROOT,
    SITE,
    Line,
    all_lines,
    git_tags,
    heading_anchors,
    nav_pages,
)

LINES = all_lines()
#: Placeholders in paths and commands (``dist/kafka_assignors-*.whl``, ``<version>``).
_PLACEHOLDER = re.compile(r"[*<>{}$]|\bX\.Y|VERSION|\.\.\.")
#: What a build writes (not in a clone until built).
_BUILT = re.compile(r"(^|/)(target|dist|site|build|reports|\.venv)(/|$)")
#: A file or folder path in backquotes: ``runtime/manifest.py``, ``docs/results/``.
_TICKED_PATH = re.compile(r"`([\w.-]+/[\w./-]*\.(?:py|md|sh|json|ya?ml|toml|xml|java|txt))`")
#: Where a path in backquotes may start: the repository, the package, the site, or (quoting
#: the clients' own files) the installed kafka-python or aiokafka, from inside it or by its name.
_BASES = (ROOT, ROOT / "kafka_assignors", ROOT / "docs",
          *(base for name in ("kafka", "aiokafka")
            if (spec := importlib.util.find_spec(name)) is not None and spec.origin
            for base in (Path(spec.origin).parent, Path(spec.origin).parent.parent)))


def _found(pattern: re.Pattern[str], commands: bool = False) -> list[tuple[Line, str]]:
    return [(line, m.group(1)) for line in LINES
            for m in pattern.finditer(line.commands if commands else line.text)]


def _module_exists(name: str) -> bool:
    """Whether ``python -m name`` finds a module (the checkout's, or an installed one)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_every_python_m_module_exists() -> None:
    """``python -m X`` names a module that exists: a moved module fails here."""
    found = _found(PYTHON_M)
    assert len(found) >= 10
    missing = [str(line) for line, name in found if not _module_exists(name.rstrip("."))]
    assert not missing, "\n".join(missing)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    cut = len(parts)
    while cut > 1:
        base = ROOT.joinpath(*parts[:cut])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            break
        cut -= 1
    module, attrs = ".".join(parts[:cut]), parts[cut:]
    if not attrs:
        return True
    try:
        obj: object = importlib.import_module(module)
    except ModuleNotFoundError as error:
        # an optional extra this environment lacks: the module's file exists, that is all
        # that can be checked here
        return not (error.name or "").startswith("kafka_assignors")
    for attr in attrs:
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def test_every_package_name_resolves() -> None:
    """Every ``kafka_assignors.x.y`` in backquotes is a module or a name in one."""
    found = _found(DOTTED)
    assert len(found) >= 30
    missing = [str(line) for line, name in found if not _resolves(name.rstrip("."))]
    assert not missing, "\n".join(missing)


def test_every_repository_path_exists() -> None:
    """Every path into the repository a page names (``scripts/dist.sh``,
    ``integration_tests/usage_matrix/``) is there."""
    found = _found(REPO_PATH)
    assert len(found) >= 20
    missing = []
    for line, path in found:
        path = path.split("::")[0].rstrip(".,:;")
        if _PLACEHOLDER.search(path) or _BUILT.search(path):
            continue
        if not (ROOT / path).exists():
            missing.append(f"{line} -> {path}")
    assert not missing, "\n".join(missing)


def test_every_path_in_backquotes_exists() -> None:
    """A file path in backquotes (``kafka_python/runtime/manifest.py``) is in the repository,
    from its root or from the package's."""
    found = _found(_TICKED_PATH)
    missing = [f"{line} -> {path}" for line, path in found
               if not (_PLACEHOLDER.search(path) or _BUILT.search(path))
               and not any((base / path).exists() for base in _BASES)]
    assert not missing, "\n".join(missing)


def _subcommands() -> set[str]:
    parser = build_parser()
    choices = next(a.choices for a in parser._actions if isinstance(a.choices, dict))
    return set(choices)


def test_every_cli_command_exists() -> None:
    """``kafka-assignors X`` names a subcommand the command line has."""
    commands = _subcommands()
    found = _found(CLI, commands=True)
    assert len(found) >= 10
    unknown = [str(line) for line, name in found
               if name not in commands and not _PLACEHOLDER.search(line.text)
               and name not in ("broker",)]  # the jar's name: kafka-assignors-broker-...
    assert not unknown, "\n".join(unknown)


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][\w-]*):", text, re.MULTILINE))


def test_every_make_target_exists() -> None:
    """``make X`` names a target of the Makefile."""
    targets = _make_targets()
    found = _found(MAKE, commands=True)
    assert len(found) >= 5
    unknown = [str(line) for line, name in found if name not in targets
               ]
    assert not unknown, "\n".join(unknown)


def _site_page(target: str) -> tuple[Path, str]:
    page, _, anchor = target.partition("#")
    return DOCS / (page[:-len(".html")] + ".md" if page.endswith(".html") else page), anchor


#: Files the build writes into the site (docs/gen_tables.py copies the figures).
_GENERATED = set(re.findall(r'^    "(img/[^"]+)":', (DOCS / "gen_tables.py").read_text(),
                            re.MULTILINE))


def _broken(line: Line, target: str, pages: set[Path], tags: set[str]) -> str | None:
    if target.startswith(SITE):
        page, anchor = _site_page(target[len(SITE):] or "index.html")
        if page not in pages:
            return "not a page of the site"
        if anchor and anchor not in heading_anchors(page):
            return f"no heading #{anchor} on {page.name}"
        return None
    for prefix in (REPO + "blob/main/", REPO + "tree/main/", RAW):
        if target.startswith(prefix):
            path = target[len(prefix):].split("#")[0]
            return None if (ROOT / path).exists() else "not in the repository"
    if target.startswith(REPO + "releases/tag/"):
        return None if target.rsplit("/", 1)[1] in tags else "no such tag"
    if re.match(r"[a-z]+:", target) or target.startswith("#"):
        return None  # elsewhere on the web, or an anchor mkdocs checks
    if line.page in ("README.md", "CHANGELOG.md", "CONTRIBUTING.md"):
        # shown on a package index, or inside the site (docs/changelog.md, contributing.md
        # include them), where a relative link would resolve against another folder
        return "a relative link here breaks where the file is shown (use an https URL)"
    file = (ROOT / line.page).parent / target.split("#")[0]
    if not file.exists() and target not in _GENERATED:
        return "no such file"
    if file.resolve().is_relative_to(DOCS / "results") or file.resolve().is_relative_to(
            DOCS / "compat"):
        return "left out of the site (docs/results/, docs/compat/): link it on GitHub"
    return None


def test_every_link_resolves() -> None:
    """Every link to a page of the site (and its anchor), to a file of the repository or to a
    tag resolves; a relative link never points at a file the site leaves out."""
    pages, tags = set(nav_pages()), git_tags()
    found = _found(LINK)
    assert len(found) >= 50
    broken = [f"{line} -> {target}: {why}" for line, target in found
              if (why := _broken(line, target, pages, tags))]
    assert not broken, "\n".join(broken)


def test_every_code_block_is_closed() -> None:
    """Every fenced code block ends: an unclosed fence swallows the rest of the page."""
    unclosed = []
    for page in sorted({line.page for line in LINES if line.page.endswith(".md")}):
        fences = [line for line in LINES if line.page == page
                  and line.text.lstrip().startswith("```")]
        if len(fences) % 2:
            unclosed.append(page)
    assert not unclosed, unclosed


@pytest.mark.parametrize("target", [
    "kafka_assignors.adapters.kafka_python_runtime.manifest", "kafka_assignors.NoSuchAssignor"])
def test_a_moved_name_is_caught(target: str) -> None:
    """The check itself: a module path that no longer exists does not resolve."""
    assert not _resolves(target)
    assert not _module_exists(target)
