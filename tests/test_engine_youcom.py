"""You.com against the engine contract (tests/engine_contract.py), request checked against
https://docs.you.com/api-reference/search/v1-search."""

from __future__ import annotations

import json

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import COUNTRY, FRESHNESS, LANGUAGE, SAFE_SEARCH

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestYouCom(EngineContract):
    engine_id = "youcom"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json", "X-API-Key": KEY},
        "params": {"query": QUERY, "count": 5, "safesearch": "moderate"},
    }
    key_header = ("X-API-Key", KEY)
    option_requests = {
        "count": {"params": {"count": 3}},
        FRESHNESS: {"params": {"freshness": "week"}},
        SAFE_SEARCH: {"params": {"safesearch": "off"}},
        COUNTRY: {"params": {"country": "DE"}},
        LANGUAGE: {"params": {"language": "de"}},
    }
    # The web result, then the news result.
    recorded_count = 2
    recorded_first = ("The World's Greatest Search Engine!", "https://you.com")


def test_older_hits_answers_are_read_too():
    engine = next(e for e in ENGINES if e.id == "youcom")
    body = {"hits": [{"url": "https://you.com", "title": "You", "description": "", "snippets": ["A snippet."]}]}
    (result,) = engine.parse(json.dumps(body))
    assert (result.url, result.snippet) == ("https://you.com", "A snippet.")
