"""SerpApi, Google results as JSON: https://serpapi.com/search-api

SerpApi takes the key only as the ``api_key`` query parameter, so it is in the request URL by design.
The shared code masks it in every message and log line; nothing here puts the URL in a message.
SerpApi answers a wrong key with 401, and an account out of searches (or over its hourly limit) with 429
and an ``error`` saying which.
"""

from __future__ import annotations

from .base import (
    COUNTRY,
    FRESHNESS,
    LANGUAGE,
    QUOTA,
    SAFE_SEARCH,
    Engine,
    Request,
    Search,
    SearchResult,
    json_text,
)
from .serp import TBS, OrganicResponse, google_params, organic


class SerpApiEngine(Engine):
    id = "serpapi"
    name = "SerpApi"
    needs_key = True
    endpoint = "https://serpapi.com/search.json"
    key_url = "https://serpapi.com/manage-api-key"
    pricing = "A small free plan, then monthly plans by number of searches."
    key_param = "api_key"
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "OR")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE})
    max_count = 20

    def request(self, search: Search) -> Request:
        params = google_params(search)
        if search.freshness:
            params["tbs"] = TBS[search.freshness]
        params[self.key_param] = search.api_key
        return Request("GET", search.endpoint, headers={"Accept": "application/json"}, params=params)

    def parse(self, body: str) -> list[SearchResult]:
        return organic(self.validate(OrganicResponse, self.load_json(body))["organic_results"])

    def error_kind(self, status: int, body: str) -> str | None:
        if status == 429 and "run out of searches" in json_text(body, "error"):
            return QUOTA
        return None
