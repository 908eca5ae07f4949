"""Reports and the index in a real headless Chromium: from file:// and over HTTP."""
from __future__ import annotations

import shutil
import threading

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from results.index import write_static_index
from results.report import write_report
from results.server import make_server
from tests.results.browser import console_errors, new_profile_dir, screenshot, start_chromium
from tests.results.sample_runs import make_run, queue_history


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = tmp_path_factory.mktemp("browse") / "store"
    for name, timestamp, kind in [("queue", "20261121T080000", "invalid"), ("queue", "20261121T090000", "valid"),
                                  ("broken", "20261121T100000", "corrupt")]:
        write_report(make_run(store, name, timestamp, kind))
    return store


@pytest.fixture(scope="module")
def browser():
    profile = new_profile_dir()
    driver = start_chromium(profile)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server_port(store):
    server = make_server(store, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_report_from_file_url(browser, store):
    browser.get((store / "queue" / "20261121T080000" / "report.html").as_uri())
    assert console_errors(browser) == []
    verdict = browser.find_element(By.CSS_SELECTOR, "#verdict .badge")
    assert verdict.text == "invalid"
    sections = [s.get_attribute("data-type") for s in browser.find_elements(By.CSS_SELECTOR, "section.anomaly")]
    assert sections == ["G1c", "inconsistent-offsets", "mystery-type", "unseen"]
    assert len(browser.find_elements(By.CSS_SELECTOR, ".plot img")) == 5
    assert all(browser.execute_script("return arguments[0].naturalWidth", img) > 0
               for img in browser.find_elements(By.CSS_SELECTOR, ".plot img"))
    screenshot(browser, "report-invalid")
    # an example's link scrolls to the anchored history line
    _, refs = queue_history(conflict=True)
    index = refs["sends"][0]
    browser.find_element(By.CSS_SELECTOR, f"#anomaly-inconsistent-offsets a[href='#h{index}']").click()
    target = browser.execute_script("return document.querySelector(':target')")
    assert target.get_attribute("id") == f"h{index}" and '"ok"' in target.text
    assert browser.execute_script("return window.scrollY") > 0


def test_corrupt_report_from_file_url(browser, store):
    browser.get((store / "broken" / "20261121T100000" / "report.html").as_uri())
    assert console_errors(browser) == []
    assert browser.find_element(By.CSS_SELECTOR, "#verdict .badge").text == "incomplete"
    assert "test.json: not valid JSON" in browser.find_element(By.ID, "problems").find_element(By.XPATH, "following-sibling::ul").text
    screenshot(browser, "report-corrupt")


def test_served_index_and_into_a_report(browser, server_port):
    browser.get(f"http://127.0.0.1:{server_port}/")
    assert console_errors(browser) == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
    assert [r.get_attribute("data-verdict") for r in rows] == ["incomplete", "valid", "invalid"]
    assert browser.find_element(By.ID, "trend").is_displayed()
    screenshot(browser, "index-served")
    Select(browser.find_element(By.NAME, "verdict")).select_by_value("invalid")
    browser.find_element(By.CSS_SELECTOR, "#filters button").click()
    assert "verdict=invalid" in browser.current_url
    rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
    assert [r.get_attribute("data-verdict") for r in rows] == ["invalid"]
    rows[0].find_element(By.CSS_SELECTOR, "a.run").click()
    assert browser.current_url.endswith("/runs/queue/20261121T080000/report.html")
    assert browser.find_element(By.CSS_SELECTOR, "#verdict .badge").text == "invalid"
    assert console_errors(browser) == []
    browser.find_element(By.LINK_TEXT, "history.jsonl").click()
    assert '"index": 0' in browser.find_element(By.TAG_NAME, "body").text


def test_static_index_filters_in_the_browser(browser, store):
    index = write_static_index(store)
    browser.get(index.as_uri())
    assert console_errors(browser) == []
    Select(browser.find_element(By.NAME, "verdict")).select_by_value("valid")
    browser.find_element(By.CSS_SELECTOR, "#filters button").click()
    visible = [r.get_attribute("data-verdict") for r in browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
               if r.is_displayed()]
    assert visible == ["valid"] and browser.find_element(By.ID, "shown").text == "1"
    screenshot(browser, "index-static")
    browser.find_element(By.CSS_SELECTOR, "tr[data-verdict='valid'] a.run").click()
    assert browser.find_element(By.CSS_SELECTOR, "#verdict .badge").text == "valid"
