"""What the engines that return Google's results share (Serper, SerpApi, SearchApi, serpstack, Serply,
and Firecrawl's and Google's own parameters): Google's parameter values and its organic result."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rest_framework import serializers

from .base import OptionalText, Search, SearchResult, Text

#: Google's ``tbs`` value for each freshness.
TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
#: Google's ``safe``: it knows only "active" and "off"; moderate filtering is closer to active than to none.
SAFE = {"off": "off", "moderate": "active", "strict": "active"}


class OrganicResult(serializers.Serializer):
    """One organic result as the SERP APIs give it."""

    title = Text()
    link = Text()
    snippet = OptionalText()
    date = OptionalText()


class OrganicResponse(serializers.Serializer):
    # Without results the SERP APIs leave ``organic_results`` out.
    organic_results = OrganicResult(many=True, required=False, default=list)


def organic(results: Iterable[Mapping[str, Any]]) -> list[SearchResult]:
    """Validated ``OrganicResult`` entries as search results."""
    return [SearchResult(r["title"], r["link"], r["snippet"] or "", r["date"]) for r in results]


def google_params(search: Search) -> dict[str, Any]:
    """A Google search's query parameters as SerpApi and SearchApi take them (``engine=google``): the
    query, count, safe search, country and language. Freshness is each API's own parameter."""
    params: dict[str, Any] = {"engine": "google", "q": search.query, "num": search.count,
                              "safe": SAFE[search.safe_search]}
    if search.country:
        params["gl"] = search.country.lower()
    if search.language:
        params["hl"] = search.language
    return params
