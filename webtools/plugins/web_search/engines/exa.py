"""Exa: https://docs.exa.ai/reference/search"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    COUNTRY,
    FRESHNESS,
    SAFE_SEARCH,
    Engine,
    OptionalText,
    Request,
    Search,
    SearchResult,
    Text,
    first_text,
    published_since,
)

#: Exa returns page text only when asked; a snippet needs no more than this.
TEXT_CHARACTERS = 1000


class _Result(serializers.Serializer):
    title = OptionalText()
    url = Text()
    text = OptionalText()
    summary = OptionalText()
    publishedDate = OptionalText()  # noqa: N815 (the API's spelling)


class _Response(serializers.Serializer):
    results = _Result(many=True)


class ExaEngine(Engine):
    id = "exa"
    name = "Exa"
    needs_key = True
    endpoint = "https://api.exa.ai/search"
    key_url = "https://dashboard.exa.ai/api-keys"
    pricing = "Free starting credits, then paid per search."
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, ALLOWED_DOMAINS, BLOCKED_DOMAINS})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {
            "query": search.query,
            "numResults": search.count,
            "contents": {"text": {"maxCharacters": TEXT_CHARACTERS}},
        }
        if search.freshness:
            body["startPublishedDate"] = published_since(search.freshness).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        if search.allowed_domains:
            body["includeDomains"] = list(search.allowed_domains)
        if search.blocked_domains:
            body["excludeDomains"] = list(search.blocked_domains)
        if search.country:
            body["userLocation"] = search.country
        if search.safe_search == "strict":
            body["moderation"] = True
        return Request(
            "POST",
            search.endpoint,
            headers={"x-api-key": search.api_key, "Content-Type": "application/json"},
            json=body,
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [
            SearchResult(r["title"] or "", r["url"], first_text(r["summary"], r["text"]), r["publishedDate"])
            for r in data["results"]
        ]

    def error_detail(self, body: Any) -> str | None:
        if isinstance(body, dict):
            for key in ("error", "message"):
                if isinstance(body.get(key), str):
                    return body[key]
        return None
