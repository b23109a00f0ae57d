"""Rendering services (Firecrawl scrape, Jina Reader) behind ``render_with``.

The page's site is a loopback server reached through the guarded client (127.0.0.1 allowed by an
address-policy override); the service is another loopback server that ``WEBTOOLS["RENDER_SERVICE_URLS"]``
points the service at, reached with the plain client as the operator's endpoints are. Firecrawl's answers
are the examples of its own documentation (tests/fixtures/fetch/SOURCES.md); Jina publishes no example
answer, so its answers are built from the fields its documentation names, and nothing else.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from tests.leaks import leaks
from tests.servers import LoopbackServer, Reply, raw
from tests import test_web_fetch
from tests.test_web_fetch import make_tool
from webtools.net import HttpClient
from webtools.plugins.web_fetch import render
from webtools.runtime import ToolError
from webtools.testing import tool_context_for_test

FIXTURES = Path(__file__).parent / "fixtures" / "fetch"
KEY = "fc-4c3bd2f5e1a94b0c9d7e6f5a4b3c2d1e"
JINA_KEY = "jina_0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b"

#: A page whose text its script writes: the static reading finds next to nothing.
SHELL = ('<html><head><title>Tide tables</title></head><body><div id="root"></div>'
         '<noscript>You need to enable JavaScript to run this app.</noscript>'
         '<script>document.getElementById("root").textContent = "tides";</script></body></html>')


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


def jina_answer(url: str, title: str, content: str) -> str:
    """Jina's JSON mode as its documentation describes it: ``data`` with ``url``, ``title`` and
    ``content`` (the README's JSON mode; the Reader API docs: the page is in ``data.content``)."""
    return json.dumps({"data": {"url": url, "title": title, "content": content}})


#: The guarded client of the web_fetch tests: 127.0.0.1 allowed, every test host name resolved there.
client = test_web_fetch.client


@pytest.fixture
def plain():
    with HttpClient(policy=None) as c:
        yield c


@pytest.fixture
def site():
    with LoopbackServer({"/app": Reply(200, {"Content-Type": "text/html"}, SHELL)}) as s:
        yield s


@pytest.fixture
def service(settings):
    """The service's stand-in: answers every path with ``service.answer`` (a Reply or a callable)."""
    with LoopbackServer() as s:
        s.answer = Reply(500, {}, b"")
        s.route("*", lambda req: s.answer(req) if callable(s.answer) else s.answer)
        settings.WEBTOOLS = {**settings.WEBTOOLS, "RENDER_SERVICE_URLS": {
            "firecrawl": s.url("/fc"), "jina": s.url("/jina")}}
        yield s


def fetch(client, plain, url, **options):
    options = {"render_javascript": "always", "respect_robots_txt": False, **options}
    ctx, cited = tool_context_for_test(fetch=client, http=plain)
    return make_tool(**options).handler({"url": url}, ctx)


def json_reply(status: int, body: str) -> Reply:
    return Reply(status, {"Content-Type": "application/json"}, body)


# -- the request each service is sent ----------------------------------------------------------------


def test_firecrawl_is_asked_for_main_content_markdown_of_the_checked_url_with_the_bearer_key(
        client, plain, site, service):
    service.answer = json_reply(200, recorded("firecrawl_scrape.json"))
    fetch(client, plain, site.url("/app"), render_with="firecrawl", render_api_key=KEY)
    [request] = service.requests
    assert (request.method, request.path, request.query) == ("POST", "/fc/v2/scrape", "")
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.body) == {"url": site.url("/app"), "formats": ["markdown"], "onlyMainContent": True}
    assert site.hits("/app") == 1  # the static download came first, through the guarded client


def test_jina_is_asked_for_json_of_the_url_in_its_path_with_the_key_only_when_one_is_set(
        client, plain, site, service):
    page = site.url("/app") + "?day=3&tide=high"
    service.answer = json_reply(200, jina_answer(page, "Tide tables", "# Tide tables\n\nHigh water at six."))
    fetch(client, plain, page, render_with="jina")
    fetch(client, plain, page, render_with="jina", render_api_key=JINA_KEY)
    anonymous, keyed = service.requests
    for request in (anonymous, keyed):
        assert request.method == "GET" and request.body == b""
        assert (request.path, request.query) == (f"/jina/{site.url('/app')}", "day=3&tide=high")
        assert request.headers["Accept"] == "application/json"
    assert "Authorization" not in anonymous.headers
    assert keyed.headers["Authorization"] == f"Bearer {JINA_KEY}"


# -- what comes back --------------------------------------------------------------------------------


def test_firecrawls_documented_answer_is_the_page_text_under_the_url_it_reports(client, plain, site, service):
    service.answer = json_reply(200, recorded("firecrawl_scrape.json"))
    output = fetch(client, plain, site.url("/app"), render_with="firecrawl", render_api_key=KEY)
    assert output["rendered"] is True
    assert output["title"] == "Home - Firecrawl"
    assert output["content"].startswith("Launch Week I is here! [See our Day 2 Release")
    # The answer says it read https://firecrawl.dev (sourceURL): that URL was checked and is cited.
    assert output["url"] == "https://firecrawl.dev/"


def test_jinas_markdown_is_capped_paged_and_marked_rendered(client, plain, site, service):
    content = "# Tide tables\n\n" + "\n".join(f"High water on day {n} comes at six." for n in range(400))
    service.answer = json_reply(200, jina_answer(site.url("/app"), "Tide tables", content))
    output = fetch(client, plain, site.url("/app"), render_with="jina", max_characters=500,
                   max_document_characters=2_000)
    assert output["rendered"] is True and output["url"] == site.url("/app") and output["title"] == "Tide tables"
    assert output["content"].startswith("# Tide tables") and len(output["content"]) <= 500
    assert output["nextOffset"] == len(output["content"])
    assert output["totalCharacters"] < 2_200  # cut to the kept characters, with the note saying so
    ctx, _ = tool_context_for_test(fetch=client, http=plain)
    tool = make_tool(render_javascript="always", respect_robots_txt=False, render_with="jina",
                     max_characters=500, max_document_characters=2_000)
    last = tool.handler({"url": site.url("/app"), "offset": output["totalCharacters"] - 100}, ctx)
    assert last["content"].endswith("characters are kept.]") and "nextOffset" not in last
    assert len(service.requests) == 2  # the second part came from the turn's cache


def test_auto_asks_the_service_only_for_a_page_that_needs_it(client, plain, site, service):
    article = "<html><body><article><p>" + "Tides rise and fall twice a day on most coasts. " * 20 + \
        "</p></article></body></html>"
    site.route("/static", Reply(200, {"Content-Type": "text/html"}, article))
    service.answer = json_reply(200, jina_answer(site.url("/app"), "Tide tables", "High water at six. " * 20))
    static = fetch(client, plain, site.url("/static"), render_with="jina", render_javascript="auto")
    assert static["rendered"] is False and service.requests == []
    shell = fetch(client, plain, site.url("/app"), render_with="jina", render_javascript="auto")
    assert shell["rendered"] is True and "High water at six." in shell["content"]
    assert len(service.requests) == 1


# -- what is never handed over ----------------------------------------------------------------------


def test_a_url_the_domain_lists_refuse_never_reaches_the_service(client, plain, site, service):
    with pytest.raises(ToolError, match="not allowed"):
        fetch(client, plain, site.url("/app"), render_with="jina", deny_domains="127.0.0.1")
    assert service.requests == [] and site.hits() == 0


def test_a_url_from_outside_the_conversation_never_reaches_the_service(client, plain, site, service):
    ctx, _ = tool_context_for_test(fetch=client, http=plain)
    ctx.conversation_urls = {"https://example.org/"}
    tool = make_tool(render_javascript="always", render_with="jina", respect_robots_txt=False)
    with pytest.raises(ToolError, match="from the conversation"):
        tool.handler({"url": site.url("/app")}, ctx)
    assert service.requests == [] and site.hits() == 0


def test_a_url_the_service_reports_on_a_denied_domain_is_refused(client, plain, site, service):
    service.answer = json_reply(200, recorded("firecrawl_scrape.json"))  # it reports https://firecrawl.dev
    with pytest.raises(ToolError, match="firecrawl.dev") as refused:
        fetch(client, plain, site.url("/app"), render_with="firecrawl", render_api_key=KEY,
              deny_domains="firecrawl.dev")
    assert "Launch Week" not in str(refused.value)


def test_a_url_the_service_reports_is_checked_against_robots_txt(client, plain, site, service):
    site.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /moved\n"))
    service.answer = json_reply(200, jina_answer(site.url("/moved"), "Moved", "The page moved here."))
    with pytest.raises(ToolError, match="robots.txt"):
        fetch(client, plain, site.url("/app"), render_with="jina", respect_robots_txt=True)


def test_firecrawl_without_a_key_is_not_asked(client, plain, site, service):
    with pytest.raises(ToolError, match="has not set its API key"):
        fetch(client, plain, site.url("/app"), render_with="firecrawl")
    assert service.requests == []


# -- errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "fixture", "message"), [
    (401, "firecrawl_401.json", "Firecrawl rejected the API key (HTTP 401). The operator can replace it"),
    (402, "firecrawl_402.json", "the account's plan or credits do not cover it (HTTP 402)"),
    (429, "firecrawl_429.json", "Firecrawl's rate limit was reached; try again in a minute."),
    (500, "firecrawl_500.json", "Firecrawl failed to read the page (HTTP 500); try again later."),
])
def test_firecrawl_errors_have_fixed_messages_and_never_the_body(client, plain, site, service, status, fixture,
                                                                 message):
    body = recorded(fixture)
    service.answer = json_reply(status, body)
    with pytest.raises(ToolError) as failed:
        fetch(client, plain, site.url("/app"), render_with="firecrawl", render_api_key=KEY)
    assert message in str(failed.value)
    assert json.loads(body)["error"] not in str(failed.value)


@pytest.mark.parametrize(("status", "key", "message"), [
    (401, JINA_KEY, "Jina Reader rejected the API key (HTTP 401)."),
    (403, "", "Jina Reader refused the request without an API key (HTTP 403). The operator can add one"),
    (402, JINA_KEY, "(HTTP 402). The operator can add credits or choose another renderer."),
    (429, "", "Jina Reader's rate limit was reached; try again in a minute. An API key raises the limit."),
    (429, JINA_KEY, "Jina Reader's rate limit was reached; try again in a minute."),
    (503, "", "Jina Reader failed to read the page (HTTP 503); try again later."),
    (422, "", "Jina Reader could not read the page (HTTP 422)."),
])
def test_jina_errors_have_fixed_messages(client, plain, site, service, status, key, message):
    service.answer = Reply(status, {"Content-Type": "text/plain"}, b"")
    with pytest.raises(ToolError) as failed:
        fetch(client, plain, site.url("/app"), render_with="jina", render_api_key=key)
    assert message in str(failed.value)
    if status == 429 and key:
        assert "raises the limit" not in str(failed.value)


def test_a_service_that_does_not_answer_in_time_is_a_timeout(client, plain, site, service):
    def slow(request, handler):
        time.sleep(2.5)

    service.route("*", raw(slow))
    started = time.monotonic()
    with pytest.raises(ToolError, match="Jina Reader did not answer within"):
        fetch(client, plain, site.url("/app"), render_with="jina", timeout_seconds=2)
    assert time.monotonic() - started < 2.4


def test_an_answer_in_another_shape_is_refused(client, plain, site, service):
    service.answer = json_reply(200, json.dumps({"success": True, "data": {"html": "<p>no markdown</p>"}}))
    with pytest.raises(ToolError, match="Firecrawl sent an answer in an unexpected format."):
        fetch(client, plain, site.url("/app"), render_with="firecrawl", render_api_key=KEY)


def test_the_key_is_in_no_url_error_log_or_output(client, plain, site, service, caplog):
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    # A hostile service echoes the key back in its error body, in the clear and base64-encoded.
    echo = json.dumps({"error": f"Unauthorized: Invalid token {KEY}", "details": {"token": KEY}})
    for answer in (json_reply(401, echo), json_reply(429, echo), json_reply(200, "not json " + KEY),
                   json_reply(200, recorded("firecrawl_scrape.json"))):
        service.answer = answer
        try:
            output = fetch(client, plain, site.url("/app"), render_with="firecrawl", render_api_key=KEY)
            seen.append(json.dumps(output))
        except ToolError as err:
            seen.append(str(err))
    tool = make_tool(render_javascript="always", render_with="firecrawl", render_api_key=KEY)
    seen.append(repr(tool.handler.options))
    seen.extend(f"{r.path}?{r.query}" for r in service.requests)
    seen.extend(f"{r.path}?{r.query}" for r in site.requests)
    seen.extend(record.getMessage() for record in caplog.records)
    assert len(service.requests) == 4
    assert any("Firecrawl" in record.getMessage() for record in caplog.records)  # the failures were logged
    for text in seen:
        assert leaks(text, KEY) == [], text


# -- the operator's side ----------------------------------------------------------------------------


@pytest.fixture
def fetch_plugin(use_plugins):
    from webtools.plugins.web_fetch import WebFetchPlugin

    return use_plugins(WebFetchPlugin())


@pytest.mark.django_db
def test_the_system_check_asks_for_chromium_only_when_chromium_renders(fetch_plugin, monkeypatch):
    from webtools import checks
    from webtools.models import PluginOptions

    monkeypatch.setattr(render, "problems", lambda isolation: ["Chromium is missing."])
    row = PluginOptions.objects.create(plugin="web_fetch", values={"render_javascript": "auto"})

    def warnings():
        return [w.msg for w in checks.check_plugin_environment(databases=["default"])]

    assert warnings() == ["Chromium is missing."]
    row.values = {"render_javascript": "auto", "render_with": "jina"}
    row.save()
    assert warnings() == []  # Jina works without a key
    row.values = {"render_javascript": "always", "render_with": "firecrawl"}
    row.save()
    [warning] = warnings()
    assert "Firecrawl" in warning and "API key" in warning and "Chromium" not in warning
    row.set_secrets({"render_api_key@firecrawl": KEY})
    row.save()
    assert warnings() == []
    row.values = {"render_javascript": "never", "render_with": "firecrawl"}
    row.save()
    assert warnings() == []


@pytest.mark.django_db
def test_the_admin_says_which_renderers_keep_a_key_and_never_speaks_of_engines(fetch_plugin):
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from webtools.models import PluginOptions

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    row = PluginOptions.objects.create(plugin="web_fetch",
                                       values={"render_javascript": "auto", "render_with": "firecrawl"})
    url = reverse("admin:webtools_pluginoptions_change", args=[row.pk])

    def key_rows() -> str:
        """The key's row and its clear box's, as the admin page shows them."""
        page = client.get(url).content.decode()
        assert not leaks(page, KEY) and not leaks(page, JINA_KEY)
        return page[page.index("field-render_api_key"):page.index("field-render_isolation")]

    rows = key_rows()
    assert "Not set for any renderer." in rows and "Clear the chosen renderer&#x27;s Renderer API key" in rows
    assert "engine" not in rows.lower()
    row.set_secrets({"render_api_key@firecrawl": KEY, "render_api_key@jina": JINA_KEY})
    row.save()
    rows = key_rows()
    assert "Kept for Firecrawl, Jina Reader, hidden. The key of the renderer chosen above is used" in rows
    assert "engine" not in rows.lower()


@pytest.mark.django_db
def test_each_service_keeps_its_own_key_and_a_turn_gets_only_the_chosen_ones(fetch_plugin):
    from webtools.host import load_options
    from webtools.models import PluginOptions

    row = PluginOptions.objects.create(plugin="web_fetch",
                                       values={"render_javascript": "auto", "render_with": "jina"})
    row.set_secrets({"render_api_key@firecrawl": KEY, "render_api_key@jina": JINA_KEY})
    row.save()
    assert load_options(fetch_plugin["web_fetch"], row).effective["render_api_key"] == JINA_KEY
    row.values = {"render_javascript": "auto", "render_with": "firecrawl"}
    assert load_options(fetch_plugin["web_fetch"], row).effective["render_api_key"] == KEY
    row.values = {"render_javascript": "auto", "render_with": "chromium"}
    assert "render_api_key" not in load_options(fetch_plugin["web_fetch"], row).effective
    row.values = {"render_javascript": "never", "render_with": "firecrawl"}
    assert "render_api_key" not in load_options(fetch_plugin["web_fetch"], row).effective
