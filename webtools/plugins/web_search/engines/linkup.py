"""Linkup: https://docs.linkup.so/pages/documentation/api-reference/endpoint/post-search

``POST /v1/search`` with a Bearer key, ``outputType: searchResults`` for ranked results (not a written
answer) and ``depth: standard``. Results are ``{type, name, url, content}``; image results are skipped.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    FRESHNESS,
    Engine,
    OptionalText,
    Request,
    Search,
    SearchResult,
    Text,
    bearer_post,
    published_since,
)


class _Result(serializers.Serializer):
    type = OptionalText()
    name = OptionalText()
    url = Text()
    content = OptionalText()


class _Response(serializers.Serializer):
    results = _Result(many=True)


class LinkupEngine(Engine):
    id = "linkup"
    name = "Linkup"
    needs_key = True
    endpoint = "https://api.linkup.so/v1/search"
    key_url = "https://app.linkup.so"
    pricing = "Free monthly credits, then paid per search."
    supports = frozenset({FRESHNESS, ALLOWED_DOMAINS, BLOCKED_DOMAINS})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {
            "q": search.query,
            "depth": "standard",
            "outputType": "searchResults",
            "maxResults": search.count,
        }
        if search.freshness:
            body["fromDate"] = published_since(search.freshness).date().isoformat()
        if search.allowed_domains:
            body["includeDomains"] = list(search.allowed_domains)
        if search.blocked_domains:
            body["excludeDomains"] = list(search.blocked_domains)
        return bearer_post(search, body)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [
            SearchResult(r["name"] or "", r["url"], r["content"] or "")
            for r in data["results"]
            if (r["type"] or "text") == "text"
        ]
