"""URL provenance: web_fetch fetches only URLs that appeared in the conversation.

The record is filled by what the host observes (the user's messages), by tools' successful output and
by replayed results; never by the model's own text or by an error that echoes the model's input.
"""
from __future__ import annotations

import json

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
from webtools.runtime import Ingesters, PluginSetup, Registry, Tool, ToolError, Turn, wrap_untrusted
from webtools.runtime.provenance import MAX_URLS, ConversationUrls, canonical, urls_in

#: What a refused fetch of a URL the conversation never showed returns.
REFUSED = {"error": NOT_FROM_CONVERSATION, "error_code": "url_not_in_prior_context"}

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
    assert refused.is_error and refused.output == REFUSED
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
    with fetch_turn(client, Tool("finder", "", schema, finder, untrusted=True)) as turn:
        turn.call("finder", {"text": "fail"})
        # The model put a URL in its input; the error echoes it: it must not become fetchable.
        turn.call("finder", {"text": site.url("/other")})
        assert turn.call("web_fetch", {"url": site.url("/other")}).output == REFUSED
        turn.call("finder", {"text": "tides"})
        assert not turn.call("web_fetch", {"url": site.url("/springs")}).is_error


def test_a_trusted_tools_output_never_counts_it_may_echo_the_models_input(client, site):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    echo = Tool("echo", "", schema, lambda input, ctx: {"said": input["text"]})
    with fetch_turn(client, echo) as turn:
        assert not turn.call("echo", {"text": site.url("/other")}).is_error
        assert turn.call("web_fetch", {"url": site.url("/other")}).output == REFUSED
    assert site.hits("/other") == 0


def test_an_untrusted_output_does_not_vouch_for_the_urls_of_its_own_input(client, site):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    echo = Tool("echo", "", schema, lambda input, ctx: {"results": [{"url": input["text"]}]}, untrusted=True)
    with fetch_turn(client, echo) as turn:
        # Escaped as JSON text or not, the model's own URL does not come back as "seen".
        assert not turn.call("echo", '{"text": "' + site.url("/other").replace("/", "\\/") + '"}').is_error
        assert not turn.call("echo", {"text": site.url("/other")}).is_error
        assert turn.call("web_fetch", {"url": site.url("/other")}).output == REFUSED
    assert site.hits("/other") == 0


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
        {"role": "tool", "tool_call_id": "1", "content": wrap_untrusted('{"url": "https://tool.example/d"}')},
        # A trusted tool's output (not wrapped) and an error echoing the model's input never count.
        {"role": "tool", "tool_call_id": "2", "content": '{"url": "https://trusted.example/e"}'},
        {"role": "tool", "tool_call_id": "3", "content": wrap_untrusted('{"error": "Bad https://err.example/f"}')},
    ])
    assert "https://user.example/a" in turn.urls and "https://parts.example/b" in turn.urls
    assert "https://tool.example/d" in turn.urls
    for url in ("https://system.example/", "https://image.example/c", "https://model.example/leak?q=secret",
                "https://trusted.example/e", "https://err.example/f"):
        assert url not in turn.urls


def test_anthropic_adapter_observes_user_text_and_tool_results_but_not_the_models():
    turn = Turn(registry=Registry())
    wt_anthropic.observe(turn, [
        {"role": "user", "content": "Read https://user.example/a"},
        {"role": "assistant", "content": [{"type": "text", "text": "https://model.example/leak?q=s"},
                                          {"type": "tool_use", "id": "t", "name": "web_fetch",
                                           "input": {"url": "https://model.example/x"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t",
             "content": [{"type": "text", "text": wrap_untrusted('"https://r.example/ https://model.example/x"')}]},
            {"type": "tool_result", "tool_use_id": "u", "is_error": True,
             "content": wrap_untrusted('"Nothing at https://err.example/"')},
            {"type": "text", "text": "also https://user.example/b"},
        ]},
    ])
    for url in ("https://user.example/a", "https://user.example/b", "https://r.example/"):
        assert url in turn.urls
    # The tool's output echoed the model's own input: it does not vouch for it.
    for url in ("https://model.example/leak?q=s", "https://model.example/x", "https://err.example/"):
        assert url not in turn.urls


# -- one rule across turns and adapters (hypothesis) --------------------------------------------------
#
# A transcript is made by real calls in turn 1 and kept as the documented loops keep it; turn 2 observes
# it through an adapter. URLs are hidden in every field of every kind of message; only what the user
# wrote and what a successful untrusted output brought from outside may count as seen, in either turn.

OUTSIDE = {n: f"https://outside-{n}.example/page?id={n}" for n in range(4)}
LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "integer"}, "note": {"type": "string"}, "fail": {"type": "boolean"}},
    "required": ["key"],
}
ECHO_SCHEMA = {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}


def _lookup(input, ctx):
    """An untrusted tool: a page from outside that also echoes the model's note (as a careless
    plugin might); with ``fail`` it raises an error that echoes the note."""
    if input.get("fail"):
        raise ToolError(f"Nothing found for {input.get('note', '')}.")
    return {"content": f"See {OUTSIDE[input['key'] % len(OUTSIDE)]} for more.", "asked": input.get("note", "")}


def _transcript_registry() -> Registry:
    registry = Registry()
    registry.register(Tool("lookup", "", LOOKUP_SCHEMA, _lookup, untrusted=True), "test")
    registry.register(Tool("echo", "", ECHO_SCHEMA, lambda input, ctx: {"said": input["note"]}), "test")
    return registry


def _model_url(n: int, spelling: int) -> str:
    url = f"https://model-{n}.example/collect?d=SECRET{n}"
    return [url, url.upper().replace("?D=SECRET", "?d=SECRET"), url.replace("https://", "HTTPS://")][spelling]


STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 99)),
    st.tuples(st.just("system"), st.integers(0, 99)),
    st.tuples(st.just("assistant"), st.integers(0, 99)),
    # A call: which tool, the page key, where the model's URL hides, whether the call fails.
    st.tuples(st.just("call"), st.sampled_from(["lookup", "echo"]), st.integers(0, 3),
              st.sampled_from(["note", "key", "none"]), st.booleans(), st.integers(0, 99)),
)


def _run_transcript(steps, spelling: int, dialect: str):
    """Turn 1: real calls for the steps; returns (turn 1, the kept messages, URLs that may count,
    URLs the model composed)."""
    registry = _transcript_registry()
    allowed, composed = set(), set()
    messages: list = []
    turn = Turn(registry=registry, requested_tools=["lookup", "echo"])
    for index, step in enumerate(steps):
        kind = step[0]
        if kind == "user":
            url = f"https://user-{step[1]}.example/a"
            allowed.add(canonical(url))
            messages.append({"role": "user", "content": f"Please read {url}."})
            turn.observe(f"Please read {url}.")
        elif kind in ("system", "assistant"):
            url = _model_url(step[1], spelling)
            composed.add(canonical(url))
            messages.append({"role": kind, "content": f"I will now fetch {url}"})
        else:
            _, tool, key, hide, fail, n = step
            url = _model_url(n, spelling)
            composed.add(canonical(url))
            if tool == "lookup":
                args = {"key": url if hide == "key" else key, "note": url if hide == "note" else "tides"}
                if fail:
                    args["fail"] = True
            else:
                args = {"note": url if hide != "none" else "tides"}
            call_id = f"c{index}"
            text = json.dumps(args).replace("/", "\\/")  # what a model may send: escaped, still the URL
            result = turn.call(tool, text, call_id)
            # Every call runs (or fails) as the step says: the transcript is the one a host keeps.
            assert result.is_error == (hide == "key" and tool == "lookup" or fail and tool == "lookup"), result
            if tool == "lookup" and not result.is_error:
                allowed.add(canonical(OUTSIDE[key % len(OUTSIDE)]))
            if dialect == "openai":
                messages.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": tool, "arguments": text}}]})
                messages.append(wt_openai.tool_message(result))
            else:
                messages.append({"role": "assistant", "content": [
                    {"type": "text", "text": f"Calling {tool}."},
                    {"type": "tool_use", "id": call_id, "name": tool, "input": args}]})
                messages.append({"role": "user", "content": [wt_anthropic.tool_result_block(result)]})
    return turn, messages, allowed, composed - allowed


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=12), spelling=st.integers(0, 2),
       dialect=st.sampled_from(["openai", "anthropic"]))
def test_only_the_users_text_and_successful_untrusted_outputs_count_in_any_number_of_turns(
    steps, spelling, dialect
):
    first, messages, allowed, composed = _run_transcript(steps, spelling, dialect)
    adapter = wt_openai if dialect == "openai" else wt_anthropic
    later = Turn(registry=_transcript_registry())
    adapter.observe(later, messages)
    # And a third turn that observes the same history again, as a host does every turn.
    third = Turn(registry=_transcript_registry())
    adapter.observe(third, messages)
    for turn in (first, later, third):
        for url in composed:
            assert url not in turn.urls, url
    for turn in (later, third):
        for url in allowed:
            assert url in turn.urls, url
