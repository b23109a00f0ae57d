"""The settings page in a real headless Chromium: switches save at once and survive a reload."""
from __future__ import annotations

import time

import pytest
from django.urls import reverse

from tests.browser import log_in, wait_for
from webtools.models import UserPluginSettings, UserToolSetting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def logged_in(browser, live_server, demo_plugins):
    return log_in(browser, live_server, "carol")


def open_page(browser, live_server):
    from selenium.webdriver.common.by import By

    browser.get(live_server.url + reverse("webtools:settings"))
    wait_for(browser, lambda d: d.find_element(By.ID, "wt-settings").get_attribute("data-loaded") == "true")


def test_checkbox_change_is_saved_at_once_and_kept_after_reload(browser, live_server, logged_in):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server)
    box = browser.find_element(By.ID, "wt-tool-demo-shout")
    label = browser.find_element(By.CSS_SELECTOR, 'label[for="wt-tool-demo-shout"]')
    assert label.text == "Shout" and not box.is_selected()
    box.click()
    status = browser.find_element(By.CSS_SELECTOR, '[data-plugin="demo"] .wt-status')
    wait_for(browser, lambda d: status.text == "Shout is on.")
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
    # Wait on the page, not the database: polling SQLite while the server writes can lock its table.
    wait_for(browser, lambda d: status_text(d, "demo") == "Settings saved.")
    row = UserPluginSettings.objects.get(user=logged_in)
    assert row.values["mode"] == "keyed" and row.get_secrets() == {"api_key@keyed": "my-own-key-123456"}
    open_page(browser, live_server)
    assert "my-own-key-123456" not in browser.page_source
    assert browser.find_element(By.ID, "wt-field-api_key").get_attribute("placeholder").startswith("Saved")


def status_text(browser, plugin: str) -> str:
    """The plugin block's message, or "" while the block is being replaced."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        return browser.find_element(By.CSS_SELECTOR, f'[data-plugin="{plugin}"] .wt-status').text
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def test_settings_page_requires_login(client, demo_plugins):
    response = client.get(reverse("webtools:settings"))
    assert response.status_code == 302 and "login" in response["Location"]


def _shown(browser, element_id: str) -> bool:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, element_id).is_displayed()


def test_web_search_settings_show_key_and_base_url_only_for_engines_that_use_them(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    log_in(browser, live_server, "lena")
    open_page(browser, live_server)
    engine = Select(browser.find_element(By.ID, "wt-field-engine"))
    assert engine.first_selected_option.get_attribute("value") == "default"
    assert not _shown(browser, "wt-field-api_key") and not _shown(browser, "wt-field-base_url")
    engine.select_by_value("brave")
    assert _shown(browser, "wt-field-api_key") and not _shown(browser, "wt-field-base_url")
    engine.select_by_value("searxng")
    assert not _shown(browser, "wt-field-api_key") and _shown(browser, "wt-field-base_url")


def test_admin_shows_key_and_base_url_only_for_engines_that_use_them(browser, live_server):
    from django.contrib.auth import get_user_model
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from webtools.models import PluginOptions

    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    row = PluginOptions.objects.create(plugin="web_search")
    log_in(browser, live_server, admin)
    browser.get(live_server.url + reverse("admin:webtools_pluginoptions_change", args=[row.pk]))
    engine = Select(browser.find_element(By.ID, "id_engine"))
    assert not _shown(browser, "id_api_key") and not _shown(browser, "id_base_url")
    engine.select_by_value("kagi")
    assert _shown(browser, "id_api_key") and not _shown(browser, "id_base_url")
    # The operator, too, sees where to get the chosen engine's key and what it costs.
    help = browser.find_element(By.ID, "id_engine-choice")
    assert help.find_element(By.TAG_NAME, "a").text == "Get a Kagi API key" and "Paid per search" in help.text
    engine.select_by_value("searxng")
    assert not _shown(browser, "id_api_key") and _shown(browser, "id_base_url")
    engine.select_by_value("duckduckgo")
    assert not _shown(browser, "id_api_key") and not _shown(browser, "id_base_url")


def test_admin_hides_the_renderer_key_while_rendering_is_off_whichever_renderer_is_chosen(browser, live_server):
    # show_when.js: the key is shown for the services (render_with), and render_with only while rendering
    # is on; a hidden controller applies to nothing, so with rendering off the key hides too, though
    # render_with still holds a service.
    from django.contrib.auth import get_user_model
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from webtools.models import PluginOptions

    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    row = PluginOptions.objects.create(plugin="web_fetch",
                                       values={"render_javascript": "never", "render_with": "firecrawl"})
    log_in(browser, live_server, admin)
    browser.get(live_server.url + reverse("admin:webtools_pluginoptions_change", args=[row.pk]))
    rendering = Select(browser.find_element(By.ID, "id_render_javascript"))
    renderer = Select(browser.find_element(By.ID, "id_render_with"))
    key = ("id_render_api_key", "id_render_api_key_clear")
    assert renderer.first_selected_option.get_attribute("value") == "firecrawl"
    assert not _shown(browser, "id_render_with") and not any(_shown(browser, k) for k in key)
    rendering.select_by_value("auto")
    assert _shown(browser, "id_render_with") and all(_shown(browser, k) for k in key)
    renderer.select_by_value("chromium")
    assert _shown(browser, "id_render_with") and not any(_shown(browser, k) for k in key)
    renderer.select_by_value("jina")
    assert all(_shown(browser, k) for k in key)
    rendering.select_by_value("never")
    assert not _shown(browser, "id_render_with") and not any(_shown(browser, k) for k in key)


def test_web_search_page_reads_like_a_settings_page_and_confirms_a_save_that_stays(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from tests.browser import screenshots

    user = log_in(browser, live_server, "nora")
    open_page(browser, live_server)
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".wt-tool-title")]
    assert titles == ["Web search", "Web fetch"]  # people read titles, not tool identifiers
    help_id = browser.find_element(By.ID, "wt-tool-web_search-web_search").get_attribute("aria-describedby")
    assert "sent to that engine" in browser.find_element(By.ID, help_id).text

    Select(browser.find_element(By.ID, "wt-field-engine")).select_by_value("brave")
    choice = browser.find_element(By.ID, "wt-field-engine-choice")
    link = choice.find_element(By.TAG_NAME, "a")
    assert link.text == "Get a Brave API key" and link.get_attribute("href").startswith("https://")
    assert "credit Brave Search" in choice.text
    # An error sits under its field, is announced, and the field gets the focus.
    browser.find_element(By.CSS_SELECTOR, '[data-plugin="web_search"] button[type="submit"]').click()
    error = browser.find_element(By.ID, "wt-field-api_key-error")
    wait_for(browser, lambda d: error.text == "Add your Brave API key.")
    key = browser.find_element(By.ID, "wt-field-api_key")
    assert key.get_attribute("aria-invalid") == "true" and "wt-field-api_key-error" in key.get_attribute(
        "aria-describedby")
    assert browser.switch_to.active_element == key
    screenshots(browser, "settings-error")

    key.send_keys("BSA-my-own-key-12345")
    browser.find_element(By.CSS_SELECTOR, '[data-plugin="web_search"] button[type="submit"]').click()
    wait_for(browser, lambda d: status_text(d, "web_search") == "Settings saved.")
    assert UserPluginSettings.objects.get(user=user).get_secrets() == {"api_key@brave": "BSA-my-own-key-12345"}
    # The confirmation is still there a moment later (nothing re-renders it away).
    time.sleep(0.5)
    assert status_text(browser, "web_search") == "Settings saved."
    assert browser.find_element(By.ID, "wt-field-api_key").get_attribute("placeholder").startswith("Saved")
    # Another engine has no key of its own: its field says so.
    Select(browser.find_element(By.ID, "wt-field-engine")).select_by_value("tavily")
    assert browser.find_element(By.ID, "wt-field-api_key").get_attribute("placeholder") == "Not set"
    Select(browser.find_element(By.ID, "wt-field-engine")).select_by_value("brave")
    screenshots(browser, "settings")


def test_settings_page_works_with_the_keyboard_alone(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    user = log_in(browser, live_server, "kai")
    open_page(browser, live_server)
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("id") == "wt-tool-web_search-web_search"
    browser.switch_to.active_element.send_keys(Keys.SPACE)
    wait_for(browser, lambda d: status_text(d, "web_search") == "Web search is on.")
    assert UserToolSetting.objects.get(user=user, tool="web_search").enabled is True
    # Every control has a label a screen reader can read.
    for control in browser.find_elements(By.CSS_SELECTOR, "#wt-settings input, #wt-settings select"):
        if (control.get_attribute("name") or "").endswith("__clear"):
            continue  # wrapped in its label
        assert browser.find_elements(By.CSS_SELECTOR, f'label[for="{control.get_attribute("id")}"]'), control


def test_clear_my_settings_asks_first_and_keeps_everything_until_confirmed(browser, live_server):
    from selenium.webdriver.common.by import By

    user = log_in(browser, live_server, "otto")
    row = UserPluginSettings(user=user, plugin="web_search", values={"engine": "brave"})
    row.set_secrets({"api_key@brave": "BSA-otto-key-12345"})
    row.save()
    open_page(browser, live_server)
    block = browser.find_element(By.CSS_SELECTOR, '[data-plugin="web_search"]')
    clear = block.find_element(By.XPATH, ".//button[text()='Clear my settings']")
    confirm = block.find_element(By.CSS_SELECTOR, ".wt-confirm")
    assert not confirm.is_displayed()
    clear.click()
    assert confirm.is_displayed() and "every API key you saved" in confirm.text
    assert clear.get_attribute("aria-expanded") == "true"
    keep = confirm.find_element(By.XPATH, ".//button[text()='Keep them']")
    assert browser.switch_to.active_element == keep  # the safe answer has the focus
    keep.click()
    assert not confirm.is_displayed() and browser.switch_to.active_element == clear
    time.sleep(0.3)
    assert UserPluginSettings.objects.get(user=user).get_secrets() == {"api_key@brave": "BSA-otto-key-12345"}
    clear.click()
    confirm.find_element(By.XPATH, ".//button[text()='Yes, clear my settings']").click()
    wait_for(browser, lambda d: status_text(d, "web_search") == "Your settings were cleared.")
    assert not UserPluginSettings.objects.filter(user=user, plugin="web_search").exists()
