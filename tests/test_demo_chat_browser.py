"""The demo chat in a real headless Chromium against the scripted model server."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from tests.llm_server import ScriptedLLM, answer, ask
from tests.servers import LoopbackServer, Reply
from tests.test_demo_chat import LookupPlugin
from tests.test_integrations_openai import needs_web_fetch, web  # noqa: F401 (web: the real plugins)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

if not (CHROMIUM and CHROMEDRIVER):
    if os.environ.get("WEBTOOLS_REQUIRE_BROWSER"):
        raise RuntimeError("WEBTOOLS_REQUIRE_BROWSER is set but chromium or chromedriver is missing.")
    pytest.skip("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
                allow_module_level=True)

PIXEL = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
         b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
         b"\x00\x00\x00\x00IEND\xaeB`\x82")


@pytest.fixture(scope="module")
def browser():
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


def log_in(browser, live_server, username="frank"):
    user = get_user_model().objects.create_user(username, password=f"pw-{username}-123")
    client = Client()
    client.force_login(user)
    browser.get(live_server.url + "/static/chat/chat.css")
    browser.delete_all_cookies()
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    return user


def wait_for(browser, condition, timeout=15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(condition)


def ask_question(browser, live_server, question):
    from selenium.webdriver.common.by import By

    browser.get(live_server.url + reverse("chat"))
    chat = wait_for(browser, lambda d: d.find_element(By.ID, "chat"))
    wait_for(browser, lambda d: chat.get_attribute("data-state") == "idle")
    browser.find_element(By.ID, "chat-input").send_keys(question)
    browser.find_element(By.ID, "chat-send").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".chat-user"))
    wait_for(browser, lambda d: chat.get_attribute("data-state") == "idle")
    return chat


@pytest.fixture
def lookup(use_plugins, settings):
    use_plugins(LookupPlugin())
    settings.OPENAI_MODEL = "scripted-model"


def test_question_tool_calls_answer_and_source_links_show_on_the_page(browser, live_server, settings, lookup):
    from selenium.webdriver.common.by import By

    log_in(browser, live_server)
    script = [ask(("lookup", {"text": "mice"})), ask(("lookup", {"text": "voles"})),
              answer("Both are **small** rodents; see [the list](https://encyclopedia.example/rodents).")]
    with ScriptedLLM(script) as llm:
        settings.OPENAI_BASE_URL = llm.url
        ask_question(browser, live_server, "Are mice and voles small?")

    assert browser.find_element(By.CSS_SELECTOR, ".chat-user").text == "Are mice and voles small?"
    calls = browser.find_elements(By.CSS_SELECTOR, ".chat-tool")
    assert [c.get_attribute("data-tool") for c in calls] == ["lookup", "lookup"]
    assert '"text": "mice"' in calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-args").text
    assert "Mice are small." in calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-result").text
    reply = browser.find_elements(By.CSS_SELECTOR, ".chat-assistant")[-1]
    assert reply.text.startswith("Both are small rodents; see the list.")
    assert reply.find_element(By.TAG_NAME, "strong").text == "small"
    inline_link = reply.find_element(By.CSS_SELECTOR, "p a")
    assert inline_link.get_attribute("href") == "https://encyclopedia.example/rodents"
    assert inline_link.get_attribute("rel") == "noopener noreferrer nofollow"
    sources = reply.find_elements(By.CSS_SELECTOR, ".chat-sources a")
    assert [(a.text, a.get_attribute("href")) for a in sources] == [
        ("All about mice", "https://encyclopedia.example/mice"),
        ("All about voles", "https://encyclopedia.example/voles"),
    ]
    assert not browser.find_elements(By.CSS_SELECTOR, ".chat-error")


def test_assistant_html_shows_as_text_and_an_image_loads_only_after_its_url_is_shown_and_clicked(
    browser, live_server, settings, lookup
):
    from selenium.webdriver.common.by import By

    log_in(browser, live_server, "gina")
    png = Reply(200, {"Content-Type": "image/png"}, PIXEL)
    with LoopbackServer({"/raw.png": png, "/chart.png": png}) as images:
        raw = images.url("/raw.png")
        chart = images.url("/chart.png") + "?q=the-users-secret"
        text = (f'Look: <img src="{raw}" onerror="window.pwned=1"> <script>window.pwned=2</script>\n\n'
                f"![a chart]({chart})\n\n[click](javascript:window.pwned=3)")
        with ScriptedLLM([answer(text)]) as llm:
            settings.OPENAI_BASE_URL = llm.url
            ask_question(browser, live_server, "Show me a chart.")
            reply = browser.find_element(By.CSS_SELECTOR, ".chat-assistant")

            assert f'<img src="{raw}" onerror="window.pwned=1">' in reply.text
            assert "<script>window.pwned=2</script>" in reply.text
            assert not reply.find_elements(By.TAG_NAME, "img")
            assert not reply.find_elements(By.TAG_NAME, "script")
            assert reply.find_element(By.CSS_SELECTOR, ".chat-image code").text == chart
            assert not reply.find_elements(By.CSS_SELECTOR, "a[href^='javascript']")
            assert images.hits() == 0

            reply.find_element(By.CSS_SELECTOR, ".chat-image-load").click()
            image = wait_for(browser, lambda d: reply.find_element(By.CSS_SELECTOR, ".chat-image img"))
            wait_for(browser, lambda d: images.hits("/chart.png") == 1)
            assert image.get_attribute("src") == chart
            assert images.hits("/raw.png") == 0
            assert browser.execute_script("return window.pwned === undefined")


def test_real_search_and_fetch_in_the_chat_cite_the_page(browser, live_server, settings, web):  # noqa: F811
    from selenium.webdriver.common.by import By

    needs_web_fetch()
    user, _, site = web
    client = Client()
    client.force_login(user)
    browser.get(live_server.url + "/static/chat/chat.css")
    browser.delete_all_cookies()
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    settings.OPENAI_MODEL = "scripted-model"
    article = site.url("/article")
    script = [ask(("web_search", {"query": "django orm"})), ask(("web_fetch", {"url": article})),
              answer("Querysets are lazy.")]
    with ScriptedLLM(script) as llm:
        settings.OPENAI_BASE_URL = llm.url
        ask_question(browser, live_server, "How does Django's ORM work?")

    calls = browser.find_elements(By.CSS_SELECTOR, ".chat-tool")
    assert [c.get_attribute("data-tool") for c in calls] == ["web_search", "web_fetch"]
    assert "djangoproject.com" in calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-result").text
    assert "lazy" in calls[1].find_element(By.CSS_SELECTOR, ".chat-tool-result").text
    reply = browser.find_elements(By.CSS_SELECTOR, ".chat-assistant")[-1]
    assert reply.text.startswith("Querysets are lazy.")
    links = [a.get_attribute("href") for a in reply.find_elements(By.CSS_SELECTOR, ".chat-sources a")]
    assert "https://www.djangoproject.com/" in links and article in links
