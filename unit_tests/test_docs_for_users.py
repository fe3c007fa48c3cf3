"""Pages are written for users: no run logs. How a result was obtained (dates of runs, machine
loads and cores, counts of runs, earlier runs, our issue numbers, inventories of test files)
belongs in integration_tests/README.md or benchmarks/, never on a page a user reads (the
site, the README, the changelog, the examples). Caught by pattern, not by a list of phrases."""

from __future__ import annotations

import re

import pytest

from .docs_pages import FOR_CONTRIBUTORS, Line, all_lines

#: What gives a run log away, each with the kind of line it catches.
LAB_PATTERNS: dict[str, re.Pattern[str]] = {
    "a date": re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"),
    "a machine load": re.compile(r"\bload (?:average )?(?:of )?\d+(?:\.\d+)?\b|\b1-minute load"
                                 r"|\bload average\b", re.I),
    "this machine": re.compile(r"\b(?:this|the|our|a) (?:\d+-core |development |loaded |idle )"
                               r"(?:development )?machine\b|\bon \d+ cores\b", re.I),
    "earlier or other runs": re.compile(
        r"\b(?:earlier|previous|last|later|other|one session's|this session's) (?:test )?runs?\b"
        r"|\bfrom run to run\b|\bthis session\b|\bfresh[- ]clone\b|\bCI (?:stop|run)\b", re.I),
    "a count of runs": re.compile(r"\b\d+ (?:of|in|out of) \d+ (?:\w+ )?(?:runs|pairs|tries)\b"
                                  r"|\bin \d+ runs\b|\b\d+ runs? (?:of|in a row)\b", re.I),
    "our issue numbers": re.compile(r"(?<![\w-])issues? \d+\b", re.I),
    "a measurement date": re.compile(r"\bmeasured (?:on|in) (?:20\d\d|\w+ \d)", re.I),
}
#: More test files than this named in one section of a user page is an inventory of tests.
MAX_TEST_FILES = 3
_TEST_FILE = re.compile(r"\btest_\w+\.py\b")
#: Lines where a pattern means something else: a Keep-a-Changelog release heading, upstream
#: projects' issues (kafka-python #2999, aiokafka issue #1126).
_ALLOWED = re.compile(r"^## \[\d+\.\d+\.\d+\] - 20|(?:kafka-python|aiokafka|librdkafka|"
                      r"confluent-kafka(?:-python)?|franz-go|Kafka|Spark|KIP)(?:'s)? "
                      r"(?:issue |PR )?#\d+", re.I)

LINES = [line for line in all_lines() if line.page not in FOR_CONTRIBUTORS]


def _lab_lines(lines: list[Line]) -> list[str]:
    """Lines with a run log, also where its phrase runs on into the next line ("on the 2-core
    development / machine")."""
    found = []
    for line, following in zip(lines, [*lines[1:], None], strict=True):
        first = " ".join(_ALLOWED.sub(" ", line.text).split())
        joined = first + " " + (" ".join(_ALLOWED.sub(" ", following.text).split())
                                if following else "")
        kinds = [kind for kind, pattern in LAB_PATTERNS.items()
                 if any(m.start() < len(first) for m in pattern.finditer(joined))]
        if kinds:
            found.append(f"{line}  [{', '.join(kinds)}]")
    return found


def _pages() -> list[str]:
    return sorted({line.page for line in LINES})


@pytest.mark.parametrize("page", _pages())
def test_no_user_page_carries_a_run_log(page: str) -> None:
    """No line of the page has a date of a run, a machine's load or cores, a count of runs,
    an earlier run or an issue number of ours."""
    found = _lab_lines([line for line in LINES if line.page == page])
    assert not found, "move these to integration_tests/README.md or benchmarks/:\n" + "\n".join(
        found)


def _sections(page: str) -> dict[str, set[str]]:
    """The test files each section of ``page`` names (a section runs from one heading to the
    next: docs/upstream.md names the test that reproduces each defect, one per section)."""
    found: dict[str, set[str]] = {}
    heading = "(top)"
    for line in LINES:
        if line.page != page:
            continue
        if not line.in_code and line.text.startswith("#"):
            heading = line.text
        found.setdefault(heading, set()).update(m.group(0) for m in _TEST_FILE.finditer(line.text))
    return found


@pytest.mark.parametrize("page", _pages())
def test_no_user_page_lists_the_test_files(page: str) -> None:
    """A section may point at the tests that back its claims, not list the suite."""
    crowded = {heading: sorted(names) for heading, names in _sections(page).items()
               if len(names) > MAX_TEST_FILES}
    assert not crowded, crowded


@pytest.mark.parametrize("line", [
    "measured 2026-11-25 on the loaded machine", "8 at a time on 2 cores, load 22.6 at the start",
    "on this 2-core machine", "earlier runs: 41 there", "issue 22's scenario",
    "in 2 of 8 pairs of one session's runs", "Counts differ from run to run",
    "from 12 partitions on the 2-core development\n  machine (broker on the same machine)"])
def test_the_patterns_catch_the_kinds_of_lab_line(line: str) -> None:
    """The patterns catch each kind of line a run log leaves on a page."""
    lines = [Line("page.md", n, text, False) for n, text in enumerate(line.split("\n"), 1)]
    assert _lab_lines(lines)


@pytest.mark.parametrize("line", [
    "## [0.2.0] - 2027-01-15", "kafka-python #2999 (KIP-429)", "aiokafka #1126 asks for it",
    "a group of 3 members with 12 partitions", "`max.poll.interval.ms` of 300000"])
def test_the_patterns_spare_what_users_need(line: str) -> None:
    """Release headings, upstream issues and plain numbers are not run logs."""
    assert not _lab_lines([Line("page.md", 1, line, False)])
