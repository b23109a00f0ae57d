"""serpstack, Google results as JSON: https://serpstack.com/documentation

serpstack (an apilayer API) takes the key only as the ``access_key`` query parameter, so it is in the
request URL by design; the shared code masks it in every message and log line. Its free plan is served
over plain HTTP only; the endpoint here is HTTPS, which needs a paid plan (or ``ENGINE_URLS``).

Errors come back as HTTP 200 with ``{"success": false, "error": {"code": ..., "type": ...}}``: 101 a
missing or wrong key, 104 the month's searches used up, 106 the rate limit.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    COUNTRY,
    FAILED,
    KEY_REJECTED,
    LANGUAGE,
    QUOTA,
    RATE_LIMIT,
    SAFE_SEARCH,
    Engine,
    OptionalText,
    Request,
    ResponseError,
    Search,
    SearchResult,
    Text,
)


class _Result(serializers.Serializer):
    title = Text()
    url = Text()
    snippet = OptionalText()


class _Response(serializers.Serializer):
    organic_results = _Result(many=True, required=False, default=list)


#: serpstack's error codes that say more than "failed".
_KINDS = {101: KEY_REJECTED, 102: KEY_REJECTED, 104: QUOTA, 106: RATE_LIMIT}


class SerpstackEngine(Engine):
    id = "serpstack"
    name = "serpstack"
    needs_key = True
    endpoint = "https://api.serpstack.com/search"
    key_url = "https://serpstack.com/dashboard"
    pricing = "Monthly plans by number of searches; the free plan has no HTTPS, which this engine needs."
    key_param = "access_key"
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "OR")
    supports = frozenset({SAFE_SEARCH, COUNTRY, LANGUAGE})
    max_count = 20

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {
            "query": search.query,
            "num": search.count,
            "safe": 0 if search.safe_search == "off" else 1,
        }
        if search.country:
            params["gl"] = search.country.lower()
        if search.language:
            params["hl"] = search.language
        params[self.key_param] = search.api_key
        return Request("GET", search.endpoint, headers={"Accept": "application/json"}, params=params)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.load_json(body)
        if isinstance(data, dict) and data.get("success") is False:
            error = data.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            # Used-up requests (104) and the rate limit (106) mean "not now": the next engine is tried.
            kind = _KINDS.get(code, FAILED) if isinstance(code, int) else FAILED
            raise ResponseError(self._error(code, kind), kind)
        data = self.validate(_Response, data)
        return [SearchResult(r["title"], r["url"], r["snippet"] or "") for r in data["organic_results"]]

    def _error(self, code: Any, kind: str) -> str:
        if kind != FAILED:
            return self.error_message(kind, 200)
        if code == 105:
            return f"The {self.name} plan does not allow this request (HTTPS needs a paid plan)."
        return f"{self.name} search failed (error {code})." if isinstance(code, int) else f"{self.name} search failed."
