"""Linkup against the engine contract (tests/engine_contract.py), request checked against
https://docs.linkup.so/api-reference/search/search."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import ALLOWED_DOMAINS, BLOCKED_DOMAINS, FRESHNESS, published_since

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestLinkup(EngineContract):
    engine_id = "linkup"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        "json": {"q": QUERY, "depth": "standard", "outputType": "searchResults", "maxResults": 5},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    recorded_count = 1
    recorded_first = ("Microsoft 2024 Annual Report", "https://www.microsoft.com/investor/reports/ar24/index.html")

    @property
    def option_requests(self):
        return {
            "count": {"json": {"maxResults": 3}},
            FRESHNESS: {"json": {"fromDate": published_since("week").date().isoformat()}},
            ALLOWED_DOMAINS: {"json": {"includeDomains": ["python.org", "djangoproject.com"]}},
            BLOCKED_DOMAINS: {"json": {"excludeDomains": ["spam.example"]}},
        }
