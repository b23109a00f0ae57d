"""Mojeek Search API, an independent index: https://www.mojeek.com/support/api/search/request_parameters.html

Mojeek takes the key only as the ``api_key`` query parameter, so it is in the request URL by design;
the shared code masks it in every message and log line. ``fmt=json`` asks for JSON; ``t`` is the count,
``safe=1`` filters adult content, ``rb`` and ``lb`` boost results from a region (a country
code) and in a language, ``since`` takes
``day``, ``month``, ``year`` or a ``YYYYMMDD`` date. Errors come back as an ordinary answer whose
``status`` is not ``OK`` ("ERROR: Daily Limit Reached").
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    COUNTRY,
    FRESHNESS,
    KEY_REJECTED,
    LANGUAGE,
    QUOTA,
    SAFE_SEARCH,
    Engine,
    OptionalText,
    Request,
    ResponseError,
    Search,
    SearchResult,
    Text,
    published_since,
)


class _Result(serializers.Serializer):
    title = Text()
    url = Text()
    desc = OptionalText()


class _Inner(serializers.Serializer):
    status = Text()
    results = _Result(many=True, required=False, default=list)


class _Response(serializers.Serializer):
    response = _Inner()


class MojeekEngine(Engine):
    id = "mojeek"
    name = "Mojeek"
    needs_key = True
    endpoint = "https://api.mojeek.com/search"
    key_url = "https://www.mojeek.com/services/search/web-search-api/"
    pricing = "Paid plans by number of searches."
    key_param = "api_key"
    operators = ("site:example.com", '"exact phrase"', "-term")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE})
    max_count = 20

    def request(self, search: Search) -> Request:
        params: dict[str, Any] = {
            "q": search.query,
            "fmt": "json",
            "t": search.count,
            "safe": 0 if search.safe_search == "off" else 1,
        }
        if search.freshness:
            # Mojeek has no "week"; a date a week back means the same.
            params["since"] = (
                published_since(search.freshness).strftime("%Y%m%d")
                if search.freshness == "week"
                else search.freshness
            )
        if search.country:
            params["rb"] = search.country
        if search.language:
            params["lb"] = search.language
        params[self.key_param] = search.api_key
        return Request("GET", search.endpoint, headers={"Accept": "application/json"}, params=params)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))["response"]
        # Mojeek reports errors in ``status`` ("ERROR: ...") of an otherwise ordinary answer.
        status = data["status"].strip()
        if status.upper() != "OK":
            lowered = status.lower()
            if "key" in lowered:
                raise ResponseError(self.key_rejected_message(), KEY_REJECTED)
            if "limit" in lowered or "quota" in lowered:
                raise ResponseError(self.quota_message(), QUOTA)  # "not now": the next engine is tried
            raise ResponseError(f"{self.name} search failed.")
        return [SearchResult(r["title"], r["url"], r["desc"] or "") for r in data["results"]]
