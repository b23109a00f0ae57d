"""Tavily: https://docs.tavily.com/documentation/api-reference/endpoint/search"""

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
)


class _Result(serializers.Serializer):
    title = Text()
    url = Text()
    content = OptionalText()
    published_date = OptionalText()


class _Response(serializers.Serializer):
    results = _Result(many=True)


class TavilyEngine(Engine):
    id = "tavily"
    name = "Tavily"
    needs_key = True
    endpoint = "https://api.tavily.com/search"
    key_url = "https://app.tavily.com/home"
    pricing = "Free monthly credits, then paid plans."
    supports = frozenset({FRESHNESS, ALLOWED_DOMAINS, BLOCKED_DOMAINS})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {"query": search.query, "max_results": search.count, "search_depth": "basic"}
        if search.freshness:
            body["time_range"] = search.freshness
        if search.allowed_domains:
            body["include_domains"] = list(search.allowed_domains)
        if search.blocked_domains:
            body["exclude_domains"] = list(search.blocked_domains)
        return bearer_post(search, body)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [
            SearchResult(r["title"], r["url"], r["content"] or "", r["published_date"])
            for r in data["results"]
        ]

    def describe_error(self, status: int, body: str) -> str | None:
        if status == 432:
            return f"{self.name}'s plan usage limit was reached."
        if status == 433:
            return f"{self.name}'s pay-as-you-go limit was reached."
        return None

    def error_kind(self, status: int, body: str) -> str | None:
        return QUOTA if status in (432, 433) else None  # the plan's and pay-as-you-go limits

    def error_detail(self, body: Any) -> str | None:
        detail = body.get("detail") if isinstance(body, dict) else None
        if isinstance(detail, dict) and isinstance(detail.get("error"), str):
            return detail["error"]
        if isinstance(detail, str):
            return detail
        if isinstance(detail, list):
            # FastAPI's validation errors: one entry per invalid field, each with a ``msg``.
            messages = [
                entry["msg"]
                for entry in detail
                if isinstance(entry, dict) and isinstance(entry.get("msg"), str)
            ]
            return "; ".join(messages) or None
        return None
