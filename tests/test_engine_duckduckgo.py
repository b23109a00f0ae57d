"""DuckDuckGo's HTML page against the engine contract (tests/engine_contract.py). Every answer that is
not a results page is a block, whatever its status. The recorded answer is a real html.duckduckgo.com
page saved by a public project (SOURCES.md); tests/test_engines.py reads the constructed ones."""

from __future__ import annotations

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.search import clean_results
from webtools.plugins.web_search.engines.base import FRESHNESS, SAFE_SEARCH

from .engine_contract import ENDPOINT, QUERY, EngineContract, recorded_path

BLOCKED = next(e for e in ENGINES if e.id == "duckduckgo").blocked


class TestDuckDuckGo(EngineContract):
    engine_id = "duckduckgo"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"Accept": "text/html"},
        "data": {"q": QUERY, "kp": "-1"},
    }
    # The page has no count: the shared code cuts it.
    option_requests = {"count": {}, FRESHNESS: {"data": {"df": "w"}}, SAFE_SEARCH: {"data": {"kp": "-2"}}}
    recorded_count = 10
    recorded_first = ("OpenClaw — Personal AI Assistant", "https://openclaw.ai/")
    error_messages = {case: BLOCKED for case in ("unauthorized", "forbidden", "rate_limited", "quota", "server_error")}
    error_messages["block_page"] = BLOCKED


def test_the_real_page_gives_unwrapped_links_snippets_and_its_dates():
    engine = next(e for e in ENGINES if e.id == "duckduckgo")
    page = recorded_path(engine).read_text(encoding="utf-8")
    assert page.count("//duckduckgo.com/l/?uddg=") >= 10  # every link on it is wrapped
    results, _ = clean_results(engine.parse(page), count=20)
    assert len(results) == 10
    assert results[3] == {
        "title": "OpenClaw - Wikipedia",
        "url": "https://en.wikipedia.org/wiki/OpenClaw",
        "snippet": "OpenClaw (formerly Clawdbot and Moltbot) is a free and open-source autonomous artificial "
        "intelligence (AI) agent developed by Peter Steinberger. It is an autonomous agent that can execute "
        "tasks via large language models, using messaging platforms as its main user interface.",
    }
    # The Forbes result is dated on the page; the zero-click Wikipedia abstract above the results is not one.
    assert results[4]["published"] == "2026-02-06T16:34:00.0000000"
    assert "Here's everything" in results[4]["snippet"]
    assert [r["url"] for r in results].count("https://en.wikipedia.org/wiki/OpenClaw") == 1
