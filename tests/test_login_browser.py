"""webtools' sign-in page in a real headless Chromium: typed into, and fitting a phone."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser import screenshots, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_user_signs_in_with_the_keyboard_and_signs_out(browser, live_server, django_user_model, demo_plugins):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    django_user_model.objects.create_user("nora", password="pw-nora-123")
    browser.delete_all_cookies()
    browser.get(live_server.url + reverse("webtools:settings"))
    assert browser.current_url.startswith(live_server.url + reverse("webtools:login"))
    # The user name field has the focus; on a phone nothing is wider than the screen.
    assert browser.switch_to.active_element.get_attribute("name") == "username"
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 360, "height": 740, "deviceScaleFactor": 1, "mobile": True})
    try:
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 360
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    browser.find_element(By.NAME, "username").send_keys("nora")
    browser.find_element(By.NAME, "password").send_keys("not-her-password", Keys.ENTER)
    alert = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[role=alert]"))
    assert "correct username and password" in alert.text
    screenshots(browser, "login-error")
    browser.find_element(By.NAME, "password").send_keys("pw-nora-123", Keys.ENTER)
    wait_for(browser, lambda d: d.current_url == live_server.url + reverse("webtools:settings"))
    account = browser.find_element(By.CSS_SELECTOR, ".wt-account")
    assert "Signed in as nora" in account.text
    account.find_element(By.TAG_NAME, "button").click()
    # The page source, not an element: an element found while the old page unloads goes stale.
    wait_for(browser, lambda d: "You have signed out." in d.page_source)
    browser.get(live_server.url + reverse("webtools:settings"))
    assert browser.current_url.startswith(live_server.url + reverse("webtools:login"))
    screenshots(browser, "login")
