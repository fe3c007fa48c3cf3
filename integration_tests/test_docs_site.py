"""The documentation site as a reader gets it: it builds with warnings as errors, every page
opens in headless Chromium without a console error or a broken image, no page says how a
result was obtained, and `make docs` serves it."""

from __future__ import annotations

import functools
import html
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from .browser import check_site
from .docs_examples import DOCS, nav_pages

ROOT = Path(__file__).resolve().parent.parent
#: How results were obtained belongs in integration_tests/README.md, benchmarks/ or
#: docs/results/, never on a page a user reads.
LAB_PHRASES = ("1-minute load", "load average", "fresh clone", "fresh-clone", "CI stop")
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mkdocs build --strict` into a fresh directory (a warning fails the build)."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-6000:]}"
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "assets" not in p.parts)


def _text(page: Path) -> str:
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page.read_text(), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1 (as `make docs` serves it), for the browser."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _tiny_site() -> str:
    """A one-page site with this site's link settings: its ``validation:`` and its hooks but the
    table generator."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    hooks = [str(ROOT / h) for h in config["hooks"] if not h.endswith("gen_tables.py")]
    assert hooks, "no link hook in mkdocs.yml"
    return str(yaml.safe_dump({
        "site_name": "dead links", "docs_dir": "docs", "strict": True,
        "exclude_docs": "results/\n", "hooks": hooks, "validation": config["validation"],
        "nav": ["index.md"]}))


@pytest.mark.parametrize("target", ["results/run.md", "missing.md", "#no-such-heading"])
def test_the_strict_build_fails_on_an_unresolved_link(tmp_path: Path, target: str) -> None:
    """With this site's settings (mkdocs.yml's ``validation:`` and docs/hooks/strict_links.py),
    a link to a file the site leaves out, to no file or to no heading fails ``--strict``."""
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "run.md").write_text("# A run\n")
    (tmp_path / "docs" / "index.md").write_text(f"# Home\n\nSee [it]({target}).\n")
    (tmp_path / "mkdocs.yml").write_text(_tiny_site())
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0, proc.stderr[-2000:]
    assert "WARNING" in proc.stderr and "Aborted with" in proc.stdout + proc.stderr, (
        proc.stdout + proc.stderr)[-2000:]


def test_every_navigation_page_is_built(site: Path) -> None:
    """Each task the reader came for has its page, and the pages carry no build leftovers."""
    for name in ("index", "getting-started", "assignors", "clients/kafka-python",
                 "clients/aiokafka", "confluent", "runtime", "migration", "broker-assignor",
                 "metrics", "cli", "commands", "pipeline", "benchmarks", "compatibility",
                 "troubleshooting", "api", "changelog", "architecture", "security", "logging",
                 "exceptions", "contributing"):
        page = site / f"{name}.html"
        assert page.is_file(), f"{name}.html was not built"
        text = _text(page)
        assert "<!-- gen:" not in page.read_text(), f"{name}: a table marker was not replaced"
        assert "--8<--" not in text, f"{name}: a snippet was not included"
    assert not (site / "results").exists(), "docs/results/ (lab notes) must not be rendered"


def test_generated_tables_name_the_command_that_regenerates_them(site: Path) -> None:
    """Each generated table is followed by the command that regenerates its result file."""
    text = _text(site / "benchmarks.html")
    assert text.count("Regenerate:") >= 5
    for command in ("python -m benchmarks.assignors", "python -m benchmarks.rebalance_timings",
                    "python -m benchmarks.broker_assignor"):
        assert command in text
    assert "Regenerate: scripts/compat-matrix.sh" in _text(site / "compatibility.html")


def _page_names() -> list[object]:
    names = [str(p.relative_to(DOCS).with_suffix(".html")) for p in nav_pages()]
    return [pytest.param(n, id=n, marks=[pytest.mark.xfail(reason=AWAITING[n], strict=True)]
                         if n in AWAITING else []) for n in names]


#: Pages that still carry lab notes (none today): strict, so an entry must go when its page is
#: fixed.
AWAITING: dict[str, str] = {}


@pytest.mark.parametrize("name", _page_names())
def test_no_page_says_how_a_result_was_obtained(site: Path, name: str) -> None:
    """The lab's phrases (machine load, reruns from fresh clones, CI stops) are on no page of
    the site."""
    text = _text(site / name).lower()
    assert not [p for p in LAB_PHRASES if p.lower() in text]


def test_the_readme_says_nothing_of_how_results_were_obtained() -> None:
    """Nor in the README, the package's long description."""
    readme = (ROOT / "README.md").read_text().lower()
    assert not [p for p in LAB_PHRASES if p.lower() in readme]


def test_every_page_opens_in_chromium_without_errors(site: Path, served: str) -> None:
    """Headless Chromium opens every built page from the local server: no console error, every
    image loaded, and the benchmark page shows its figure (the site needs no network)."""
    urls = [served + str(p.relative_to(site)) for p in _pages(site)]
    seen = check_site(urls)
    assert len(seen) == len(urls) >= 18
    problems = [(p.url, p.console_errors, p.broken_images) for p in seen
                if p.console_errors or p.broken_images]
    assert not problems, problems
    benchmarks = next(p for p in seen if p.url.endswith("/benchmarks.html"))
    assert benchmarks.images >= 1
    assert all(p.title for p in seen)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_make_docs_serves_the_site() -> None:
    """`make docs` serves the site locally: its home page answers over HTTP."""
    port = _free_port()
    proc = subprocess.Popen(["make", "docs", f"DOCS_ADDR=127.0.0.1:{port}"], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        body = ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answer:
                    body = answer.read().decode()
                    break
            except OSError:
                time.sleep(1)
        assert "kafka-assignors" in body, (
            f"make docs did not serve the site (exit {proc.poll()})")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
