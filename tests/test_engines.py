"""The shared cleaning of results, read from constructed answers, and the first eight engines' own quirks
(DuckDuckGo's page, Kagi's related searches, Firecrawl's v1 shape, error bodies). Every engine's request,
real recorded answer and failures are checked by its own module against tests/engine_contract.py."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import (
    BLOCKED,
    FAILED,
    KEY_REJECTED,
    NOT_NOW,
    OUTAGE,
    QUOTA,
    RATE_LIMIT,
    REFUSED,
    ResponseError,
    Search,
    SearchResult,
)
from webtools.plugins.web_search.search import (
    SNIPPET_CHARACTERS,
    clean_results,
    clean_text,
    http_error,
    log_error_body,
)

FIXTURES = Path(__file__).parent / "fixtures" / "search"
BY_ID = {engine.id: engine for engine in ENGINES}
#: The engines with a constructed answer holding the six standard entries (see SOURCES.md).
CONSTRUCTED = ("brave", "duckduckgo", "exa", "firecrawl", "google", "kagi", "searxng", "tavily")
KEY = "test-key-0123456789"

#: What every recorded answer turns into: HTML and entities gone, the long snippet cut, the ftp:// URL
#: and the repeated djangoproject.com URL dropped.
EXPECTED = [
    ("Django & the web", "https://www.djangoproject.com/"),
    ("Django documentation | Django", "https://docs.djangoproject.com/en/5.2/"),
    ("A very long page", "https://example.net/long"),
    ("About Python", "https://www.python.org/about/"),
]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def recorded(engine_id: str) -> str:
    return fixture(f"{engine_id}.html" if engine_id == "duckduckgo" else f"{engine_id}.json")


def search(**kwargs) -> Search:
    values = {"query": "django orm", "count": 5, "endpoint": "https://engine.test/search", "api_key": KEY}
    values.update(kwargs)
    return Search(**values)


# -- recorded answers ---------------------------------------------------------------------------------


def test_constructed_answers_exist():
    missing = [e for e in CONSTRUCTED if not (FIXTURES / (e + (".html" if e == "duckduckgo" else ".json"))).exists()]
    assert missing == []


@pytest.mark.parametrize("engine_id", CONSTRUCTED)
def test_engine_maps_recorded_response_to_clean_results(engine_id):
    raw = BY_ID[engine_id].parse(recorded(engine_id))
    assert len(raw) == 6  # the adapter keeps everything; cleaning is shared

    results, _ = clean_results(raw, count=10)

    assert [(r["title"], r["url"]) for r in results] == EXPECTED
    docs = results[1]["snippet"]
    assert docs == 'Everything you need to know about Django — "batteries included" © DSF'
    assert results[0]["snippet"] == "The web framework for perfectionists with deadlines."
    long = results[2]["snippet"]
    assert len(long) == SNIPPET_CHARACTERS and long.endswith("…")
    assert "&amp;" not in long and "&" in long
    assert all("<" not in r["title"] + r["snippet"] for r in results)


@pytest.mark.parametrize("engine_id", ["brave", "tavily", "searxng", "kagi", "exa"])
def test_engine_passes_on_published_dates(engine_id):
    results, _ = clean_results(BY_ID[engine_id].parse(recorded(engine_id)), count=10)
    assert results[0]["published"] == "2024-05-01T00:00:00Z"
    assert "published" not in results[2]


def test_results_are_cut_to_the_count():
    results, _ = clean_results(BY_ID["brave"].parse(recorded("brave")), count=2)
    assert [r["url"] for r in results] == [url for _, url in EXPECTED[:2]]


def test_kagi_skips_related_searches():
    data = json.loads(recorded("kagi"))
    assert data["data"][-1]["t"] == 1  # the recording holds a related-searches entry
    assert all(r.title != "" for r in BY_ID["kagi"].parse(recorded("kagi")))
    only_related = {"meta": {}, "data": [{"t": 1, "list": ["a", "b"]}]}
    assert BY_ID["kagi"].parse(json.dumps(only_related)) == []


def test_firecrawl_reads_v1_answers_too():
    results, _ = clean_results(BY_ID["firecrawl"].parse(fixture("firecrawl_v1.json")), count=10)
    assert [(r["title"], r["url"]) for r in results] == EXPECTED


@pytest.mark.parametrize("engine_id,name", [("brave", "brave_empty.json"), ("google", "google_empty.json")])
def test_engine_answer_without_results_is_an_empty_list(engine_id, name):
    assert BY_ID[engine_id].parse(fixture(name)) == []


# -- DuckDuckGo ---------------------------------------------------------------------------------------


def test_duckduckgo_unwraps_redirect_links():
    body = fixture("duckduckgo_redirect_links.html")
    assert "//duckduckgo.com/l/?uddg=" in body
    results, _ = clean_results(BY_ID["duckduckgo"].parse(body), count=10)
    assert [(r["title"], r["url"]) for r in results] == EXPECTED


def test_duckduckgo_skips_ads():
    body = fixture("duckduckgo_ads.html")
    assert "result--ad" in body and "y.js" in body
    urls = [r.url for r in BY_ID["duckduckgo"].parse(body)]
    assert urls == ["https://www.djangoproject.com/", "https://docs.djangoproject.com/en/5.2/"]


def test_duckduckgo_block_page_is_an_error_not_an_empty_result():
    with pytest.raises(ResponseError, match="DuckDuckGo blocked the search"):
        BY_ID["duckduckgo"].parse(fixture("duckduckgo_block.html"))


@pytest.mark.parametrize(
    "body", ["", "not html at all", "<html><body><p>Service unavailable</p></body></html>"]
)
def test_duckduckgo_page_without_results_container_is_a_block(body):
    with pytest.raises(ResponseError, match="DuckDuckGo blocked the search"):
        BY_ID["duckduckgo"].parse(body)


def test_duckduckgo_page_saying_no_results_is_an_empty_list():
    assert BY_ID["duckduckgo"].parse(fixture("duckduckgo_no_results.html")) == []


@pytest.mark.parametrize("status", [202, 403, 429, 500])
def test_duckduckgo_non_200_is_a_block(status):
    assert http_error(BY_ID["duckduckgo"], status, "").startswith("DuckDuckGo blocked the search")


# -- malformed answers ------------------------------------------------------------------------------------


JSON_ENGINES = sorted(e for e in CONSTRUCTED if e != "duckduckgo")


@pytest.mark.parametrize("engine_id", JSON_ENGINES)
@pytest.mark.parametrize(
    "body",
    [
        "[]",
        '{"results": "none", "data": 3, "web": [], "items": {}}',
        '{"results": [{"title": {"nested": 1}}], "data": [{"t": "x"}], "web": {"results": [{"url": null}]},'
        ' "items": [{"title": []}]}',
    ],
)
def test_malformed_response_is_an_error_naming_the_engine(engine_id, body):
    engine = BY_ID[engine_id]
    with pytest.raises(ResponseError) as info:
        engine.parse(body)
    assert str(info.value).startswith(engine.name + " sent a response")


# -- error bodies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine_id,status,name,message",
    [
        ("brave", 422, "brave_422_invalid_token.json", "The Brave API key was rejected."),
        ("brave", 429, "brave_429.json", "Brave's rate limit was reached."),
        ("tavily", 432, "tavily_432.json", "Tavily's plan usage limit was reached."),
        ("tavily", 433, "tavily_433.json", "Tavily's pay-as-you-go limit was reached."),
        ("tavily", 422, "tavily_422.json", "Tavily search failed (HTTP 422)."),
        ("kagi", 401, "kagi_401.json", "The Kagi API key was rejected."),
        ("google", 400, "google_400_key_invalid.json", "The Google Programmable Search API key was rejected."),
        ("firecrawl", 401, "firecrawl_401.json", "The Firecrawl API key was rejected."),
        ("exa", 401, "exa_401.json", "The Exa API key was rejected."),
    ],
)
def test_error_response_is_a_fixed_message_naming_the_engine(engine_id, status, name, message):
    assert http_error(BY_ID[engine_id], status, fixture(name)) == message


@pytest.mark.parametrize(
    "engine_id,status,body,kind",
    [
        # Serper documents only the phrase (serper.py): the rule is tested with it alone.
        ("serper", 400, "Not enough credits", QUOTA),
        ("serper", 400, "", FAILED),
        ("tavily", 432, fixture("tavily_432.json"), QUOTA),
        ("tavily", 433, fixture("tavily_433.json"), QUOTA),
        ("tavily", 422, fixture("tavily_422.json"), FAILED),
        ("bocha", 403, "", QUOTA),
        ("brave", 429, fixture("brave_429.json"), RATE_LIMIT),
        ("brave", 422, fixture("brave_422_invalid_token.json"), KEY_REJECTED),
        ("google", 400, fixture("google_400_key_invalid.json"), KEY_REJECTED),
        ("kagi", 401, fixture("kagi_401.json"), KEY_REJECTED),
        ("duckduckgo", 403, "", BLOCKED),
        ("brave", 503, "", OUTAGE),
        ("searxng", 403, "", REFUSED),
    ],
)
def test_an_error_answer_has_the_kind_its_status_or_documented_shape_says(engine_id, status, body, kind):
    assert BY_ID[engine_id].kind_of(status, body) == kind


def test_only_a_quota_a_rate_limit_an_outage_or_a_block_means_not_now():
    assert NOT_NOW == {QUOTA, RATE_LIMIT, OUTAGE, BLOCKED}
    assert not NOT_NOW & {KEY_REJECTED, REFUSED, FAILED}


def test_brave_422_without_the_token_code_is_a_plain_failure():
    body = json.dumps(
        {"type": "ErrorResponse", "error": {"status": 422, "code": "VALIDATION", "detail": "Bad count."}}
    )
    assert http_error(BY_ID["brave"], 422, body) == "Brave search failed (HTTP 422)."


@pytest.mark.parametrize("status", [401, 403])
def test_keyed_engine_401_and_403_say_the_key_was_rejected(status):
    assert http_error(BY_ID["brave"], status, "Forbidden") == "The Brave API key was rejected."


def test_server_error_gives_the_status():
    assert http_error(BY_ID["brave"], 500, "<html>Internal error</html>") == "Brave search failed (HTTP 500)."


def test_searxng_403_says_to_enable_the_json_format():
    message = http_error(BY_ID["searxng"], 403, "<html>Forbidden</html>")
    assert "JSON format" in message and "search.formats" in message and "settings.yml" in message


def test_engine_explanation_is_logged_masked_collapsed_and_cut(caplog):
    caplog.set_level(logging.INFO, "webtools.web_search")
    body = json.dumps({"error": {"detail": f"Token {KEY}  \n\t " + "word " * 200}})
    log_error_body(BY_ID["brave"], 500, body, [KEY])
    [record] = caplog.records
    detail = record.getMessage().split(": ", 1)[1]
    assert detail.startswith("Token [redacted] word") and len(detail) == 300 and "\n" not in detail


def test_engine_explanation_is_left_out_when_absent():
    assert (
        http_error(BY_ID["kagi"], 401, json.dumps({"meta": {}, "data": None}))
        == "The Kagi API key was rejected."
    )


def test_an_engine_explanation_is_never_in_the_message():
    body = json.dumps({"error": [{"code": 1, "msg": f"Token {KEY.upper()} is not valid"}]})
    message = http_error(BY_ID["kagi"], 401, body)
    assert message == "The Kagi API key was rejected."


# -- cleaning order ------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw,clean", [
    ("&lt;script&gt;alert(1)&lt;/script&gt; Title", "alert(1) Title"),
    ("<scr<b>ipt>alert(1)</script>", "script>alert(1)"),
    ("&lt;scr<b>ipt&gt;x", "script>x"),
    ("&amp;lt;b&amp;gt; stays text", "&lt;b&gt; stays text"),
    ("5 &lt; 6 &amp;&amp; 7 &gt; 3", "5 < 6 && 7 > 3"),
    ("A &#xD800; B\x00\x1b C", "A \ufffd B C"),
    ("<!-- note -->Plain <em>words</em>", "Plain words"),
])
def test_titles_are_decoded_before_tags_are_stripped(raw, clean):
    [result], _ = clean_results([SearchResult(raw, "https://example.com/", raw)], count=5)
    assert result["title"] == clean and result["snippet"] == clean


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/!?&#;ltgamp x01Ds\ud800\x00")), max_size=60))
def test_no_cleaned_text_can_open_a_tag_or_hold_an_unencodable_character(raw):
    cleaned = clean_text(raw)
    assert not re.search(r"<[A-Za-z/!?]", cleaned)
    cleaned.encode("utf-8")
