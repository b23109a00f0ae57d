"""Perplexity's Search API against the engine contract (tests/engine_contract.py), request checked
against https://docs.perplexity.ai/api-reference/search-post."""

from __future__ import annotations

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import ALLOWED_DOMAINS, BLOCKED_DOMAINS, COUNTRY, FRESHNESS

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract, search


class TestPerplexity(EngineContract):
    engine_id = "perplexity"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        "json": {"query": QUERY, "max_results": 5},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    option_requests = {
        "count": {"json": {"max_results": 3}},
        FRESHNESS: {"json": {"search_recency_filter": "week"}},
        COUNTRY: {"json": {"country": "DE"}},
        ALLOWED_DOMAINS: {"json": {"search_domain_filter": ["python.org", "djangoproject.com"]}},
        BLOCKED_DOMAINS: {"json": {"search_domain_filter": ["-spam.example"]}},
    }
    recorded_count = 7
    recorded_first = ("Satya Nadella - Stories", "https://news.microsoft.com/exec/satya-nadella/")


def test_more_than_twenty_domains_are_left_to_the_filter_after_the_answer():
    engine = next(e for e in ENGINES if e.id == "perplexity")
    many = tuple(f"site{i}.example" for i in range(21))
    assert "search_domain_filter" not in engine.request(search(allowed_domains=many)).json
