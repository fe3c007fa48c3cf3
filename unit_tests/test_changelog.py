"""CHANGELOG.md is a changelog of releases (Keep a Changelog), and changelog.d/ holds
fragments towncrier can build the next release's section from."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from .docs_pages import git_tags

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
FRAGMENTS = ROOT / "changelog.d"
TYPES = ("added", "changed", "deprecated", "removed", "fixed")
#: Test-run language has no place in a changelog a user reads.
LAB_PHRASES = ("1-minute load", "load average", "fresh clone", "fresh-clone", "CI stop",
               "this session", "CI run")


def test_only_tagged_versions_are_listed_as_released() -> None:
    """``## [Unreleased]`` first (if anything is unreleased), then one ``## [X.Y.Z] -
    YYYY-MM-DD`` section per release, newest first, each with its ``vX.Y.Z`` tag in the
    repository: a version without a tag is not released, whatever its section says."""
    headings = re.findall(r"^## .*$", CHANGELOG, re.MULTILINE)
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", CHANGELOG,
                          re.MULTILINE)
    unreleased = [h for h in headings if h == "## [Unreleased]"]
    assert headings and len(releases) + len(unreleased) == len(headings), headings
    assert not unreleased or headings[0] == "## [Unreleased]", headings
    versions = [tuple(int(p) for p in v.split(".")) for v, _ in releases]
    assert versions == sorted(versions, reverse=True)
    tags = git_tags()
    untagged = [v for v, _ in releases if f"v{v}" not in tags]
    assert not untagged, f"listed as released without a tag: {untagged}"
    assert "<!-- towncrier release notes start -->" in CHANGELOG
    linked = re.findall(r"releases/tag/(v[\w.]+)", CHANGELOG)
    assert not [t for t in linked if t not in tags], f"links to missing tags: {linked}"


def test_entries_are_one_line_each_and_speak_to_users() -> None:
    """Every entry is one line, and no entry reports how a test run went."""
    entries = [line for line in CHANGELOG.splitlines() if line.startswith("- ")]
    continued = [line for line in CHANGELOG.splitlines() if line.startswith("  ")]
    assert entries and not continued
    lower = CHANGELOG.lower()
    assert not [p for p in LAB_PHRASES if p.lower() in lower]


def test_fragments_are_named_and_written_as_towncrier_reads_them() -> None:
    """``<name>.<n>.<type>.md``, one line, a known type."""
    for path in FRAGMENTS.iterdir():
        if path.name in ("README.md", "template.md.jinja"):
            continue
        parts = path.name.split(".")
        assert path.suffix == ".md" and parts[-2] in TYPES, path.name
        lines = path.read_text().strip().splitlines()
        assert len(lines) == 1, f"{path.name}: one line per change"
        assert not [p for p in LAB_PHRASES if p.lower() in lines[0].lower()], path.name


def test_towncrier_builds_the_next_section(tmp_path: Path) -> None:
    """A fragment of each type lands in a dated section above the last release."""
    for name in ("pyproject.toml", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(FRAGMENTS, tmp_path / "changelog.d")
    for n, kind in enumerate(TYPES):
        (tmp_path / "changelog.d" / f"check.{n}.{kind}.md").write_text(f"A {kind} change.\n")
    towncrier = Path(sys.executable).with_name("towncrier")
    proc = subprocess.run([str(towncrier), "build", "--yes", "--version", "99.0.0", "--date",
                           "2099-01-01"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    built = (tmp_path / "CHANGELOG.md").read_text()
    section = built[built.index("## [99.0.0] - 2099-01-01"):]
    section = section[:section.index("\n## [", 1)]
    for kind in TYPES:
        assert f"### {kind.capitalize()}" in section and f"- A {kind} change." in section
    assert built.index("## [99.0.0]") < built.index("## [Unreleased]")


def test_tags_are_read_from_a_worktree_and_packed_refs(tmp_path: Path) -> None:
    """The tag check reads loose and packed tags through a worktree's ``.git`` file."""
    common = tmp_path / "main" / ".git"
    (common / "refs" / "tags").mkdir(parents=True)
    (common / "refs" / "tags" / "v1.0.0").write_text("0" * 40 + "\n")
    (common / "packed-refs").write_text(
        f"# pack-refs with: peeled\n{'1' * 40} refs/tags/v0.9.0\n^{'2' * 40}\n"
        f"{'3' * 40} refs/heads/main\n")
    own = common / "worktrees" / "wt"
    own.mkdir(parents=True)
    (own / "commondir").write_text("../..\n")
    checkout = tmp_path / "wt"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {own}\n")
    assert git_tags(checkout) == {"v1.0.0", "v0.9.0"}
