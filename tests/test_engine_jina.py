"""Jina Search against the engine contract (tests/engine_contract.py), request checked against
https://jina.ai/reader/#apiform. The recorded answer is the example in Jina's own meta-prompt, the
page content cut short by Jina there (SOURCES.md)."""

from __future__ import annotations

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract


class TestJina(EngineContract):
    engine_id = "jina"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json", "Authorization": f"Bearer {KEY}", "X-Respond-With": "no-content"},
        "params": {"q": QUERY},
    }
    key_header = ("Authorization", f"Bearer {KEY}")
    # s.jina.ai has no count parameter: the shared code cuts the answer.
    option_requests = {"count": {}}
    recorded_count = 2
    recorded_first = ("Jina AI - Your Search Foundation, Supercharged.", "https://jina.ai/")
