"""The demo chat in a real headless Chromium against the scripted model server."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser import log_in, wait_for
from tests.llm_server import ScriptedLLM, answer, ask
from tests.servers import LoopbackServer, Reply
from tests.test_demo_chat import LookupPlugin
from tests.test_integrations_openai import web  # noqa: F401 (web: the real plugins)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PIXEL = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
         b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
         b"\x00\x00\x00\x00IEND\xaeB`\x82")


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

    log_in(browser, live_server, "frank")
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

    user, _, site = web
    log_in(browser, live_server, user)
    settings.OPENAI_MODEL = "scripted-model"
    article = site.url("/article")
    script = [ask(("web_search", {"query": "django orm"})), ask(("web_fetch", {"url": article})),
              answer("Querysets are lazy.")]
    with ScriptedLLM(script) as llm:
        settings.OPENAI_BASE_URL = llm.url
        ask_question(browser, live_server, f"How does Django's ORM work? {article} says something.")

    calls = browser.find_elements(By.CSS_SELECTOR, ".chat-tool")
    assert [c.get_attribute("data-tool") for c in calls] == ["web_search", "web_fetch"]
    assert "djangoproject.com" in calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-result").text
    assert "lazy" in calls[1].find_element(By.CSS_SELECTOR, ".chat-tool-result").text
    reply = browser.find_elements(By.CSS_SELECTOR, ".chat-assistant")[-1]
    assert reply.text.startswith("Querysets are lazy.")
    links = [a.get_attribute("href") for a in reply.find_elements(By.CSS_SELECTOR, ".chat-sources a")]
    assert "https://www.djangoproject.com/" in links and article in links
