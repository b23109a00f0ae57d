"""Serply against the engine contract (tests/engine_contract.py), request checked against
https://serply.io/docs: the query is in the path. The recorded answer is the example in Serply's own
OpenAPI description (SOURCES.md)."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import COUNTRY

from .engine_contract import ENDPOINT, KEY, EngineContract

HEADERS = {"Accept": "application/json", "X-Api-Key": KEY}


class TestSerply(EngineContract):
    engine_id = "serply"
    plain_request = {"method": "GET", "url": f"{ENDPOINT}/q=django+orm&num=5", "headers": HEADERS}
    key_header = ("X-Api-Key", KEY)
    option_requests = {
        "count": {"url": f"{ENDPOINT}/q=django+orm&num=3"},
        COUNTRY: {"headers": {"X-Proxy-Location": "DE"}},
    }
    recorded_count = 10
    recorded_first = (
        "Custom Search JSON API | Google Developers",
        "https://developers.google.com/custom-search/v1/overview",
    )
