"""SearchApi, Google results as JSON: https://www.searchapi.io/docs/google

The key goes in an ``Authorization: Bearer`` header (the API also takes ``api_key=``, which would put it
in the URL). A wrong key is a 401; an account out of searches is a 429 whose ``error`` says so.
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
from .serp import OrganicResponse, google_params, organic

_TIME_PERIOD = {"day": "last_day", "week": "last_week", "month": "last_month", "year": "last_year"}


class SearchApiEngine(Engine):
    id = "searchapi"
    name = "SearchApi"
    needs_key = True
    endpoint = "https://www.searchapi.io/api/v1/search"
    key_url = "https://www.searchapi.io/api_tokens"
    pricing = "Free trial searches, then monthly plans by number of searches."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf", "intitle:word", "OR")
    supports = frozenset({FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE})
    max_count = 20

    def request(self, search: Search) -> Request:
        params = google_params(search)
        if search.freshness:
            params["time_period"] = _TIME_PERIOD[search.freshness]
        return Request(
            "GET",
            search.endpoint,
            headers={"Accept": "application/json", "Authorization": f"Bearer {search.api_key}"},
            params=params,
        )

    def parse(self, body: str) -> list[SearchResult]:
        return organic(self.validate(OrganicResponse, self.load_json(body))["organic_results"])

    def error_kind(self, status: int, body: str) -> str | None:
        error = json_text(body, "error").lower()
        if status == 429 and ("quota" in error or "credits" in error):
            return QUOTA
        return None
