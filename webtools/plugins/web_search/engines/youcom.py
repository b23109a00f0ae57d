"""You.com Search API: https://docs.you.com/api-reference/search/v1-search

``GET https://ydc-index.io/v1/search`` with the key in ``X-API-Key``. Web results are under
``results.web`` (news, when You.com detects news intent, under ``results.news``, read after them);
the older ``api.ydc-index.io/search`` answered ``hits``, which proxies may still send, so both are read.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    COUNTRY,
    FRESHNESS,
    LANGUAGE,
    SAFE_SEARCH,
    Engine,
    OptionalText,
    Request,
    ResponseError,
    Search,
    SearchResult,
    Text,
    first_text,
)


class _Result(serializers.Serializer):
    title = OptionalText()
    url = Text()
    description = OptionalText()
    snippets = serializers.ListField(child=Text(), required=False, allow_null=True, default=None)
    page_age = OptionalText()


class _Results(serializers.Serializer):
    web = _Result(many=True, required=False, default=list)
    news = _Result(many=True, required=False, default=list)


class _Response(serializers.Serializer):
    results = _Results()


class _HitsResponse(serializers.Serializer):
    hits = _Result(many=True)


class YouComEngine(Engine):
    id = "youcom"
    name = "You.com"
    needs_key = True
    endpoint = "https://ydc-index.io/v1/search"
    key_url = "https://you.com/platform/api-keys"
    pricing = "Free starting credits, then paid per search."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE})
    max_count = 20

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {"query": search.query, "count": search.count, "safesearch": search.safe_search}
        if search.freshness:
            params["freshness"] = search.freshness
        if search.country:
            params["country"] = search.country
        if search.language:
            params["language"] = search.language
        return Request(
            "GET", search.endpoint, headers={"Accept": "application/json", "X-API-Key": search.api_key}, params=params
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.load_json(body)
        if isinstance(data, dict) and "hits" in data:
            items = self.validate(_HitsResponse, data)["hits"]
        elif isinstance(data, dict) and isinstance(data.get("results"), dict):
            results = self.validate(_Response, data)["results"]
            items = [*results["web"], *results["news"]]
        else:
            raise ResponseError(f"{self.name} sent a response in an unexpected format.")
        return [
            SearchResult(
                r["title"] or "",
                r["url"],
                first_text(r["description"], *(r["snippets"] or ())),
                r["page_age"],
            )
            for r in items
        ]
