"""SearXNG against the engine contract (tests/engine_contract.py), request checked against
https://docs.searxng.org/dev/search_api.html. No recorded answer could be found (SOURCES.md)."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import FRESHNESS, LANGUAGE, SAFE_SEARCH

from .engine_contract import BASE_URL, QUERY, EngineContract


class TestSearxng(EngineContract):
    engine_id = "searxng"
    plain_request = {
        "method": "GET",
        "url": f"{BASE_URL}/search",
        "headers": {"Accept": "application/json"},
        "params": {"q": QUERY, "format": "json", "safesearch": 1},
    }
    # SearXNG has no count: the shared code cuts its one page.
    option_requests = {
        "count": {},
        FRESHNESS: {"params": {"time_range": "week"}},
        SAFE_SEARCH: {"params": {"safesearch": 0}},
        LANGUAGE: {"params": {"language": "de"}},
    }
    recorded_count = None
    error_messages = {"forbidden": "must add json to search.formats in settings.yml"}
