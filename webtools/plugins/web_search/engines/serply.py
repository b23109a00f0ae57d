"""Serply, Google results as JSON: https://serply.io/docs

The query goes in the path, URL-encoded like a query string (``/v1/search/q=django+orm&num=10``). The
key travels in ``X-Api-Key``; ``X-Proxy-Location`` picks the country the search is made from.
"""

from __future__ import annotations

from urllib.parse import urlencode

from rest_framework import serializers

from .base import COUNTRY, Engine, OptionalText, Request, Search, SearchResult, Text


class _Result(serializers.Serializer):
    title = Text()
    link = Text()
    description = OptionalText()


class _Response(serializers.Serializer):
    results = _Result(many=True, required=False, default=list)


class SerplyEngine(Engine):
    id = "serply"
    name = "Serply"
    needs_key = True
    endpoint = "https://api.serply.io/v1/search"
    key_url = "https://app.serply.io"
    pricing = "Monthly plans by number of searches."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "OR")
    supports = frozenset({COUNTRY})
    max_count = 20

    def request(self, search: Search) -> Request:
        headers = {"Accept": "application/json", "X-Api-Key": search.api_key}
        if search.country:
            headers["X-Proxy-Location"] = search.country
        path = urlencode({"q": search.query, "num": search.count})
        return Request("GET", f"{search.endpoint.rstrip('/')}/{path}", headers=headers)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [SearchResult(r["title"], r["link"], r["description"] or "") for r in data["results"]]
