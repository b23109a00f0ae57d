"""Jina Search (``s.jina.ai``), answers as JSON: https://jina.ai/reader/#apiform

``GET https://s.jina.ai/?q=...`` with ``Accept: application/json`` and a Bearer key.
``X-Respond-With: no-content`` asks for titles, URLs and descriptions only, without reading each page
(faster, and billed far fewer tokens). Filters go in the query as operators (``site:``). An account out
of tokens is a 402.
"""

from __future__ import annotations

from rest_framework import serializers

from .base import Engine, OptionalText, Request, Search, SearchResult, Text, first_text


class _Result(serializers.Serializer):
    title = OptionalText()
    url = Text()
    description = OptionalText()
    content = OptionalText()
    date = OptionalText()


class _Response(serializers.Serializer):
    data = _Result(many=True, allow_null=True)


class JinaEngine(Engine):
    id = "jina"
    name = "Jina"
    needs_key = True
    endpoint = "https://s.jina.ai/"
    key_url = "https://jina.ai/api-dashboard/key-manager"
    pricing = "Free tokens with a new key, then paid token credits."
    operators = ("site:example.com", '"exact phrase"', "-term")
    max_count = 10

    def request(self, search: Search) -> Request:
        headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {search.api_key}",
            "X-Respond-With": "no-content",
        }
        return Request("GET", search.endpoint, headers=headers, params={"q": search.query})

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [
            SearchResult(r["title"] or "", r["url"], first_text(r["description"], r["content"]), r["date"])
            for r in data["data"] or []
        ]
