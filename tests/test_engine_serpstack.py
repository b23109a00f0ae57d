"""serpstack against the engine contract (tests/engine_contract.py), request checked against
https://serpstack.com/documentation. serpstack answers errors with HTTP 200 and ``success: false``;
the bodies below are apilayer's documented ones. No real results answer could be found (SOURCES.md)."""

from __future__ import annotations

import json

import pytest

from webtools.plugins.web_search.engines.base import COUNTRY, LANGUAGE, SAFE_SEARCH

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract

INVALID_KEY = {
    "success": False,
    "error": {
        "code": 101,
        "type": "invalid_access_key",
        "info": "You have not supplied a valid API Access Key. [Technical Support: support@apilayer.com]",
    },
}
#: From serpstack's documentation, "Example Error".
USAGE_LIMIT = {
    "success": False,
    "error": {
        "code": 104,
        "type": "usage_limit_reached",
        "info": "Your monthly API request volume has been reached. Please upgrade your plan.",
    },
}


class TestSerpstack(EngineContract):
    engine_id = "serpstack"
    plain_request = {
        "method": "GET",
        "url": ENDPOINT,
        "headers": {"Accept": "application/json"},
        "params": {"query": QUERY, "num": 5, "safe": 1, "access_key": KEY},
    }
    option_requests = {
        "count": {"params": {"num": 3}},
        SAFE_SEARCH: {"params": {"safe": 0}},
        COUNTRY: {"params": {"gl": "de"}},
        LANGUAGE: {"params": {"hl": "de"}},
    }
    recorded_count = None
    error_answers = {"unauthorized": (200, json.dumps(INVALID_KEY)), "quota": (200, json.dumps(USAGE_LIMIT))}


def test_used_up_requests_and_the_rate_limit_are_not_now_but_a_wrong_key_is_final():
    from webtools.plugins.web_search.engines import ENGINES
    from webtools.plugins.web_search.engines.base import KEY_REJECTED, NOT_NOW, QUOTA, ResponseError

    engine = next(e for e in ENGINES if e.id == "serpstack")
    with pytest.raises(ResponseError) as info:
        engine.parse(json.dumps(USAGE_LIMIT))
    assert info.value.kind == QUOTA and info.value.kind in NOT_NOW
    with pytest.raises(ResponseError) as info:
        engine.parse(json.dumps(INVALID_KEY))
    assert info.value.kind == KEY_REJECTED and info.value.kind not in NOT_NOW
