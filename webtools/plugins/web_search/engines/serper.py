"""Serper, Google results as JSON: https://serper.dev/playground

``POST /search`` with the key in the ``X-API-KEY`` header. Serper answers a wrong key with 403 and an
account without credits with 400 ``Not enough credits``.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import COUNTRY, FRESHNESS, LANGUAGE, QUOTA, Engine, Request, Search, SearchResult
from .serp import TBS, OrganicResult, organic


class _Response(serializers.Serializer):
    # ``organic`` is absent when Google found nothing.
    organic = OrganicResult(many=True, required=False, default=list)


class SerperEngine(Engine):
    id = "serper"
    name = "Serper"
    needs_key = True
    endpoint = "https://google.serper.dev/search"
    key_url = "https://serper.dev/api-key"
    pricing = "Free starting credits, then prepaid query credits."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "OR")
    supports = frozenset({FRESHNESS, COUNTRY, LANGUAGE})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {"q": search.query, "num": search.count}
        if search.freshness:
            body["tbs"] = TBS[search.freshness]
        if search.country:
            body["gl"] = search.country.lower()
        if search.language:
            body["hl"] = search.language
        return Request(
            "POST",
            search.endpoint,
            headers={"X-API-KEY": search.api_key, "Content-Type": "application/json"},
            json=body,
        )

    def parse(self, body: str) -> list[SearchResult]:
        return organic(self.validate(_Response, self.load_json(body))["organic"])

    def error_kind(self, status: int, body: str) -> str | None:
        # Only the documented phrase is read: the rest of the answer's shape is not documented.
        if status == 400 and "not enough credits" in body.lower():
            return QUOTA
        return None
