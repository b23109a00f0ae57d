"""Kagi against the engine contract (tests/engine_contract.py), request checked against
https://help.kagi.com/kagi/api/search.html."""

from __future__ import annotations

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestKagi(EngineContract):
    engine_id = "kagi"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json", "Authorization": f"Bot {KEY}"},
        "params": {"q": QUERY, "limit": 5},
    }
    key_header = ("Authorization", f"Bot {KEY}")
    option_requests = {"count": {"params": {"limit": 3}}}
    recorded_count = 1
    recorded_first = ("Steve Jobs - Wikipedia", "https://en.wikipedia.org/wiki/Steve_Jobs")
