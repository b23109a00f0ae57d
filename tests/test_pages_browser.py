"""The admin's Test and Keys per engine pages and the API reference in a real headless Chromium."""
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


def test_keys_per_engine_page_shows_exactly_the_fields_the_chosen_engine_needs(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    admin = get_user_model().objects.create_superuser("ops", password="pw-ops-123")
    row = PluginOptions.objects.create(plugin="web_search", values={"engine": "brave"})
    log_in(browser, live_server, admin)
    browser.get(live_server.url + reverse("admin:webtools_pluginoptions_scopes", args=[row.pk]))
    engine = Select(browser.find_element(By.ID, "id_engine"))
    offered = {option.get_attribute("value") for option in engine.options}
    assert "brave" not in offered and "duckduckgo" not in offered  # the engine in use; nothing to keep

    def shown() -> set[str]:
        css = "#scopes-form input[name]:not([type=hidden]), #scopes-form select"
        fields = browser.find_elements(By.CSS_SELECTOR, css)
        return {field.get_attribute("name") for field in fields if field.is_displayed()}

    def help_link() -> str:
        links = browser.find_elements(By.CSS_SELECTOR, "#id_engine-choice a")
        return links[0].text if links else ""

    expected = {
        "tavily": {"api_key", "api_key_clear"},
        "google": {"api_key", "api_key_clear", "cx", "cx_clear"},
        "searxng": {"base_url", "base_url_clear"},
        "yacy": {"base_url", "base_url_clear"},
    }
    for engine_id, fields in expected.items():
        engine.select_by_value(engine_id)
        assert shown() == {"engine", *fields}, engine_id
    # Where to get a key, for an engine that needs one only.
    engine.select_by_value("tavily")
    assert help_link() == "Get a Tavily API key"
    engine.select_by_value("searxng")
    assert help_link() == "" and "your own SearXNG instance" in browser.find_element(By.ID, "id_engine-choice").text
