"""SearXNG against the engine contract (tests/engine_contract.py), request checked against
https://docs.searxng.org/dev/search_api.html. The recorded answer is a real one a public project
captured from its instance (SOURCES.md)."""

from __future__ import annotations

from webtools.plugins.web_search.engines.base import FRESHNESS, LANGUAGE, SAFE_SEARCH

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.search import clean_results

from .engine_contract import BASE_URL, QUERY, EngineContract, recorded_path


class TestSearxng(EngineContract):
    engine_id = "searxng"
    plain_request = {
        "method": "GET",
        "url": f"{BASE_URL}/search",
        "headers": {"Accept": "application/json"},
        "params": {"q": QUERY, "format": "json", "safesearch": 1},
    }
    # SearXNG has no count: the shared code cuts its one page.
    option_requests = {
        "count": {},
        FRESHNESS: {"params": {"time_range": "week"}},
        SAFE_SEARCH: {"params": {"safesearch": 0}},
        LANGUAGE: {"params": {"language": "de"}},
    }
    recorded_count = 10
    recorded_first = (
        "ground coffee - How does grind size affect the extraction time and taste of espresso? - Coffee Stack "
        "Exchange",
        "https://coffee.stackexchange.com/questions/6402/how-does-grind-size-affect-the-extraction-time-and-taste-"
        "of-espresso",
    )
    error_messages = {"forbidden": "must add json to search.formats in settings.yml"}


def test_a_real_answer_keeps_the_instances_order_and_reads_both_date_fields():
    engine = next(e for e in ENGINES if e.id == "searxng")
    results, _ = clean_results(engine.parse(recorded_path(engine).read_text(encoding="utf-8")), count=20)
    assert len(results) == 10
    # Mixed engine shapes (brave's and google's keys) parse alike; an empty content is no snippet.
    assert results[3]["url"] == "https://espressoaf.com/guides/beginner.html"
    assert results[6]["url"].startswith("https://www.reddit.com/r/espresso/comments/rgzj28/")
    assert not results[6].get("snippet")
    # publishedDate when the instance gives it; its pubdate when that is all there is.
    assert results[8]["published"] == "2026-02-17T00:00:00"
    assert results[2]["published"] == "2026-02-03 00:00:00"
    assert "published" not in results[0]
