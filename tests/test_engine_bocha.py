"""Bocha against the engine contract (tests/engine_contract.py), request checked against Bocha's Web
Search API reference (open.bochaai.com). Bocha answers an empty balance with 403."""

from __future__ import annotations

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    FRESHNESS,
    KEY_REJECTED,
    NOT_NOW,
    QUOTA,
    RATE_LIMIT,
)

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestBocha(EngineContract):
    engine_id = "bocha"
    plain_request = {
        "method": "POST",
        "url": ENDPOINT,
        "headers": {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        "json": {"query": QUERY, "count": 5, "summary": False, "freshness": "noLimit"},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    option_requests = {
        "count": {"json": {"count": 3}},
        FRESHNESS: {"json": {"freshness": "oneWeek"}},
        ALLOWED_DOMAINS: {"json": {"include": "python.org|djangoproject.com"}},
        BLOCKED_DOMAINS: {"json": {"exclude": "spam.example"}},
    }
    recorded_count = 5
    recorded_first = (
        "阿里巴巴发布2024年ESG报告　持续推进减碳与数字化普惠",
        "https://www.alibabagroup.com/document-1752073403914780672",
    )

    def default_messages(self):
        return {**super().default_messages(), "forbidden": next(e for e in ENGINES if e.id == "bocha").quota_message()}


def test_an_empty_balance_sends_the_search_to_the_next_engine():
    engine = next(e for e in ENGINES if e.id == "bocha")
    assert engine.kind_of(403, "") == QUOTA and engine.kind_of(429, "") == RATE_LIMIT
    assert engine.kind_of(401, "") == KEY_REJECTED and KEY_REJECTED not in NOT_NOW
