"""The report in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``) through selenium.

The page of a small reproduction must load every image, log no console error, show the failed claims without
scrolling, and sort a check table on a click. A screenshot of the first screen and one of the whole page are written
to the test's folder and their paths printed, for a person to look at.
"""

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

VIEWPORT = (1280, 800)
"""A common laptop screen: the failed claims must be visible on it without scrolling."""

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _executable(*names: str) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the dev extra has it)")
    chromium = _executable("chromium", "chromium-browser", "google-chrome")
    driver_path = _executable("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("no Chromium and chromedriver on PATH: install them (Debian: apt-get install chromium "
                    "chromium-driver; .ci/run does) to run the browser test")
    profile = tempfile.mkdtemp(prefix="privdyn-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(driver: Any, page: Path) -> None:
    driver.get(page.resolve().as_uri())
    deadline = time.monotonic() + 30
    while driver.execute_script("return document.readyState") != "complete":
        assert time.monotonic() < deadline, "the page did not finish loading in 30 s"
        time.sleep(0.05)


def test_report_in_chromium(browser, reproduction, tmp_path, capsys):
    started = time.perf_counter()
    _open(browser, reproduction / "report.html")
    inner_height = browser.execute_script("return window.innerHeight")

    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]);")
    assert len(images) >= 4
    assert [src for src, complete, width in images if not (complete and width > 0)] == []

    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert errors == []

    first_failure = browser.execute_script(
        "const card = document.querySelector('#failures article.failure');"
        "return card && [card.getBoundingClientRect().top, card.getBoundingClientRect().bottom];")
    assert first_failure is not None, "the page shows no failed claim"
    assert 0 <= first_failure[0] and first_failure[1] <= inner_height, (first_failure, inner_height)
    assert browser.execute_script("return window.scrollY") == 0

    above = tmp_path / "report-first-screen.png"
    assert browser.save_screenshot(str(above))

    # a click on a failed claim shows its whole text (cut to a few lines at first)
    expanded = ("const card = document.querySelector('#failures article.failure'); card.click();"
                "return !card.classList.contains('clamped');")
    assert browser.execute_script(expanded)

    # sorting: a click on "status" brings the failed check of hsgd-fig1b to the top of its table, twice reverses
    table = "#exp-hsgd-fig1b table.checks"
    statuses = f"return Array.from(document.querySelectorAll('{table} tbody tr')).map(r => r.dataset.status);"
    original = browser.execute_script(statuses)
    browser.execute_script(f"document.querySelector('{table} thead th').click();")
    ascending = browser.execute_script(statuses)
    assert ascending[0] == "failed" and sorted(ascending) == sorted(original) and ascending != original
    browser.execute_script(f"document.querySelector('{table} thead th').click();")
    assert browser.execute_script(statuses)[-1] == "failed"

    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(VIEWPORT[0], min(height + 200, 20000))
    whole = tmp_path / "report-whole-page.png"
    assert browser.save_screenshot(str(whole))
    browser.set_window_size(*VIEWPORT)
    with capsys.disabled():
        print(f"\nreport screenshots ({time.perf_counter() - started:.1f} s in the browser): {above} {whole}")
