"""Firecrawl search: https://docs.firecrawl.dev/api-reference/endpoint/search

The current endpoint is ``POST /v2/search``, with web results under ``data.web``; v1 answered a plain
``data`` list, which proxies and self-hosted instances may still send, so both are read.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    COUNTRY,
    FRESHNESS,
    LOCATION,
    Engine,
    OptionalText,
    Request,
    ResponseError,
    Search,
    SearchResult,
    Text,
    bearer_post,
    first_text,
)
from .serp import TBS


class _Result(serializers.Serializer):
    title = OptionalText()
    url = Text()
    description = OptionalText()
    metadata = serializers.DictField(required=False, allow_null=True, default=None)


class _V2Data(serializers.Serializer):
    web = _Result(many=True, required=False, default=list)


class _V1Response(serializers.Serializer):
    data = _Result(many=True)


class _V2Response(serializers.Serializer):
    data = _V2Data()


class FirecrawlEngine(Engine):
    id = "firecrawl"
    name = "Firecrawl"
    needs_key = True
    endpoint = "https://api.firecrawl.dev/v2/search"
    key_url = "https://www.firecrawl.dev/app/api-keys"
    pricing = "Free starting credits, then paid plans."
    operators = ("site:example.com", '"exact phrase"', "-term")
    supports = frozenset({FRESHNESS, COUNTRY, LOCATION})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {"query": search.query, "limit": search.count}
        if search.freshness:
            body["tbs"] = TBS[search.freshness]
        if search.country:
            body["country"] = search.country
        place = ",".join(part for part in (search.location.city, search.location.region) if part)
        if place:
            body["location"] = place  # geo-targeting, "San Francisco,California"
        return bearer_post(search, body)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.load_json(body)
        inner = data.get("data") if isinstance(data, dict) else None
        if isinstance(inner, list):
            items = self.validate(_V1Response, data)["data"]
        elif isinstance(inner, dict):
            items = self.validate(_V2Response, data)["data"]["web"]
        else:
            raise ResponseError(f"{self.name} sent a response in an unexpected format.")
        results = []
        for item in items:
            meta = item["metadata"] or {}
            title = first_text(item["title"], meta.get("title"))
            snippet = first_text(item["description"], meta.get("description"))
            results.append(SearchResult(title, item["url"], snippet))
        return results

    def error_detail(self, body: Any) -> str | None:
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return body["error"]
        return None
