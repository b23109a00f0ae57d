"""Serper against the engine contract (tests/engine_contract.py), request checked against
https://serper.dev/playground."""

from __future__ import annotations

import json

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestSerper(EngineContract):
    engine_id = "serper"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"X-API-KEY": KEY, "Content-Type": "application/json"},
        "json": {"q": QUERY, "num": 5},
    }
    key_header = ("X-API-KEY", KEY)
    option_requests = {
        "count": {"json": {"num": 3}},
        FRESHNESS: {"json": {"tbs": "qdr:w"}},
        COUNTRY: {"json": {"gl": "de"}},
        LANGUAGE: {"json": {"hl": "de"}},
    }
    recorded_count = 9
    recorded_first = (
        "Olivia Wilde embraces Jason Sudeikis amid custody battle, Harry Styles split - Page Six",
        "https://pagesix.com/2023/01/29/olivia-wilde-hugs-it-out-with-jason-sudeikis-after-harry-styles-split/",
    )
    error_answers = {"quota": (400, json.dumps({"message": "Not enough credits", "statusCode": 400}))}
