"""Open an HTML report in a real headless Chromium and check what a reader would see.

Debian's ``chromium`` and ``chromium-driver`` (scripts/bootstrap.sh installs them), driven
by Selenium through that chromedriver: Selenium Manager is never asked for a driver or a
browser, so nothing is downloaded.  Tested with Chromium 156 and Selenium 4.51.  Without a
browser the check fails, saying how to install one: it never skips.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from base64 import b64decode
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

#: The flags the closed network needs: nothing in the browser may try to phone home.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
)
INSTALL_HINT = (
    "run scripts/bootstrap.sh (make test does): it installs Debian's chromium and "
    "chromium-driver; or point KAFKA_ASSIGNORS_CHROMIUM / KAFKA_ASSIGNORS_CHROMEDRIVER at them"
)

# Everything the checks need from the page, read in one round trip.
_PAGE_FACTS = """
const toc = [...document.querySelectorAll('nav a[href^="#"]')].map(a => {
  const target = document.getElementById(a.getAttribute('href').slice(1));
  const heading = target ? target.querySelector('h2') : null;
  return {text: a.textContent.trim(), id: a.getAttribute('href').slice(1),
          found: !!target, heading: heading ? heading.textContent.trim() : null};
});
const images = [...document.images].map(i => ({src: i.getAttribute('src'),
  complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}));
const pre = [...document.querySelectorAll('pre, code')].map(e => e.textContent.trim());
const links = [...document.querySelectorAll('a[href]')].map(a => a.href)
  .filter(h => h.startsWith('file:'));
return {toc, images, pre, links, title: document.title,
        height: document.documentElement.scrollHeight};
"""


@dataclass(frozen=True)
class PageCheck:
    """What the browser saw; the checks have passed when this is returned."""

    sections: list[str]
    images: int
    screenshot: Path
    height: int


def _find(env: str, *names: str) -> str:
    given = os.environ.get(env)
    if given:
        if not Path(given).is_file():
            pytest.fail(f"{env}={given}: no such file; {INSTALL_HINT}")
        return given
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"no {' or '.join(names)} on PATH: the report's browser test needs them; "
                f"{INSTALL_HINT}")


def _looks_like_json(text: str) -> bool:
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return text.count('":') >= 3  # a cut or pretty-printed object is JSON all the same
    return True


def _driver(user_data: str) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = _find("KAFKA_ASSIGNORS_CHROMIUM", "chromium", "chromium-browser")
    chromedriver = _find("KAFKA_ASSIGNORS_CHROMEDRIVER", "chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={user_data}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(30)
    return driver


def check_report(page: Path, screenshot_name: str = "report-screenshot.png") -> PageCheck:
    """Load ``page`` (file://) and assert: no console errors, every image loaded (non-zero
    natural size), every section named in the table of contents present under its heading,
    no JSON in a ``<pre>`` or ``<code>`` block, every local link pointing at a file that
    exists.  A full-page screenshot is written beside the page."""
    page = page.resolve()
    user_data = tempfile.mkdtemp(prefix="kafka-assignors-chromium-")
    driver = None
    try:
        driver = _driver(user_data)
        driver.get(page.as_uri())
        facts = driver.execute_script(_PAGE_FACTS)
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                     "scale": 1},
        })
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(user_data, ignore_errors=True)
    screenshot = page.parent / screenshot_name
    screenshot.write_bytes(b64decode(shot["data"]))

    assert not errors, f"console errors in {page}: {errors}"
    assert facts["toc"], f"{page} has no table of contents"
    for entry in facts["toc"]:
        assert entry["found"], f"the contents name #{entry['id']}, which is not in {page}"
        assert entry["heading"] and entry["heading"].startswith(entry["text"]), entry
    assert facts["images"], f"{page} shows no image"
    for image in facts["images"]:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
    shown_json = [t[:80] for t in facts["pre"] if _looks_like_json(t)]
    assert not shown_json, f"JSON printed in the page: {shown_json}"
    for link in facts["links"]:
        target = Path(unquote(urlparse(link).path))
        assert target.is_file(), f"{page} links {link}, which does not exist"
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return PageCheck([e["text"] for e in facts["toc"]], len(facts["images"]), screenshot,
                     int(facts["height"]))


# What a site page shows: its images and whether each loaded.
_SITE_FACTS = """
return {title: document.title,
        images: [...document.images].map(i => ({src: i.getAttribute('src'),
          complete: i.complete, width: i.naturalWidth, height: i.naturalHeight})),
        text: document.body ? document.body.innerText : ''};
"""


@dataclass(frozen=True)
class SitePage:
    """What the browser saw on one page of the documentation site."""

    url: str
    title: str
    console_errors: list[str]
    broken_images: list[str]
    images: int
    text: str


def check_site(urls: list[str]) -> list[SitePage]:
    """Open each URL in one headless Chromium session and record, per page, the console's
    SEVERE messages and every image that did not load (zero natural size).  The caller
    asserts; nothing is skipped."""
    user_data = tempfile.mkdtemp(prefix="kafka-assignors-chromium-")
    driver = None
    seen: list[SitePage] = []
    try:
        driver = _driver(user_data)
        for url in urls:
            driver.get(url)
            facts = driver.execute_script(_SITE_FACTS)
            errors = [str(e.get("message")) for e in driver.get_log("browser")
                      if e.get("level") == "SEVERE"]
            broken = [str(i["src"]) for i in facts["images"]
                      if not (i["complete"] and i["width"] > 0 and i["height"] > 0)]
            seen.append(SitePage(url, str(facts["title"]), errors, broken,
                                 len(facts["images"]), str(facts["text"])))
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(user_data, ignore_errors=True)
    return seen
