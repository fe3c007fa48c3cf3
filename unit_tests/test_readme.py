"""The README, which is also the package's long description on a package index."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
#: What a terminal or a browser window shows without scrolling.
FIRST_SCREEN = "\n".join(README.splitlines()[:60])


def test_the_readme_is_at_most_200_lines() -> None:
    """The README introduces; the documentation site explains."""
    assert len(README.splitlines()) <= 200


def test_every_link_and_image_is_absolute() -> None:
    """Relative links and images break on a package index: every target is an https URL."""
    targets = re.findall(r"\]\(([^)\s]+)", README) + re.findall(r'src="([^"]+)"', README)
    assert targets
    relative = [t for t in targets if not t.startswith("https://")]
    assert not relative, relative


def test_the_first_screen_shows_the_one_line_the_table_and_the_runtime_switch() -> None:
    """A new user finds the one line, the assignor table and how to turn on the runtime
    without scrolling."""
    assert "partition_assignment_strategy=[CooperativeBalancedStickyAssignor()]" in FIRST_SCREEN
    assert "| Assignor (class) | Wire name |" in FIRST_SCREEN
    assert "from kafka_assignors.kafka_python import KafkaConsumer" in FIRST_SCREEN


def test_the_quick_start_has_the_two_commands() -> None:
    """`make demo` and `make test` are the two commands of the quick start."""
    assert re.search(r"^make demo\b", README, re.MULTILINE)
    assert re.search(r"^make test\b", README, re.MULTILINE)


def test_the_runtime_names_count_is_the_manifests() -> None:
    """The README states how many kafka-python names the runtime relies on: the manifest's count."""
    from kafka_assignors.kafka_python.runtime import manifest

    found = re.search(r"relies on (\d+) kafka-python names", README)
    assert found is not None, "the README no longer states the manifest's count"
    assert int(found.group(1)) == manifest.count()
