"""SearchApi against the engine contract (tests/engine_contract.py), request checked against
https://www.searchapi.io/docs/google."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE, SAFE_SEARCH

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestSearchApi(EngineContract):
    engine_id = "searchapi"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json", "Authorization": f"Bearer {KEY}"},
        "params": {"engine": "google", "q": QUERY, "num": 5, "safe": "active"},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    option_requests = {
        "count": {"params": {"num": 3}},
        FRESHNESS: {"params": {"time_period": "last_week"}},
        SAFE_SEARCH: {"params": {"safe": "off"}},
        COUNTRY: {"params": {"gl": "de"}},
        LANGUAGE: {"params": {"hl": "de"}},
    }
    recorded_count = 5
    recorded_first = ("Satya Nadella - Stories", "https://news.microsoft.com/exec/satya-nadella/")
