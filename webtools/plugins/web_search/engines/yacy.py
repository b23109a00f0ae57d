"""YaCy, a self-hosted peer-to-peer search engine: https://yacy.net/api/

``GET <base URL>/yacysearch.json``; results are in ``channels[0].items`` (the RSS/OpenSearch channel as
JSON). ``resource=global`` asks the peers too (``local`` would search only this instance's index).
YaCy needs no key; an instance behind HTTP authentication answers 401.
"""

from __future__ import annotations

from rest_framework import serializers

from .base import Engine, OptionalText, Request, Search, SearchResult, Text


class _Item(serializers.Serializer):
    title = OptionalText()
    link = Text()
    description = OptionalText()
    pubDate = OptionalText()  # noqa: N815 (the API's spelling)


class _Channel(serializers.Serializer):
    items = _Item(many=True, required=False, default=list)


class _Response(serializers.Serializer):
    channels = _Channel(many=True)


class YacyEngine(Engine):
    id = "yacy"
    name = "YaCy"
    needs_base_url = True
    pricing = "Free: your own YaCy peer."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")
    max_count = 20

    def request(self, search: Search) -> Request:
        return Request(
            "GET",
            search.base_url.rstrip("/") + "/yacysearch.json",
            headers={"Accept": "application/json"},
            params={"query": search.query, "maximumRecords": search.count, "resource": "global"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        data = self.validate(_Response, self.load_json(body))
        items = data["channels"][0]["items"] if data["channels"] else []
        return [SearchResult(i["title"] or "", i["link"], i["description"] or "", i["pubDate"]) for i in items]
