"""Firecrawl against the engine contract (tests/engine_contract.py), request checked against
https://docs.firecrawl.dev/api-reference/endpoint/search (v2)."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LOCATION

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestFirecrawl(EngineContract):
    engine_id = "firecrawl"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        "json": {"query": QUERY, "limit": 5},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    option_requests = {
        "count": {"json": {"limit": 3}},
        FRESHNESS: {"json": {"tbs": "qdr:w"}},
        COUNTRY: {"json": {"country": "DE"}},
        LOCATION: {"json": {"location": "Munich,Bavaria"}},
    }
    recorded_count = 1
    recorded_first = ("Firecrawl Documentation", "https://docs.firecrawl.dev")
