"""Exa against the engine contract (tests/engine_contract.py), request checked against
https://docs.exa.ai/reference/search."""

from __future__ import annotations

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    COUNTRY,
    FRESHNESS,
    SAFE_SEARCH,
    published_since,
)

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract, search


class TestExa(EngineContract):
    engine_id = "exa"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"x-api-key": KEY, "Content-Type": "application/json"},
        "json": {"query": QUERY, "numResults": 5, "contents": {"text": {"maxCharacters": 1000}}},
    }
    key_header = ("x-api-key", KEY)
    recorded_count = 1
    recorded_first = ("A Comprehensive Overview of Large Language Models", "https://arxiv.org/pdf/2307.06435.pdf")

    @property
    def option_requests(self):
        return {
            "count": {"json": {"numResults": 3}},
            FRESHNESS: {"json": {"startPublishedDate": published_since("week").strftime("%Y-%m-%dT%H:%M:%S.000Z")}},
            # Exa moderates only when asked to: off and moderate send the same request (strict: below).
            SAFE_SEARCH: {},
            COUNTRY: {"json": {"userLocation": "DE"}},
            ALLOWED_DOMAINS: {"json": {"includeDomains": ["python.org", "djangoproject.com"]}},
            BLOCKED_DOMAINS: {"json": {"excludeDomains": ["spam.example"]}},
        }


def test_strict_safe_search_asks_exa_to_moderate():
    engine = next(e for e in ENGINES if e.id == "exa")
    assert engine.request(search(safe_search="strict")).json["moderation"] is True
