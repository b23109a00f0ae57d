"""The admin's Test page and the API reference in a real headless Chromium."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.browser import log_in, screenshots, wait_for
from tests.test_integrations_openai import web  # noqa: F401 (web: the real plugins)
from webtools.models import PluginOptions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_test_page_prefills_each_tools_example_and_shows_what_the_model_reads(
    browser, live_server, web  # noqa: F811
):
    from selenium.webdriver.common.by import By

    _user, _engine, site = web
    admin = get_user_model().objects.create_superuser("ops", password="pw-ops-123")
    log_in(browser, live_server, admin)
    row = PluginOptions.objects.get(plugin="web_fetch")
    browser.get(live_server.url + reverse("admin:webtools_pluginoptions_test", args=[row.pk]))
    box = browser.find_element(By.ID, "id_input")
    assert json.loads(box.get_attribute("value")) == {"url": "https://example.com/"}
    box.clear()
    box.send_keys(json.dumps({"url": site.url("/article")}))
    browser.find_element(By.CSS_SELECTOR, "#wt-test-form input[type=submit]").click()
    model_text = wait_for(browser, lambda d: d.find_element(By.ID, "test-model-text"))
    raw = json.loads(browser.find_element(By.ID, "test-output").text)
    assert raw["url"] == site.url("/article") and "lazy" in raw["content"]
    # The model reads the same text inside the untrusted-content boundary.
    assert "lazy" in model_text.text and model_text.text != browser.find_element(By.ID, "test-output").text
    assert site.url("/article") in browser.find_element(By.ID, "test-citations").text
    screenshots(browser, "admin-test")

    search = PluginOptions.objects.get(plugin="web_search")
    browser.get(live_server.url + reverse("admin:webtools_pluginoptions_test", args=[search.pk]))
    assert json.loads(browser.find_element(By.ID, "id_input").get_attribute("value")) == {
        "query": "Django web framework"}


def test_api_reference_renders_the_settings_api_from_local_files(browser, live_server, web):  # noqa: F811
    from selenium.webdriver.common.by import By

    user, _engine, _site = web
    log_in(browser, live_server, user)
    browser.get(live_server.url + "/")
    browser.find_element(By.LINK_TEXT, "The settings API reference").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"))
    assert browser.find_element(By.CSS_SELECTOR, ".info .title").text.startswith("webtools settings API")
    paths = {e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
    assert {"/api/plugins/settings", "/api/plugins/{plugin_id}/settings"} <= {p.replace("\u200b", "") for p in paths}
    # Every script and stylesheet came from this server, none from a CDN.
    sources = browser.execute_script(
        "return Array.from(document.querySelectorAll('script[src], link[href]')).map(e => e.src || e.href)")
    assert sources and all(src.startswith(live_server.url) for src in sources)
    screenshots(browser, "api-reference")
