"""SerpApi against the engine contract (tests/engine_contract.py), request checked against
https://serpapi.com/search-api. The key is a query parameter by SerpApi's design."""

from __future__ import annotations

import json

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE, SAFE_SEARCH

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestSerpApi(EngineContract):
    engine_id = "serpapi"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json"},
        "params": {"engine": "google", "q": QUERY, "num": 5, "safe": "active", "api_key": KEY},
    }
    option_requests = {
        "count": {"params": {"num": 3}},
        FRESHNESS: {"params": {"tbs": "qdr:w"}},
        SAFE_SEARCH: {"params": {"safe": "off"}},
        COUNTRY: {"params": {"gl": "de"}},
        LANGUAGE: {"params": {"hl": "de"}},
    }
    recorded_count = 5
    recorded_first = ("Coffee - Wikipedia", "https://en.wikipedia.org/wiki/Coffee")
    error_answers = {"quota": (429, json.dumps({"error": "Your account has run out of searches."}))}
