"""The settings page in a real headless Chromium: switches save at once and survive a reload."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from webtools.models import UserPluginSettings, UserToolSetting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

if not (CHROMIUM and CHROMEDRIVER):
    if os.environ.get("WEBTOOLS_REQUIRE_BROWSER"):
        raise RuntimeError("WEBTOOLS_REQUIRE_BROWSER is set but chromium or chromedriver is missing.")
    pytest.skip("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="webtools-chromium-")
    # This machine has no network: without the background-networking flags Chromium keeps trying to
    # reach Google's hosts.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={profile}", "--window-size=1200,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def logged_in(browser, live_server, demo_plugins):
    user = get_user_model().objects.create_user("carol", password="pw-carol-123")
    client = Client()
    client.force_login(user)
    browser.get(live_server.url + "/static/webtools/settings.css")
    browser.delete_all_cookies()
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    return user


def wait_for(browser, condition, timeout=10):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(condition)


def open_page(browser, live_server):
    from selenium.webdriver.common.by import By

    browser.get(live_server.url + reverse("webtools:settings"))
    wait_for(browser, lambda d: d.find_element(By.ID, "wt-settings").get_attribute("data-loaded") == "true")


def test_checkbox_change_is_saved_at_once_and_kept_after_reload(browser, live_server, logged_in):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server)
    box = browser.find_element(By.ID, "wt-tool-demo-shout")
    label = browser.find_element(By.CSS_SELECTOR, 'label[for="wt-tool-demo-shout"]')
    assert label.text == "shout" and not box.is_selected()
    box.click()
    status = browser.find_element(By.CSS_SELECTOR, '[data-plugin="demo"] .wt-status')
    wait_for(browser, lambda d: status.text == "shout is on.")
    assert UserToolSetting.objects.get(user=logged_in, tool="shout").enabled is True

    open_page(browser, live_server)
    assert browser.find_element(By.ID, "wt-tool-demo-shout").is_selected()
    # Only switchable tools get a checkbox.
    assert not browser.find_elements(By.ID, "wt-tool-demo-fixed")


def test_key_field_shows_only_for_modes_that_use_a_key_and_settings_save(browser, live_server, logged_in):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    open_page(browser, live_server)
    key = browser.find_element(By.ID, "wt-field-api_key")
    assert not key.is_displayed()
    Select(browser.find_element(By.ID, "wt-field-mode")).select_by_value("keyed")
    assert key.is_displayed()
    browser.find_element(By.CSS_SELECTOR, '[data-plugin="demo"] button[type="submit"]').click()
    error = browser.find_element(By.CSS_SELECTOR, '[data-error-for="api_key"]')
    wait_for(browser, lambda d: error.text == "Add your API key.")

    browser.find_element(By.ID, "wt-field-api_key").send_keys("my-own-key-123456")
    browser.find_element(By.CSS_SELECTOR, '[data-plugin="demo"] button[type="submit"]').click()
    wait_for(browser, lambda d: UserPluginSettings.objects.filter(user=logged_in).exists())
    row = UserPluginSettings.objects.get(user=logged_in)
    assert row.values["mode"] == "keyed" and row.get_secrets() == {"api_key": "my-own-key-123456"}
    open_page(browser, live_server)
    assert "my-own-key-123456" not in browser.page_source
    assert browser.find_element(By.ID, "wt-field-api_key").get_attribute("placeholder").startswith("Set")


def test_settings_page_requires_login(client, demo_plugins):
    response = client.get(reverse("webtools:settings"))
    assert response.status_code == 302 and "login" in response["Location"]
