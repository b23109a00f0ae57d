"""Google Programmable Search against the engine contract (tests/engine_contract.py), request checked
against https://developers.google.com/custom-search/v1/reference/rest/v1/cse/list. The key goes in
the X-Goog-Api-Key header instead of the documented ``?key=``."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE, SAFE_SEARCH

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestGoogle(EngineContract):
    engine_id = "google"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json", "X-Goog-Api-Key": KEY},
        "params": {"cx": "cx-0123", "q": QUERY, "num": 5, "safe": "active"},
    }
    key_header = ("X-Goog-Api-Key", KEY)
    option_requests = {
        "count": {"params": {"num": 3}},
        FRESHNESS: {"params": {"dateRestrict": "w1"}},
        SAFE_SEARCH: {"params": {"safe": "off"}},
        COUNTRY: {"params": {"gl": "de"}},
        LANGUAGE: {"params": {"lr": "lang_de"}},
    }
    recorded_count = 5
    recorded_first = ("India - Wikipedia", "https://en.wikipedia.org/wiki/India")
