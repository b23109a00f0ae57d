"""A real headless Chromium for the page tests (selenium + Debian's chromium and chromium-driver).

The ``browser`` fixture (in ``conftest.py``) skips its tests when the browser is missing, saying why,
unless ``WEBTOOLS_REQUIRE_BROWSER`` is set (CI sets it), which makes a missing browser an error.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def chromium():
    """A headless Chromium driver, its profile removed when it quits; skips or fails when missing."""
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("WEBTOOLS_REQUIRE_BROWSER"):
            pytest.fail("WEBTOOLS_REQUIRE_BROWSER is set but chromium or chromedriver is missing.")
        pytest.skip("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="webtools-chromium-")
    # This machine has no network: without the background-networking flags Chromium keeps trying to
    # reach Google's hosts.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                 "--window-size=1200,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def log_in(browser, live_server, user):
    """Give the browser a logged-in session for ``user`` (a user, or a username to create)."""
    if isinstance(user, str):
        user = get_user_model().objects.create_user(user, password=f"pw-{user}-123")
    client = Client()
    client.force_login(user)
    browser.get(live_server.url + "/static/webtools/settings.css")  # a page on the host, to set cookies
    browser.delete_all_cookies()
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    return user


def wait_for(browser, condition, timeout: float = 15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(condition)


SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
#: (name, width): an iPhone-sized phone and a laptop.
WIDTHS = (("phone", 390), ("desktop", 1280))


def screenshots(browser, page: str) -> list[Path]:
    """Save the whole current page at phone and desktop widths as ``docs/screenshots/<page>-<width>.png``
    when ``WEBTOOLS_SCREENSHOTS`` is set (``make screenshots``): the pictures in the docs come from the
    tests, so they show what the code does, and an ordinary test run leaves the tree as it was (pages
    with loopback ports differ on every run). The phone is emulated as a mobile viewport, so the page's
    viewport meta tag applies as on a real phone."""
    if not os.environ.get("WEBTOOLS_SCREENSHOTS"):
        return []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # A blinking caret or a running transition would make every run's picture differ.
    browser.execute_script(
        "var s = document.createElement('style'); s.textContent = '* { caret-color: transparent !important; "
        "transition: none !important; animation: none !important; }'; document.head.appendChild(s);"
    )
    saved = []
    try:
        for name, width in WIDTHS:
            metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": name == "phone"}
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            height = browser.execute_script("return document.documentElement.scrollHeight")
            metrics["height"] = max(600, min(int(height), 5000))
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            path = SCREENSHOTS / f"{page}-{name}.png"
            png = browser.get_screenshot_as_png()
            if not path.exists() or path.read_bytes() != png:
                path.write_bytes(png)
            saved.append(path)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return saved
