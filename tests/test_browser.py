"""report.html and the published site in a real browser: headless Chromium
driven by selenium (Debian's chromium and chromium-driver, selenium from PyPI;
.ci/run installs them). Each page loads with nothing on the browser's console at
error level, shows every figure and table, sorts a table when its header is
clicked, and is saved as a screenshot under build/screenshots/ (CI keeps it).
Skipped, saying what is missing, where the browser, its driver or selenium is not
installed."""

import os
import shutil
from pathlib import Path

import pytest
from figure_data import make_store

selenium = pytest.importorskip(
    "selenium", reason="selenium is not installed (pip install selenium)"
)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from pagezero.cli import main  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
SCREENSHOTS = Path(
    os.environ.get("PAGEZERO_SCREENSHOTS")
    or Path(__file__).resolve().parents[1] / "build" / "screenshots"
)


def _browser():
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


@pytest.fixture(scope="module")
def browser():
    binary, driver_path = _browser(), shutil.which("chromedriver")
    if not binary or not driver_path:
        missing = " and ".join(
            n for n, found in (("chromium", binary), ("chromedriver", driver_path)) if not found
        )
        pytest.skip(f"{missing} not installed (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver named explicitly: selenium would otherwise try to download one.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def report_page(tiny_report):
    """report.html of the session's tiny report (conftest)."""
    return tiny_report / "report.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    store_path = make_store(folder)
    assert main(["store", "publish", "--store", store_path, "-o", str(folder / "site")]) == 0
    return folder / "site"


def load(driver, path, screenshot):
    """Open `path`, return the console's error-level entries, and save the whole page."""
    driver.get_log("browser")  # what earlier pages left
    driver.get(path.as_uri())
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, max(600, min(height + 100, 12000)))
    assert driver.save_screenshot(str(SCREENSHOTS / screenshot))
    driver.set_window_size(1400, 1000)
    return errors


def column(table, index):
    return [
        row.find_elements(By.TAG_NAME, "td")[index].text
        for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]


def check_sorting(table):
    """Click headers until one reorders its rows; its column is then in order."""
    headers = table.find_elements(By.TAG_NAME, "th")
    for i, th in enumerate(headers):
        before = column(table, i)
        if len(set(before)) < 2:
            continue
        rows_before = [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        th.click()
        if column(table, i) == before:  # it was in ascending order already
            th.click()
        after = column(table, i)
        rows_after = [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert sorted(rows_after) == sorted(rows_before)  # the same rows, reordered
        assert after != before
        assert "asc" in th.get_attribute("class") or "desc" in th.get_attribute("class")
        return True
    return False


def test_report_html_in_a_browser(browser, report_page):
    assert load(browser, report_page, "report.png") == []
    md = (report_page.parent / "report.md").read_text().splitlines()
    images = [line for line in md if line.startswith("![")]
    tables = [
        line for i, line in enumerate(md) if line.startswith("|") and not md[i - 1].startswith("|")
    ]
    figures = browser.find_elements(By.CSS_SELECTOR, "figure > svg")
    assert len(figures) == len(images)
    assert all(f.size["width"] > 100 and f.size["height"] > 100 for f in figures)  # drawn
    found = browser.find_elements(By.CSS_SELECTOR, "table.sortable")
    assert len(found) == len(tables)
    assert any(check_sorting(t) for t in found)


def test_published_index_in_a_browser(browser, site):
    assert load(browser, site / "index.html", "site-index.png") == []
    tables = browser.find_elements(By.CSS_SELECTOR, "table.sortable")
    assert len(tables) == 3  # machines, result sets, points
    assert check_sorting(tables[1])  # the result sets
    points = tables[2].find_elements(By.CSS_SELECTOR, "tbody a")
    assert len(points) == 4


def test_published_point_in_a_browser(browser, site):
    assert load(browser, site / "point-1.html", "site-point.png") == []
    assert len(browser.find_elements(By.CSS_SELECTOR, "figure > svg")) == 1
    [table] = browser.find_elements(By.CSS_SELECTOR, "table.sortable")
    assert len(table.find_elements(By.CSS_SELECTOR, "tbody tr")) == 4
    assert check_sorting(table)


def test_the_index_form_opens_a_comparison(browser, site):
    load(browser, site / "index.html", "site-index.png")
    base, other = browser.find_element(By.ID, "base"), browser.find_element(By.ID, "other")
    other.find_elements(By.TAG_NAME, "option")[2].click()
    base.find_elements(By.TAG_NAME, "option")[0].click()
    browser.find_element(By.CSS_SELECTOR, "form button").click()
    assert browser.current_url.endswith(".html") and "compare-" in browser.current_url
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    pre = browser.find_element(By.TAG_NAME, "pre").text
    assert "median" in pre or "%" in pre
    page = Path(browser.current_url[len("file://") :])
    assert load(browser, page, "site-compare.png") == []
