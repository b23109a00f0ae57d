"""serpstack against the engine contract (tests/engine_contract.py), request checked against
https://serpstack.com/documentation. serpstack answers errors with HTTP 200 and ``success: false``;
the bodies below are apilayer's documented ones. The recorded answer is a real one a public project
saved (SOURCES.md); like every serpstack answer it echoes the request, access key included."""

from __future__ import annotations

import json

import pytest

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import COUNTRY, LANGUAGE, SAFE_SEARCH

from webtools.exceptions import ToolError
from webtools.net import HttpClient
from webtools.plugins.web_search import search as shared
from webtools.testing import tool_context_for_test

from .engine_contract import ENDPOINT, KEY, QUERY, EngineContract, recorded_path, search
from .servers import LoopbackServer, Reply

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
    recorded_count = 5
    recorded_first = ("Psykologos: Psykologer i Göteborg | Legitimerad psykolog", "https://psykologos.se/")
    error_answers = {"unauthorized": (200, json.dumps(INVALID_KEY)), "quota": (200, json.dumps(USAGE_LIMIT))}


ENGINE = next(e for e in ENGINES if e.id == "serpstack")


def test_the_key_serpstack_echoes_in_its_answer_never_reaches_the_results():
    # A real answer repeats the request's parameters, access_key among them (the recording's own key
    # was replaced by REDACTED in the fixture; here the search's key is put back where serpstack puts it).
    answer = recorded_path(ENGINE).read_text(encoding="utf-8")
    assert json.loads(answer)["search_parameters"]["access_key"] == "REDACTED"
    echoed = answer.replace("REDACTED", KEY)
    server = LoopbackServer({"*": Reply(200, {"Content-Type": "application/json"}, echoed)}).start()
    try:
        with HttpClient(policy=None) as client:
            ctx, _ = tool_context_for_test(http=client, fetch=client)
            raw = shared.run(ENGINE, search(endpoint=server.url("/s")), client, ctx)
    finally:
        server.stop()
    assert not isinstance(raw, ToolError) and len(raw) == 5
    results, _ = shared.clean_results(raw, count=20)
    assert KEY not in json.dumps(results)
    assert results[3]["title"] == "Våra psykologer erbjuder samtalsterapi & KBT - Din Klinik"
    assert not results[0].get("snippet")  # serpstack gave no snippets for this search


def test_used_up_requests_and_the_rate_limit_are_not_now_but_a_wrong_key_is_final():
    from webtools.plugins.web_search.engines.base import KEY_REJECTED, NOT_NOW, QUOTA, ResponseError

    engine = ENGINE
    with pytest.raises(ResponseError) as info:
        engine.parse(json.dumps(USAGE_LIMIT))
    assert info.value.kind == QUOTA and info.value.kind in NOT_NOW
    with pytest.raises(ResponseError) as info:
        engine.parse(json.dumps(INVALID_KEY))
    assert info.value.kind == KEY_REJECTED and info.value.kind not in NOT_NOW
