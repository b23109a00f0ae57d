"""Brave Search API: https://api-dashboard.search.brave.com/app/documentation/web-search/get-started"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    COUNTRY,
    FRESHNESS,
    KEY_REJECTED,
    LANGUAGE,
    LOCATION,
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
    key_url = "https://api-dashboard.search.brave.com/app/keys"
    pricing = "Brave's free plan asks that results credit Brave Search; paid plans bill per search."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE, LOCATION})
    max_count = 20

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {"q": search.query, "count": search.count, "safesearch": search.safe_search}
        if search.freshness:
            params["freshness"] = _FRESHNESS[search.freshness]
        if search.country:
            params["country"] = search.country
        if search.language:
            params["search_lang"] = search.language
        headers = {"Accept": "application/json", "X-Subscription-Token": search.api_key}
        # The client's location goes in headers (request-headers docs); a header holds ASCII only.
        for name, value in (("X-Loc-City", search.location.city), ("X-Loc-State-Name", search.location.region),
                            ("X-Loc-Timezone", search.location.timezone),
                            ("X-Loc-Country", search.country if search.location else "")):
            if value and value.isascii():
                headers[name] = value
        return Request("GET", search.endpoint, headers=headers, params=params)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        web = data.get("web") or {"results": []}
        return [
            SearchResult(r["title"], r["url"], r["description"] or "", r["page_age"] or r["age"],
                         r["age"] if r["page_age"] else None)
            for r in web["results"]
        ]

    def error_kind(self, status: int, body: str) -> str | None:
        # A wrong token is a 422 with code SUBSCRIPTION_TOKEN_INVALID, not a 401.
        if status == 422 and "SUBSCRIPTION_TOKEN_INVALID" in body:
            return KEY_REJECTED
        return None

    def error_detail(self, body: Any) -> str | None:
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("detail"), str):
            return error["detail"]
        return None
