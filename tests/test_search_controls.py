"""Search controls per call: ``user_location``, ``language`` and ``safesearch``, mapped to each engine's
own parameters where it has them, and ``published``/``page_age`` on results when the engine dates them.

Engines are checked two ways: the request each one builds (against its API's documentation), and a
contract over every listed engine, that it takes a control exactly when ``supports`` says so. Results
come from the recorded answers in tests/fixtures/search.
"""
from __future__ import annotations

import pytest

from tests.test_engines import BY_ID, recorded, search
from tests.test_web_search import call, error_of, options, plain, server  # noqa: F401  (fixtures)
from webtools.plugins.web_search import SECRET_QUERY
from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import COUNTRY, LANGUAGE, LOCATION, SAFE_SEARCH, Location
from webtools.plugins.web_search.search import clean_results

MUNICH = Location(region="Bavaria", city="Munich", timezone="Europe/Berlin")

# -- the contract: an engine takes a control exactly when it says it supports it ------------------------

#: Each control, as two searches that differ only in it.
CONTROLS = {
    LANGUAGE: ({}, {"language": "de"}),
    LOCATION: ({}, {"location": MUNICH}),
    COUNTRY: ({}, {"country": "DE"}),
    SAFE_SEARCH: ({"safe_search": "off"}, {"safe_search": "strict"}),
}


def built(engine, **values):
    request = engine.request(search(base_url="https://searx.example.org/", extra={"cx": "x"}, **values))
    return (request.method, request.url, dict(request.headers), request.params, request.data, request.json)


@pytest.mark.parametrize("parameter", sorted(CONTROLS))
@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.id)
def test_an_engine_takes_a_control_exactly_when_it_supports_it(engine, parameter):
    without, with_it = CONTROLS[parameter]
    changed = built(engine, **without) != built(engine, **with_it)
    assert changed == (parameter in engine.supports), (engine.id, parameter)


# -- each engine's own parameters ------------------------------------------------------------------------


def test_brave_takes_the_language_and_the_location_headers():
    request = BY_ID["brave"].request(search(language="de", country="DE", location=MUNICH))
    assert request.params["search_lang"] == "de" and request.params["country"] == "DE"
    assert {k: v for k, v in request.headers.items() if k.startswith("X-Loc-")} == {
        "X-Loc-City": "Munich", "X-Loc-State-Name": "Bavaria", "X-Loc-Timezone": "Europe/Berlin",
        "X-Loc-Country": "DE"}


def test_brave_leaves_out_a_location_a_header_cannot_carry():
    request = BY_ID["brave"].request(search(location=Location(city="München", timezone="Europe/Berlin")))
    assert "X-Loc-City" not in request.headers and request.headers["X-Loc-Timezone"] == "Europe/Berlin"


def test_google_takes_the_language_as_lr():
    assert BY_ID["google"].request(search(language="fr", extra={"cx": "x"})).params["lr"] == "lang_fr"


def test_searxng_takes_the_language():
    params = BY_ID["searxng"].request(search(language="it", base_url="https://searx.example.org")).params
    assert params["language"] == "it"


def test_firecrawl_takes_the_place_for_geo_targeting():
    body = BY_ID["firecrawl"].request(search(country="US", location=Location("California", "San Francisco"))).json
    assert body["location"] == "San Francisco,California" and body["country"] == "US"


def test_exa_takes_the_country_and_strict_safe_search():
    body = BY_ID["exa"].request(search(country="DE", safe_search="strict")).json
    assert body["userLocation"] == "DE" and body["moderation"] is True


# -- dates on results, from the recorded answers ----------------------------------------------------------


@pytest.mark.parametrize("engine_id", ["brave", "tavily", "searxng", "kagi", "exa"])
def test_recorded_dates_come_back_as_published(engine_id):
    results, _ = clean_results(BY_ID[engine_id].parse(recorded(engine_id)), count=10)
    assert results[0]["published"] == "2024-05-01T00:00:00Z"


def test_brave_gives_its_own_page_age_beside_the_date():
    results, _ = clean_results(BY_ID["brave"].parse(recorded("brave")), count=10)
    assert (results[0]["published"], results[0]["page_age"]) == ("2024-05-01T00:00:00Z", "May 1, 2024")
    assert "page_age" not in results[2]


@pytest.mark.parametrize("engine_id", ["google", "firecrawl", "duckduckgo"])
def test_engines_without_dates_give_none(engine_id):
    results, _ = clean_results(BY_ID[engine_id].parse(recorded(engine_id)), count=10)
    assert not any("published" in r or "page_age" in r for r in results)


# -- the tool's input ------------------------------------------------------------------------------------


def test_the_calls_location_and_language_reach_the_engine(server, plain):  # noqa: F811
    call(options(country="US"), {"query": "beer garden", "language": "de-DE", "user_location": {
        "type": "approximate", "country": "de", "region": "Bavaria", "city": "Munich",
        "timezone": "Europe/Berlin"}}, http=plain)
    sent = server.requests[-1]
    assert sent["query"]["country"] == ["DE"] and sent["query"]["search_lang"] == ["de"]
    assert sent["headers"]["X-Loc-City"] == "Munich" and sent["headers"]["X-Loc-State-Name"] == "Bavaria"


def test_without_a_location_the_operators_country_applies(server, plain):  # noqa: F811
    call(options(country="GB"), {"query": "tea"}, http=plain)
    assert server.requests[-1]["query"]["country"] == ["GB"]
    assert "X-Loc-City" not in server.requests[-1]["headers"]


@pytest.mark.parametrize("operator, asked, sent", [
    ("moderate", "strict", "strict"), ("moderate", "off", "moderate"), ("strict", "off", "strict"),
    ("off", "moderate", "moderate"), ("off", None, "off"),
])
def test_a_call_may_make_safe_search_stricter_never_looser(server, plain, operator, asked, sent):  # noqa: F811
    call(options(safe_search=operator), {"query": "x", **({"safesearch": asked} if asked else {})}, http=plain)
    assert server.requests[-1]["query"]["safesearch"] == [sent]


def test_controls_an_engine_does_not_take_are_said_in_the_output(server, plain):  # noqa: F811
    asked = {"query": "x", "language": "de", "safesearch": "strict",
             "user_location": {"country": "DE", "city": "Munich"}}
    output, _, _ = call(options(engine="kagi"), asked, http=plain)
    assert output["notes"] == ["Kagi does not take language, user_location, user_location.country, safesearch, "
                               "so the results are not adjusted to it."]
    supported, _, _ = call(options(), {"query": "x", "language": "de"}, http=plain)
    assert "notes" not in supported


@pytest.mark.parametrize("field, value, message", [
    ("language", "not a language", "language must be a language code such as en or de."),
    ("user_location", {"country": "Germany"}, "user_location.country must be a two-letter country code such as US."),
    ("user_location", {"city": "x" * 30 + "A1b2C3d4E5f6G7h8I9j0K1"}, SECRET_QUERY),
])
def test_bad_controls_are_refused_with_a_clear_message(server, plain, field, value, message):  # noqa: F811
    assert error_of(options(), {"query": "x", field: value}, http=plain) == message
    assert server.requests == []
