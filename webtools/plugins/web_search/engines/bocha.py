"""Bocha web search (博查, for the Chinese web): https://open.bochaai.com

``POST /v1/web-search`` with a Bearer key; the answer follows Bing's shape, results under
``data.webPages.value``. A wrong key is a 401, an empty balance a 403, too many requests a 429.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    FRESHNESS,
    QUOTA,
    Engine,
    OptionalText,
    Request,
    Search,
    SearchResult,
    Text,
    bearer_post,
    first_text,
)

_FRESHNESS = {"day": "oneDay", "week": "oneWeek", "month": "oneMonth", "year": "oneYear"}
#: The most domains ``include`` and ``exclude`` take each.
MAX_DOMAINS = 20


class _Page(serializers.Serializer):
    name = Text()
    url = Text()
    snippet = OptionalText()
    summary = OptionalText()
    datePublished = OptionalText()  # noqa: N815 (the API's spelling)
    dateLastCrawled = OptionalText()  # noqa: N815 (despite the name, the publication date)


class _WebPages(serializers.Serializer):
    value = _Page(many=True)


class _Data(serializers.Serializer):
    # ``webPages`` is absent or null when nothing was found.
    webPages = _WebPages(required=False, allow_null=True, default=None)  # noqa: N815


class _Response(serializers.Serializer):
    data = _Data()


class BochaEngine(Engine):
    id = "bocha"
    name = "Bocha"
    needs_key = True
    endpoint = "https://api.bochaai.com/v1/web-search"
    key_url = "https://open.bochaai.com"
    pricing = "Prepaid, billed per search."
    supports = frozenset({FRESHNESS, ALLOWED_DOMAINS, BLOCKED_DOMAINS})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {
            "query": search.query,
            "count": search.count,
            "summary": False,
            "freshness": _FRESHNESS[search.freshness] if search.freshness else "noLimit",
        }
        if search.allowed_domains and len(search.allowed_domains) <= MAX_DOMAINS:
            body["include"] = "|".join(search.allowed_domains)
        if search.blocked_domains and len(search.blocked_domains) <= MAX_DOMAINS:
            body["exclude"] = "|".join(search.blocked_domains)
        return bearer_post(search, body)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        pages = data["data"]["webPages"] or {"value": []}
        return [
            SearchResult(
                p["name"],
                p["url"],
                first_text(p["snippet"], p["summary"]),
                p["datePublished"] or p["dateLastCrawled"],
            )
            for p in pages["value"]
        ]

    def error_kind(self, status: int, body: str) -> str | None:
        # 403 is Bocha's "balance used up": another engine may answer, as for any used-up quota.
        return QUOTA if status == 403 else None
