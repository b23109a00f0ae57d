"""DuckDuckGo's HTML page against the engine contract (tests/engine_contract.py). Every answer that is
not a results page is a block, whatever its status. No real results page could be found (SOURCES.md);
tests/test_engines.py reads the constructed ones."""

from __future__ import annotations

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import FRESHNESS, SAFE_SEARCH

from .engine_contract import ENDPOINT, QUERY, EngineContract

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
    recorded_count = None
    error_messages = {case: BLOCKED for case in ("unauthorized", "forbidden", "rate_limited", "quota", "server_error")}
    error_messages["block_page"] = BLOCKED
