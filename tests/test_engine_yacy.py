"""YaCy against the engine contract (tests/engine_contract.py), request checked against
https://wiki.yacy.net/index.php/Dev:APIyacysearch. YaCy is self-hosted and needs no key."""

from __future__ import annotations

from .engine_contract import BASE_URL, QUERY, EngineContract


class TestYacy(EngineContract):
    engine_id = "yacy"
    plain_request = {
        "method": "GET",
        "url": f"{BASE_URL}/yacysearch.json",
        "headers": {"Accept": "application/json"},
        "params": {"query": QUERY, "maximumRecords": 5, "resource": "global"},
    }
    option_requests = {"count": {"params": {"maximumRecords": 3}}}
    recorded_count = 3
    recorded_first = ("Friend of a Friend (FOAF) project", "http://www.foaf-project.org/")
