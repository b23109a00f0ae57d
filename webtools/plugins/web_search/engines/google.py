"""Google Programmable Search, the Custom Search JSON API:
https://developers.google.com/custom-search/v1/reference/rest/v1/cse/list

The documented request carries the key as ``?key=``; Google APIs accept it in the ``X-Goog-Api-Key``
header too, which keeps it out of URLs, and so out of access logs, proxies' logs and error messages.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from webtools.runtime import json_input

from .base import (
    COUNTRY,
    FRESHNESS,
    KEY_REJECTED,
    LANGUAGE,
    SAFE_SEARCH,
    Engine,
    ExtraField,
    OptionalText,
    Request,
    Search,
    SearchResult,
    Text,
)
from .serp import SAFE

_DATE_RESTRICT = {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}


class _Item(serializers.Serializer):
    title = Text()
    link = Text()
    snippet = OptionalText()


class _Response(serializers.Serializer):
    # ``items`` is absent when nothing was found.
    items = _Item(many=True, required=False, default=list)


class GoogleEngine(Engine):
    id = "google"
    name = "Google Programmable Search"
    needs_key = True
    endpoint = "https://www.googleapis.com/customsearch/v1"
    key_url = "https://console.cloud.google.com/apis/credentials"
    pricing = (
        "A daily number of free searches, then billed per search; also needs a "
        "Programmable Search Engine ID (cx)."
    )
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "OR")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE})
    max_count = 10
    extra_fields = {
        "cx": ExtraField(
            "Search engine ID (cx)",
            "The ID of your Programmable Search Engine, from programmablesearchengine.google.com.",
        )
    }

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {
            "cx": search.extra.get("cx", ""),
            "q": search.query,
            "num": min(search.count, self.max_count),
            "safe": SAFE[search.safe_search],
        }
        if search.freshness:
            params["dateRestrict"] = _DATE_RESTRICT[search.freshness]
        if search.country:
            params["gl"] = search.country.lower()
        if search.language:
            params["lr"] = f"lang_{search.language}"
        return Request(
            "GET",
            search.endpoint,
            headers={"Accept": "application/json", "X-Goog-Api-Key": search.api_key},
            params=params,
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [SearchResult(item["title"], item["link"], item["snippet"] or "") for item in data["items"]]

    def error_kind(self, status: int, body: str) -> str | None:
        # Google answers a wrong key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID (keyInvalid before).
        if status == 400:
            try:
                error = json_input.loads(body)["error"]
            except (ValueError, KeyError, TypeError):
                return None
            entries = (
                [*(error.get("errors") or []), *(error.get("details") or [])]
                if isinstance(error, dict)
                else []
            )
            reasons = {entry.get("reason") for entry in entries if isinstance(entry, dict)}
            if reasons & {"keyInvalid", "API_KEY_INVALID"}:
                return KEY_REJECTED
        return None

    def error_detail(self, body: Any) -> str | None:
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        return None
