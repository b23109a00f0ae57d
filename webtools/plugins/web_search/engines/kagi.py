"""Kagi Search API: https://help.kagi.com/kagi/api/search.html"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import Engine, OptionalText, Request, ResponseError, Search, SearchResult


class _Item(serializers.Serializer):
    # t: 0 is a search result; t: 1 a list of related searches, which has no url or title.
    t = serializers.IntegerField()
    url = OptionalText()
    title = OptionalText()
    snippet = OptionalText()
    published = OptionalText()


class _Response(serializers.Serializer):
    data = _Item(many=True)


class KagiEngine(Engine):
    id = "kagi"
    name = "Kagi"
    needs_key = True
    endpoint = "https://kagi.com/api/v0/search"
    key_url = "https://kagi.com/settings?p=api"
    pricing = "Paid per search from your Kagi account's API balance."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "inurl:word")
    max_count = 20

    def request(self, search: Search) -> Request:
        return Request(
            "GET",
            search.endpoint,
            headers={"Accept": "application/json", "Authorization": f"Bot {search.api_key}"},
            params={"q": search.query, "limit": search.count},
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        results = []
        for item in data["data"]:
            if item["t"] != 0:
                continue
            if not item["url"] or item["title"] is None:
                raise ResponseError(f"{self.name} sent a response in an unexpected format.")
            results.append(SearchResult(item["title"], item["url"], item["snippet"] or "", item["published"]))
        return results

    def error_detail(self, body: Any) -> str | None:
        errors = body.get("error") if isinstance(body, dict) else None
        if isinstance(errors, list):
            messages = [e["msg"] for e in errors if isinstance(e, dict) and isinstance(e.get("msg"), str)]
            return "; ".join(messages) or None
        return None
