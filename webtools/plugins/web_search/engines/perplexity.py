"""Perplexity Search API, ranked web results (not the chat API):
https://docs.perplexity.ai/api-reference/search-post

``POST /search`` with a Bearer key. ``search_domain_filter`` takes up to 20 entries: a domain to search
only, or ``-domain`` to leave out.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    COUNTRY,
    FRESHNESS,
    Engine,
    OptionalText,
    Request,
    Search,
    SearchResult,
    Text,
    bearer_post,
)

#: The most entries ``search_domain_filter`` takes; longer lists are applied after the answer only.
MAX_DOMAINS = 20


class _Result(serializers.Serializer):
    title = Text()
    url = Text()
    snippet = OptionalText()
    date = OptionalText()


class _Response(serializers.Serializer):
    results = _Result(many=True)


class PerplexityEngine(Engine):
    id = "perplexity"
    name = "Perplexity"
    needs_key = True
    endpoint = "https://api.perplexity.ai/search"
    key_url = "https://www.perplexity.ai/account/api/keys"
    pricing = "Paid per search from your Perplexity API credit."
    supports = frozenset({FRESHNESS, COUNTRY, ALLOWED_DOMAINS, BLOCKED_DOMAINS})
    max_count = 20

    def request(self, search: Search) -> Request:
        body: dict[str, Any] = {"query": search.query, "max_results": search.count}
        if search.freshness:
            body["search_recency_filter"] = search.freshness
        if search.country:
            body["country"] = search.country
        domains = [*search.allowed_domains, *(f"-{d}" for d in search.blocked_domains)]
        if domains and len(domains) <= MAX_DOMAINS:
            body["search_domain_filter"] = domains
        return bearer_post(search, body)

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        return [SearchResult(r["title"], r["url"], r["snippet"] or "", r["date"]) for r in data["results"]]
