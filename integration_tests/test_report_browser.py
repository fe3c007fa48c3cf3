"""The browser check itself: it catches what a reader would see broken, and without a
browser it fails instead of skipping.  (The pipeline's own reports go through the same
check in test_pipeline_evaluate.py and, for the demo's report, test_cli.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from .browser import check_report

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head>
<body><nav><ol><li><a href="#one">One</a></li>{toc}</ol></nav>
<section id="one"><h2>One</h2><p>text</p>{body}</section></body></html>"""


def _page(tmp_path: Path, toc: str = "", body: str = "") -> Path:
    path = tmp_path / "page.html"
    path.write_text(PAGE.format(toc=toc, body=body))
    return path


def _png(tmp_path: Path) -> str:
    """A real 2x2 PNG beside the page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(0.5, 0.5), dpi=4)
    fig.savefig(tmp_path / "ok.png")
    plt.close(fig)
    return '<img src="ok.png" alt="ok">'


def test_a_sound_page_passes_and_leaves_a_screenshot(tmp_path: Path) -> None:
    """A page whose contents, images and links are all there passes; the full-page
    screenshot lands beside it."""
    (tmp_path / "data.json").write_text("{}")
    page = _page(tmp_path, body=_png(tmp_path) + '<a href="data.json" download>data</a>')
    seen = check_report(page)
    assert seen.sections == ["One"] and seen.images == 1
    assert seen.screenshot == tmp_path / "report-screenshot.png"


@pytest.mark.parametrize(
    ("toc", "body", "complaint"),
    [
        ("", '<img src="missing.png" alt="x">', "console errors"),
        ("", "<script>console.error('boom')</script>", "console errors"),
        ('<li><a href="#two">Two</a></li>', "", "the contents name #two"),
        ("", '<pre>{"target": 1, "unit": "b", "x": 2}</pre>', "JSON printed in the page"),
        ("", '<a href="gone.json">json</a>', "which does not exist"),
    ],
    ids=["broken image", "console error", "missing section", "raw json", "dead link"],
)
def test_what_a_reader_would_see_broken_fails(
    tmp_path: Path, toc: str, body: str, complaint: str
) -> None:
    """A broken image, a console error, a section the contents name but the page lacks,
    JSON printed in a <pre>, a link to a missing file: each fails the check, saying so."""
    page = _page(tmp_path, toc=toc, body=_png(tmp_path) + body)
    with pytest.raises(AssertionError, match=complaint):
        check_report(page)


def test_without_a_browser_the_check_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Chromium where it is said to be: the test fails with how to install one; it is
    never skipped."""
    monkeypatch.setenv("KAFKA_ASSIGNORS_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(pytest.fail.Exception, match=r"scripts/bootstrap\.sh"):
        check_report(_page(tmp_path))
