"""Brave against the engine contract (tests/engine_contract.py), request checked against
https://api-dashboard.search.brave.com/app/documentation/web-search/query."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE, LOCATION, SAFE_SEARCH

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestBrave(EngineContract):
    engine_id = "brave"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json", "X-Subscription-Token": KEY},
        "params": {"q": QUERY, "count": 5, "safesearch": "moderate"},
    }
    key_header = ("X-Subscription-Token", KEY)
    option_requests = {
        "count": {"params": {"count": 3}},
        FRESHNESS: {"params": {"freshness": "pw"}},
        SAFE_SEARCH: {"params": {"safesearch": "off"}},
        COUNTRY: {"params": {"country": "DE"}},
        LANGUAGE: {"params": {"search_lang": "de"}},
        # The place goes in headers (Brave's request-headers docs); the plain search has no country.
        LOCATION: {
            "headers": {"X-Loc-City": "Munich", "X-Loc-State-Name": "Bavaria", "X-Loc-Timezone": "Europe/Berlin"}
        },
    }
    recorded_count = 2
    recorded_first = ("Brave Search API – Real-Time Web Search for AI", "https://brave.com/search/api/")
