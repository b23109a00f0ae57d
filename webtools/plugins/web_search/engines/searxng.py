"""SearXNG, self-hosted: https://docs.searxng.org/dev/search_api.html

The instance must list ``json`` under ``search.formats`` in its settings.yml; otherwise it answers 403.
A result's date is ``publishedDate``; recent instances also give ``pubdate`` (``"2026-02-03 00:00:00"``),
which some results carry alone, so it is read when ``publishedDate`` is null. The results come in the
instance's own order (by score, grouped by category), which is kept.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import FRESHNESS, LANGUAGE, SAFE_SEARCH, Engine, OptionalText, Request, Search, SearchResult, Text

_SAFE_SEARCH = {"off": 0, "moderate": 1, "strict": 2}


class _Result(serializers.Serializer):
    title = Text()
    url = Text()
    content = OptionalText()
    publishedDate = OptionalText()  # noqa: N815 (the API's spelling)
    pubdate = OptionalText()


class _Response(serializers.Serializer):
    results = _Result(many=True)


class SearxngEngine(Engine):
    id = "searxng"
    name = "SearXNG"
    needs_base_url = True
    pricing = "Free: your own SearXNG instance, with the json format enabled in its settings.yml."
    operators = ("site:example.com", '"exact phrase"')
    supports = frozenset({FRESHNESS, SAFE_SEARCH, LANGUAGE})
    # SearXNG has no count parameter: it answers one page (about 20 results), cut by the shared code.
    max_count = 20

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {
            "q": search.query,
            "format": "json",
            "safesearch": _SAFE_SEARCH[search.safe_search],
        }
        if search.freshness:
            params["time_range"] = search.freshness
        if search.language:
            params["language"] = search.language
        return Request(
            "GET",
            search.base_url.rstrip("/") + "/search",
            headers={"Accept": "application/json"},
            params=params,
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [
            SearchResult(r["title"], r["url"], r["content"] or "", r["publishedDate"] or r["pubdate"] or None)
            for r in data["results"]
        ]

    def describe_error(self, status: int, body: str) -> str | None:
        if status == 403:
            return (
                f"The {self.name} instance refused the JSON format (HTTP 403): its operator must add "
                "json to search.formats in settings.yml."
            )
        return None
