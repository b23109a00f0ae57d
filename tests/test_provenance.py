"""URL provenance: web_fetch fetches only URLs that appeared in the conversation.

The record is filled by what the host observes (the user's messages), by tools' successful output and
by replayed results; never by the model's own text or by an error that echoes the model's input.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from urllib3.util import parse_url

from tests.servers import LoopbackServer, Reply
from webtools.integrations import anthropic as wt_anthropic
from webtools.integrations import openai as wt_openai
from webtools.net import AddressPolicy, HttpClient
from webtools.plugins.web_fetch import WebFetchOptionsForm, WebFetchPlugin
from webtools.plugins.web_fetch.tool import NOT_FROM_CONVERSATION
from webtools.runtime import Ingesters, PluginSetup, Registry, Tool, ToolError, Turn
from webtools.runtime.provenance import MAX_URLS, ConversationUrls, canonical, urls_in

PAGE = """<html><head><title>Tides</title></head><body><article><h1>Tides</h1>
<p>The Moon pulls the oceans into two bulges, and the planet turns beneath them, so most coasts see two
high tides a day. Read about <a href="/springs">spring tides</a> for the rest of the story.</p>
<p>Neap tides come when the Sun and the Moon pull at right angles, and the bulges are smaller.</p>
</article></body></html>"""


# -- the canonical form ------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b", [
    ("HTTPS://Example.COM/a", "https://example.com/a"),
    ("https://example.com", "https://example.com/"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com/a#part", "https://example.com/a"),
    ("https://example.com/%7euser", "https://example.com/~user"),
    ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
    ("https://bücher.de/x", "https://xn--bcher-kva.de/x"),
    ("https://example.com./a", "https://example.com/a"),
])
def test_spellings_of_one_address_share_the_canonical_form(a, b):
    assert canonical(a) == canonical(b)


@pytest.mark.parametrize("a, b", [
    ("https://example.com/a?q=1", "https://example.com/a?q=2"),
    ("https://example.com/a", "https://example.com/a?leak=secret"),
    ("https://example.com/a", "https://secret@example.com/a"),
    ("https://example.com/a", "https://example.com:8443/a"),
    ("https://example.com/a", "http://example.com/a"),
    ("https://example.com/a", "https://example.com/A"),
    ("https://example.com/a", "https://secret.example.com/a"),
])
def test_addresses_a_server_can_tell_apart_stay_apart(a, b):
    assert canonical(a) != canonical(b)


@pytest.mark.parametrize("url", ["ftp://example.com/", "mailto:a@example.com", "https://", "not a url",
                                 "https://[::1", "javascript:alert(1)"])
def test_what_is_not_an_http_url_has_no_canonical_form(url):
    assert canonical(url) is None


# Whitespace and control characters are left out: web_fetch strips them from the ends before both
# checking and fetching, and inside a URL urllib3 refuses them.
URL_TEXT = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF, exclude_characters="#",
                                 exclude_categories=("Cc", "Zs")), max_size=30)


@settings(max_examples=300, deadline=None)
@given(host=st.from_regex(r"\A[a-z][a-z0-9-]{0,20}\.(com|org|de)\Z"), path=URL_TEXT, query=URL_TEXT)
def test_canonical_form_is_stable_and_keeps_what_urllib3_sends(host, path, query):
    url = f"https://{host}/{path}?{query}"
    form = canonical(url)
    if form is None:
        return
    assert canonical(form) == form
    # urllib3, which sends our requests, reads the same host and the same path and query once both
    # are escaped the way it escapes them.
    sent, ours = parse_url(url), parse_url(form)
    assert ours.host == sent.host
    assert canonical(f"https://{host}{sent.request_uri}") == form


@settings(max_examples=200, deadline=None)
@given(before=st.text(max_size=40), after=st.text(max_size=40),
       url=st.from_regex(r"\Ahttps://[a-z]{1,10}\.example/[a-z0-9/._~-]{0,20}(\?[a-z0-9=&]{1,20})?\Z"))
def test_a_url_written_in_any_text_is_recorded(before, after, url):
    seen = ConversationUrls([f"{before} {url} {after}"])
    assert url in seen


@settings(max_examples=200, deadline=None)
@given(url=st.from_regex(r"\Ahttps://[a-z]{1,10}\.example/[a-z0-9/]{0,20}\Z"),
       secret=st.from_regex(r"\A[A-Za-z0-9]{4,30}\Z"))
def test_a_recorded_url_with_anything_appended_is_not_recorded(url, secret):
    seen = ConversationUrls([f"See {url}"])
    assert f"{url}?q={secret}" not in seen
    assert f"{url.rstrip('/')}/{secret}" not in seen


@pytest.mark.parametrize("text, url", [
    ("Read https://example.com/a.", "https://example.com/a"),
    ("[the docs](https://example.com/docs) say", "https://example.com/docs"),
    ("(see https://example.com/b)", "https://example.com/b"),
    ('{"url": "https://example.com/c"}', "https://example.com/c"),
    ("<https://example.com/d>", "https://example.com/d"),
    ("https://en.wikipedia.org/wiki/Tide_(disambiguation)", "https://en.wikipedia.org/wiki/Tide_(disambiguation)"),
])
def test_urls_in_running_text_and_markdown_are_found(text, url):
    assert canonical(url) in urls_in(text)


def test_the_record_stays_bounded():
    seen = ConversationUrls()
    seen.observe(" ".join(f"https://example.com/{n}" for n in range(MAX_URLS + 50)))
    assert len(seen) == MAX_URLS


# -- web_fetch through a turn ----------------------------------------------------------------------


@pytest.fixture
def site():
    with LoopbackServer({
        "/": Reply(200, {"Content-Type": "text/html; charset=utf-8"}, PAGE),
        "/springs": Reply(200, {"Content-Type": "text/plain"}, "Spring tides are larger."),
        "/other": Reply(200, {"Content-Type": "text/plain"}, "Another page."),
    }) as server:
        yield server


@pytest.fixture
def client():
    with HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"])) as c:
        yield c


def fetch_turn(client, *tools: Tool, messages=(), **options) -> Turn:
    plugin = WebFetchPlugin()
    form = WebFetchOptionsForm(data={**plugin.default_options(), "respect_robots_txt": False, **options})
    assert form.is_valid(), form.errors
    registry = Registry()
    plugin.setup(PluginSetup("web_fetch", form.cleaned_data, registry, Ingesters()))
    for tool in tools:
        registry.register(tool, "test")
    return Turn(registry=registry, fetch=client, messages=messages,
                requested_tools=["web_fetch", *(t.name for t in tools)])


def test_a_url_the_user_wrote_is_fetched_and_one_nobody_wrote_is_refused_before_any_request(client, site):
    with fetch_turn(client, messages=[f"What does {site.url('/')} say about tides?"]) as turn:
        assert not turn.call("web_fetch", {"url": site.url("/")}).is_error
        refused = turn.call("web_fetch", {"url": site.url("/other")})
    assert refused.is_error and refused.output == {"error": NOT_FROM_CONVERSATION}
    assert site.hits("/other") == 0


def test_links_of_a_fetched_page_may_be_fetched_next(client, site):
    with fetch_turn(client, messages=[f"Read {site.url('/')}"]) as turn:
        page = turn.call("web_fetch", {"url": site.url("/")})
        assert site.url("/springs") in page.output["content"]
        assert not turn.call("web_fetch", {"url": site.url("/springs")}).is_error
    assert site.hits("/springs") == 1


def test_text_observed_during_the_turn_counts(client, site):
    with fetch_turn(client) as turn:
        assert turn.call("web_fetch", {"url": site.url("/")}).is_error
        turn.observe(f"And now {site.url('/')}, please.")
        assert not turn.call("web_fetch", {"url": site.url("/")}).is_error


def test_urls_in_another_tools_output_count_but_not_in_its_errors(client, site):
    def finder(input, ctx):
        if input["text"] == "fail":
            raise ToolError(f"Nothing found for {site.url('/other')}.")
        return {"results": [{"url": site.url("/springs")}]}

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    with fetch_turn(client, Tool("finder", "", schema, finder)) as turn:
        turn.call("finder", {"text": "fail"})
        # The model put a URL in its input; the error echoes it: it must not become fetchable.
        turn.call("finder", {"text": site.url("/other")})
        assert turn.call("web_fetch", {"url": site.url("/other")}).output == {"error": NOT_FROM_CONVERSATION}
        turn.call("finder", {"text": "tides"})
        assert not turn.call("web_fetch", {"url": site.url("/springs")}).is_error


def test_a_replayed_result_restores_its_urls_but_a_replayed_error_does_not(client, site):
    stored = [
        {"tool": "web_fetch", "output": {"url": site.url("/"), "content": f"[spring]({site.url('/springs')})"}},
        {"tool": "web_fetch", "output": {"error": f"Fetching {site.url('/other')} failed (HTTP 404)."}},
    ]
    with fetch_turn(client) as turn:
        turn.replay(stored)
        assert not turn.call("web_fetch", {"url": site.url("/springs")}).is_error
        assert turn.call("web_fetch", {"url": site.url("/other")}).is_error


def test_the_operator_can_turn_the_rule_off(client, site):
    with fetch_turn(client, only_conversation_urls=False) as turn:
        assert not turn.call("web_fetch", {"url": site.url("/other")}).is_error


def test_the_option_is_on_unless_the_operator_turns_it_off():
    assert WebFetchPlugin().default_options()["only_conversation_urls"] is True


# -- the adapters observe the user's messages ------------------------------------------------------


def test_openai_adapter_observes_user_and_tool_messages_but_not_the_models():
    turn = Turn(registry=Registry())
    wt_openai.observe(turn, [
        {"role": "system", "content": "https://system.example/"},
        {"role": "user", "content": "Read https://user.example/a"},
        {"role": "user", "content": [{"type": "text", "text": "and https://parts.example/b"},
                                     {"type": "image_url", "image_url": {"url": "https://image.example/c"}}]},
        {"role": "assistant", "content": "I will fetch https://model.example/leak?q=secret"},
        {"role": "tool", "tool_call_id": "1", "content": '{"url": "https://tool.example/d"}'},
    ])
    assert "https://user.example/a" in turn.urls and "https://parts.example/b" in turn.urls
    assert "https://tool.example/d" in turn.urls
    for url in ("https://system.example/", "https://image.example/c", "https://model.example/leak?q=secret"):
        assert url not in turn.urls


def test_anthropic_adapter_observes_user_text_and_tool_results_but_not_the_models():
    turn = Turn(registry=Registry())
    wt_anthropic.observe(turn, [
        {"role": "user", "content": "Read https://user.example/a"},
        {"role": "assistant", "content": [{"type": "text", "text": "https://model.example/leak?q=s"},
                                          {"type": "tool_use", "id": "t", "name": "web_fetch",
                                           "input": {"url": "https://model.example/x"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "https://r.example/"}]},
            {"type": "text", "text": "also https://user.example/b"},
        ]},
    ])
    for url in ("https://user.example/a", "https://user.example/b", "https://r.example/"):
        assert url in turn.urls
    assert "https://model.example/leak?q=s" not in turn.urls and "https://model.example/x" not in turn.urls
