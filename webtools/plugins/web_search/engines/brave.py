"""Brave Search API: https://api-dashboard.search.brave.com/app/documentation/web-search/get-started"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    COUNTRY,
    FRESHNESS,
    SAFE_SEARCH,
    Engine,
    OptionalText,
    Request,
    Search,
    SearchResult,
    Text,
)

_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


class _Result(serializers.Serializer):
    title = Text()
    url = Text()
    description = OptionalText()
    age = OptionalText()
    page_age = OptionalText()


class _Web(serializers.Serializer):
    results = _Result(many=True)


class _Response(serializers.Serializer):
    # Brave leaves ``web`` out when nothing was found.
    web = _Web(required=False)


class BraveEngine(Engine):
    id = "brave"
    name = "Brave"
    needs_key = True
    endpoint = "https://api.search.brave.com/res/v1/web/search"
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY})
    max_count = 20

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {"q": search.query, "count": search.count, "safesearch": search.safe_search}
        if search.freshness:
            params["freshness"] = _FRESHNESS[search.freshness]
        if search.country:
            params["country"] = search.country
        return Request(
            "GET",
            search.endpoint,
            headers={"Accept": "application/json", "X-Subscription-Token": search.api_key},
            params=params,
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        web = data.get("web") or {"results": []}
        return [
            SearchResult(r["title"], r["url"], r["description"] or "", r["page_age"] or r["age"])
            for r in web["results"]
        ]

    def describe_error(self, status: int, body: str) -> str | None:
        # A wrong token is a 422 with code SUBSCRIPTION_TOKEN_INVALID, not a 401.
        if status == 422 and "SUBSCRIPTION_TOKEN_INVALID" in body:
            return f"The {self.name} API key was rejected."
        return None

    def error_detail(self, body: Any) -> str | None:
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("detail"), str):
            return error["detail"]
        return None
