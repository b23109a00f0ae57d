"""The demo chat in a real headless Chromium against the scripted model server."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser import log_in, screenshots, wait_for
from tests.llm_server import ScriptedLLM, answer, ask
from tests.servers import LoopbackServer, Reply
from tests.test_demo_chat import LookupPlugin
from tests.test_integrations_openai import web  # noqa: F401 (web: the real plugins)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PIXEL = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
         b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
         b"\x00\x00\x00\x00IEND\xaeB`\x82")


def ask_question(browser, live_server, question):
    browser.get(live_server.url + reverse("chat"))
    return ask_question_here(browser, question)


def ask_question_here(browser, question):
    """Ask on the chat page already open (its switches as they are) and wait for the whole answer."""
    from selenium.webdriver.common.by import By

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
    assert '"text":"mice"' in calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-args").text
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
    assert not browser.find_elements(By.CSS_SELECTOR, ".chat-notice")


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
    assert calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-name").text == "Web search"
    assert calls[0].find_element(By.CSS_SELECTOR, ".chat-tool-args").text == "“django orm”"
    # Search results: a list of links with their snippets, not a JSON string.
    results = calls[0].find_elements(By.CSS_SELECTOR, ".chat-results li")
    assert results and "djangoproject.com" in results[0].find_element(By.TAG_NAME, "a").get_attribute("href")
    assert results[0].find_element(By.CSS_SELECTOR, ".chat-snippet").text
    assert "\\n" not in calls[0].text
    # The fetched page: its title and URL, the text it read folded away until asked for.
    page = calls[1].find_element(By.CSS_SELECTOR, ".chat-page")
    assert page.find_element(By.CSS_SELECTOR, ".chat-page-title a").get_attribute("href") == article
    preview = page.find_element(By.CSS_SELECTOR, ".chat-preview pre")
    assert not preview.is_displayed() and "lazy" in preview.get_attribute("textContent")
    page.find_element(By.CSS_SELECTOR, ".chat-preview summary").click()
    assert preview.is_displayed()
    # The raw JSON is one click away.
    raw = calls[0].find_element(By.CSS_SELECTOR, ".chat-raw pre")
    assert not raw.is_displayed()
    calls[0].find_element(By.CSS_SELECTOR, ".chat-raw summary").click()
    assert raw.is_displayed() and '"results": [' in raw.text
    reply = browser.find_elements(By.CSS_SELECTOR, ".chat-assistant")[-1]
    assert reply.text.startswith("Querysets are lazy.")
    links = [a.get_attribute("href") for a in reply.find_elements(By.CSS_SELECTOR, ".chat-sources a")]
    assert "https://www.djangoproject.com/" in links and article in links
    screenshots(browser, "chat")


def test_per_chat_switches_choose_the_tools_the_model_is_offered(browser, live_server, settings, web):  # noqa: F811
    from selenium.webdriver.common.by import By

    user, _, _site = web
    log_in(browser, live_server, user)
    settings.OPENAI_MODEL = "scripted-model"
    with ScriptedLLM([answer("Fine.")]) as llm:
        settings.OPENAI_BASE_URL = llm.url
        browser.get(live_server.url + reverse("chat"))
        switches = {box.get_attribute("value"): box
                    for box in browser.find_elements(By.CSS_SELECTOR, "#chat-tools input[name=tool]")}
        assert set(switches) == {"web_search", "web_fetch"} and switches["web_search"].is_selected()
        switches["web_search"].click()
        ask_question_here(browser, "Just answer.")
        offered = [tool["function"]["name"] for tool in llm.requests[0].get("tools", [])]
    assert offered == ["web_fetch"]


def test_an_error_is_a_readable_notice(browser, live_server, settings, lookup):
    from selenium.webdriver.common.by import By

    log_in(browser, live_server, "hugo")
    with ScriptedLLM([ask(("lookup", {"text": 42})), answer("Sorry.")]) as llm:
        settings.OPENAI_BASE_URL = llm.url
        ask_question(browser, live_server, "Look up 42.")
    call = browser.find_element(By.CSS_SELECTOR, ".chat-tool")
    assert "chat-failed" in call.get_attribute("class")
    notice = call.find_element(By.CSS_SELECTOR, ".chat-notice")
    assert notice.get_attribute("role") == "alert" and notice.text.startswith("Something went wrong.")
    assert "{" not in notice.text  # the message, not the JSON around it


def test_a_long_unbroken_word_wraps_inside_the_answer_card_on_a_phone(browser, live_server, settings, lookup):
    """A URL or token without spaces (models write them) stays inside the card at a phone's width."""
    from selenium.webdriver.common.by import By

    log_in(browser, live_server, "gwen")
    word = "https://very-long-host.example/" + "a" * 300
    with ScriptedLLM([answer(f"See {word} and also {'x' * 200}.")]) as llm:
        settings.OPENAI_BASE_URL = llm.url
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 360, "height": 740, "deviceScaleFactor": 1, "mobile": True})
        try:
            ask_question(browser, live_server, "A long word?")
            reply = browser.find_elements(By.CSS_SELECTOR, ".chat-assistant")[-1]
            widths = browser.execute_script(
                "var r = arguments[0]; return [r.scrollWidth, r.clientWidth, document.documentElement.scrollWidth,"
                " window.innerWidth];", reply)
        finally:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert "x" * 200 in reply.text.replace("\n", "")
    scroll, client, page, viewport = widths
    assert scroll <= client and page <= viewport, widths
