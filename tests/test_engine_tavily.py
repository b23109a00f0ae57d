"""Tavily against the engine contract (tests/engine_contract.py), request checked against
https://docs.tavily.com/documentation/api-reference/endpoint/search. Tavily says "out of credits" with
its own statuses, 432 (plan) and 433 (pay-as-you-go)."""

from __future__ import annotations

from pathlib import Path

from webtools.plugins.web_search.engines.base import ALLOWED_DOMAINS, BLOCKED_DOMAINS, FRESHNESS

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract

FIXTURES = Path(__file__).parent / "fixtures" / "search"


class TestTavily(EngineContract):
    engine_id = "tavily"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        "json": {"query": QUERY, "max_results": 5, "search_depth": "basic"},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    option_requests = {
        "count": {"json": {"max_results": 3}},
        FRESHNESS: {"json": {"time_range": "week"}},
        ALLOWED_DOMAINS: {"json": {"include_domains": ["python.org", "djangoproject.com"]}},
        BLOCKED_DOMAINS: {"json": {"exclude_domains": ["spam.example"]}},
    }
    recorded_count = 7
    recorded_first = ("Satya Nadella - Stories", "https://news.microsoft.com/exec/satya-nadella/")
    error_answers = {"quota": (432, (FIXTURES / "tavily_432.json").read_text())}
    error_messages = {"quota": "Tavily's plan usage limit was reached."}
