"""Mojeek against the engine contract (tests/engine_contract.py), request checked against
https://www.mojeek.com/support/api/search/request_parameters.html. The key is a query parameter by
Mojeek's design; errors are answers whose ``status`` is not OK."""

from __future__ import annotations

import json

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE, SAFE_SEARCH, published_since

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestMojeek(EngineContract):
    engine_id = "mojeek"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json"},
        "params": {"q": QUERY, "fmt": "json", "t": 5, "safe": 1, "api_key": KEY},
    }
    recorded_count = 1
    recorded_first = ("Mojeek", "http://www.mojeek.com/")
    # "ERROR: Daily Limit Reached" is the documentation's own example.
    error_answers = {"quota": (200, json.dumps({"response": {"status": "ERROR: Daily Limit Reached"}}))}

    @property
    def option_requests(self):
        return {
            "count": {"params": {"t": 3}},
            FRESHNESS: {"params": {"since": published_since("week").strftime("%Y%m%d")}},
            SAFE_SEARCH: {"params": {"safe": 0}},
            COUNTRY: {"params": {"rb": "DE"}},
            LANGUAGE: {"params": {"lb": "de"}},
        }
