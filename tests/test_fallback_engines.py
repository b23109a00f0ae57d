"""Fallback engines with a key, base URL and fields of their own: each engine of the chain gets what is
kept for it (``api_key@tavily``, ``base_url@searxng``, ``cx@google``) and never another engine's.

Every engine is its own loopback server recording each request it receives, answering with the recorded
shapes of tests/fixtures/search (SOURCES.md); the operator saves options through the admin, as they would.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core import checks
from django.urls import reverse

from webtools.host import read_options, start_turn, validate_settings
from webtools.models import PluginOptions
from webtools.net import HttpClient
from webtools.plugins.web_search import WebSearchPlugin
from webtools.runtime.limits import MemoryStore
from webtools.testing import tool_context_for_test

from .servers import LoopbackServer, Recorded, Reply

FIXTURES = Path(__file__).parent / "fixtures" / "search"
KEYS = {
    "brave": "brave-operator-key-0123456789",
    "tavily": "tavily-operator-key-0123456789",
    "serper": "serper-operator-key-0123456789",
    "google": "google-operator-key-0123456789",
}
CX = "cx-operator-0123"
JSON = {"Content-Type": "application/json"}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


#: What each engine answers in the chain test: a failure of each kind that falls back, then results.
ANSWERS = {
    "brave": Reply(429, JSON, fixture("brave_429.json")),
    "tavily": Reply(432, JSON, fixture("tavily_432.json")),
    # Serper documents only the phrase of its used-up answer (engines/serper.py): it alone is served.
    "serper": Reply(400, {"Content-Type": "text/plain"}, b"Not enough credits"),
    "searxng": Reply(503, {"Content-Type": "text/html"}, b""),
    "google": Reply(200, JSON, fixture("google_recorded.json")),
}


def sent(request: Recorded) -> str:
    """Everything one request carried: path, query, headers and body."""
    return " ".join([request.path, request.query, str(request.headers), request.body.decode("utf-8", "replace")])


@pytest.fixture
def stubs(settings):
    """One loopback server per engine; ``ENGINE_URLS`` points the public engines at theirs, SearXNG's is
    its base URL."""
    servers = {engine_id: LoopbackServer({"*": reply}).start() for engine_id, reply in ANSWERS.items()}
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {
        engine_id: server.url("/search") for engine_id, server in servers.items() if engine_id != "searxng"}}
    yield servers
    for server in servers.values():
        server.stop()


def operator_options(plugin: WebSearchPlugin, values: dict, secrets: dict) -> dict:
    """Saved options as a turn gets them (``host.read_options``, the seam without the database)."""
    loaded = read_options(plugin, {"engine": "brave", **values}, secrets)
    assert loaded.configured, loaded.errors
    return loaded.effective


def search(plugin: WebSearchPlugin, opts: dict) -> dict:
    from webtools.runtime import PluginSetup, Registry
    from webtools.runtime.ingesters import Ingesters

    registry = Registry()
    plugin.setup(PluginSetup("web_search", opts, registry, Ingesters()))
    with HttpClient(policy=None) as client:
        ctx, _ = tool_context_for_test(fetch=client, http=client)
        ctx.limits = MemoryStore()
        return registry.get("web_search").handler({"query": "django"}, ctx)


# -- the chain -----------------------------------------------------------------------------------------


def test_each_engine_of_the_chain_gets_its_own_key_base_url_and_fields_and_no_other(stubs, caplog):
    caplog.set_level(logging.DEBUG)
    plugin = WebSearchPlugin()
    opts = operator_options(
        plugin,
        {"fallback_engines": ["tavily", "serper", "searxng", "google"], "base_url@searxng": stubs["searxng"].origin,
         "cx@google": CX},
        {f"api_key@{engine_id}": key for engine_id, key in KEYS.items()},
    )
    output = search(plugin, opts)

    assert output["engine"] == "google" and output["results"]
    said = ["Brave's rate limit was reached.", "Tavily's plan usage limit was reached.",
            "The Serper account has used up its search quota", "SearXNG search failed (HTTP 503)."]
    assert len(output["notes"]) == 4
    assert all(note.startswith(first) for note, first in zip(output["notes"], said)), output["notes"]
    for engine_id, server in stubs.items():
        assert len(server.requests) == 1, engine_id
        carried = sent(server.requests[0])
        own = KEYS.get(engine_id)
        if own:
            assert own in carried, f"{engine_id} did not get its own key"
        others = [key for other, key in KEYS.items() if other != engine_id]
        assert not [key for key in others if key in carried], f"{engine_id} got another engine's key"
    assert "cx=" + CX in stubs["google"].requests[0].query
    assert stubs["searxng"].requests[0].path == "/search"
    assert not any(key in json.dumps(output) for key in KEYS.values())
    assert caplog.records and not [r for r in caplog.records for key in KEYS.values() if key in r.getMessage()]


def test_the_main_engines_key_is_never_lent_to_a_fallback_engine_without_one(stubs):
    plugin = WebSearchPlugin()
    # Tavily was listed while it had a key; the key is gone: it is skipped, not given Brave's.
    opts = operator_options(plugin, {"fallback_engines": ["tavily", "google"], "cx@google": CX},
                            {"api_key@brave": KEYS["brave"], "api_key@google": KEYS["google"]})
    output = search(plugin, opts)
    assert output["engine"] == "google"
    assert not stubs["tavily"].requests
    assert KEYS["brave"] not in sent(stubs["google"].requests[0])
    assert plugin.check(opts) == [
        "The fallback engine Tavily has no API key of its own any more, so searches skip it. Enter one for "
        "Tavily under Keys per engine in the web search options, or remove it from the fallback engines."
    ]


# -- the form ------------------------------------------------------------------------------------------


def saved(values: dict, secrets: dict, stored_values: dict | None = None):
    """The options form run as the admin runs it: over what the row holds (``stored_values``, secrets)."""
    plugin = WebSearchPlugin()
    data = {**plugin.default_options(), "engine": "brave", **values}
    return validate_settings(plugin.options_form, data, secrets, show_when=plugin.show_when,
                             stored_values=stored_values or {}, kept=plugin.kept_per_scope)


@pytest.mark.parametrize(
    "engine_id,kept,message",
    [
        ("tavily", {}, "Tavily needs its own API key to be a fallback engine"),
        ("searxng", {}, "SearXNG needs its own base URL to be a fallback engine"),
        ("google", {"api_key@google": KEYS["google"]},
         "Google Programmable Search needs its own Search engine ID (cx) to be a fallback engine"),
    ],
)
def test_a_fallback_engine_without_what_it_needs_is_refused_on_the_field(engine_id, kept, message):
    checked = saved({"fallback_engines": engine_id}, {"api_key@brave": KEYS["brave"], **kept})
    assert not checked.is_valid()
    assert checked.errors["fallback_engines"][0].startswith(message)
    assert "under “Keys per engine”" in checked.errors["fallback_engines"][0]


def test_the_main_engines_key_typed_now_does_not_count_for_a_fallback_engine():
    checked = saved({"api_key": KEYS["brave"], "fallback_engines": "tavily"}, {})
    assert not checked.is_valid() and "Tavily needs its own API key" in checked.errors["fallback_engines"][0]


def test_a_fallback_engine_with_what_it_needs_kept_is_accepted_and_the_main_engine_may_stay_listed():
    secrets = {"api_key@brave": KEYS["brave"], "api_key@tavily": KEYS["tavily"]}
    checked = saved({"fallback_engines": "brave\ntavily\nsearxng\nbrave\nduckduckgo"}, secrets,
                    {"engine": "searxng", "base_url": "https://searx.example.org"})
    assert checked.is_valid(), checked.errors
    assert checked.values["fallback_engines"] == ["brave", "tavily", "searxng", "duckduckgo"]
    # SearXNG's base URL, saved while it was the engine, is kept for it; nothing is in force for Brave.
    assert checked.kept_values == {"base_url@searxng": "https://searx.example.org"}
    assert "base_url" not in checked.values
    assert checked.stored_secrets == secrets


def test_an_unknown_engine_id_is_refused():
    checked = saved({"fallback_engines": "nosuch"}, {"api_key@brave": KEYS["brave"]})
    assert "“nosuch” is not an engine id" in checked.errors["fallback_engines"][0]


def test_every_bad_fallback_entry_is_reported_at_once():
    checked = saved({"fallback_engines": "nosuch\nbrave\nbrvae\ntavily"}, {"api_key@brave": KEYS["brave"]})
    errors = checked.errors["fallback_engines"]
    assert errors[0].startswith("“nosuch”, “brvae” are not engine ids; choose from ")
    assert errors[1].startswith("Tavily needs its own API key to be a fallback engine")
    assert len(errors) == 2


def test_switching_engine_keeps_each_engines_base_url_and_a_blank_brings_it_back():
    first = saved({"engine": "searxng", "base_url": "https://searx.example.org"}, {})
    assert first.is_valid() and first.stored_values["base_url@searxng"] == "https://searx.example.org"
    away = saved({"engine": "brave", "api_key": KEYS["brave"]}, first.stored_secrets, first.stored_values)
    assert away.is_valid() and "base_url" not in away.values
    assert away.kept_values == {"base_url@searxng": "https://searx.example.org"}
    back = saved({"engine": "searxng"}, away.stored_secrets, away.stored_values)
    assert back.is_valid() and back.values["base_url"] == "https://searx.example.org"
    yacy = saved({"engine": "yacy"}, back.stored_secrets, back.stored_values)
    assert not yacy.is_valid() and yacy.errors["base_url"] == ["Enter the base URL that YaCy needs."]


# -- the admin, the turn and the system check ---------------------------------------------------------------

FORM = {"admin_engine_roles": "user", "enabled_by_default": "on", "user_toggle": "on", "user_engines": "on",
        "max_results": "5", "safe_search": "moderate", "max_uses": "10", "user_daily_searches": "200",
        "user_searches_per_minute": "20", "engine_concurrency": "4", "cache_ttl_seconds": "0"}


def admin_page(client) -> str:
    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client.force_login(admin)
    client.get(reverse("admin:webtools_pluginoptions_changelist"))
    return reverse("admin:webtools_pluginoptions_change", args=[PluginOptions.objects.get(plugin="web_search").pk])


@pytest.mark.django_db
def test_the_admin_says_which_engines_keep_a_base_url_and_lists_them_as_fallbacks(client):
    url = admin_page(client)
    assert client.post(url, {**FORM, "engine": "searxng", "base_url": "https://searx.example.org"}).status_code == 302
    assert client.post(url, {**FORM, "engine": "brave", "api_key": KEYS["brave"],
                             "fallback_engines": "searxng"}).status_code == 302
    page = client.get(url).content.decode()
    assert "Kept for SearXNG; left blank, the chosen engine's is used." in page
    row = PluginOptions.objects.get(plugin="web_search")
    assert row.values["base_url@searxng"] == "https://searx.example.org" and "base_url" not in row.values
    assert row.values["fallback_engines"] == ["searxng"]


@pytest.mark.django_db
def test_operator_gives_a_fallback_engine_its_key_in_the_admin_and_the_check_warns_when_it_is_gone(
    stubs, client
):
    stubs["tavily"].route("*", Reply(200, JSON, fixture("tavily.json")))
    url, form = admin_page(client), FORM
    row = PluginOptions.objects.get(plugin="web_search")

    refused = client.post(url, {**form, "engine": "brave", "api_key": KEYS["brave"], "fallback_engines": "tavily"})
    assert refused.status_code == 200
    assert "Tavily needs its own API key to be a fallback engine" in refused.content.decode()
    # Choose Tavily, enter its key, save; then Brave again with Tavily listed.
    assert client.post(url, {**form, "engine": "tavily", "api_key": KEYS["tavily"],
                             "fallback_engines": "tavily"}).status_code == 302
    assert client.post(url, {**form, "engine": "brave", "api_key": KEYS["brave"],
                             "fallback_engines": "tavily"}).status_code == 302
    page = client.get(url).content.decode()
    assert "Kept for Brave, Tavily, hidden." in page
    assert not [key for key in KEYS.values() if key in page]
    row.refresh_from_db()
    assert row.values["fallback_engines"] == ["tavily"] and row.values["engine"] == "brave"
    assert not [key for key in KEYS.values() if key in row.encrypted_secrets + json.dumps(row.values)]

    user = get_user_model().objects.create_user("kim", password="pw-kim-123")
    with start_turn(user) as turn:
        result = turn.call("web_search", {"query": "django"})
    assert not result.is_error and result.output["engine"] == "tavily"
    assert KEYS["brave"] in sent(stubs["brave"].requests[0])
    assert KEYS["tavily"] in sent(stubs["tavily"].requests[0])
    assert KEYS["brave"] not in sent(stubs["tavily"].requests[0])
    assert KEYS["tavily"] not in sent(stubs["brave"].requests[0])

    # Tavily's key is lost (a restored backup, a hand edit): searches skip it and the check says so.
    row.set_secrets({"api_key@brave": KEYS["brave"]})
    row.save()
    warnings = [m for m in checks.run_checks(databases=["default"]) if m.id == "webtools.W015"]
    assert [m.msg for m in warnings] == [
        "The fallback engine Tavily has no API key of its own any more, so searches skip it. Enter one for "
        "Tavily under Keys per engine in the web search options, or remove it from the fallback engines."
    ]
    with start_turn(user) as turn:
        result = turn.call("web_search", {"query": "django"})
    assert result.is_error and "Tavily" not in result.output["error"]  # Brave cools down; Tavily is skipped
    assert len(stubs["tavily"].requests) == 1
    # Saving the options again is not blocked by the engine that was listed before.
    assert client.post(url, {**form, "engine": "brave", "fallback_engines": "tavily"}).status_code == 302


@pytest.mark.django_db
def test_keys_per_engine_page_keeps_an_engines_key_and_base_url_without_making_it_the_engine(client):
    url = admin_page(client)
    assert client.post(url, {**FORM, "engine": "brave", "api_key": KEYS["brave"]}).status_code == 302
    assert "Keys per engine" in client.get(url).content.decode()
    scopes = reverse("admin:webtools_pluginoptions_scopes", args=[PluginOptions.objects.get(plugin="web_search").pk])

    refused = client.post(scopes, {"engine": "serper"})
    assert refused.status_code == 200 and "Enter the API key that Serper needs." in refused.content.decode()
    main = client.post(scopes, {"engine": "brave", "api_key": "another-key-0123456789"})
    assert main.status_code == 200 and "Select a valid choice." in main.content.decode()  # the engine in use
    assert client.post(scopes, {"engine": "tavily", "api_key": KEYS["tavily"]}).status_code == 302
    assert client.post(scopes, {"engine": "searxng", "base_url": "https://searx.example.org"}).status_code == 302

    row = PluginOptions.objects.get(plugin="web_search")
    assert row.values["engine"] == "brave" and "base_url" not in row.values
    assert row.values["base_url@searxng"] == "https://searx.example.org"
    assert row.get_secrets() == {"api_key@brave": KEYS["brave"], "api_key@tavily": KEYS["tavily"]}
    page = client.get(scopes).content.decode()
    assert "API key: set" in page and "Base URL: https://searx.example.org" in page
    assert not [key for key in KEYS.values() if key in page]

    # The options page now takes both as fallback engines, the engine in use unchanged.
    assert client.post(url, {**FORM, "engine": "brave", "fallback_engines": "tavily\nsearxng"}).status_code == 302
    assert PluginOptions.objects.get(plugin="web_search").values["fallback_engines"] == ["tavily", "searxng"]

    assert client.post(scopes, {"engine": "tavily", "api_key_clear": "on"}).status_code == 302
    assert PluginOptions.objects.get(plugin="web_search").get_secrets() == {"api_key@brave": KEYS["brave"]}
    assert [m.id for m in checks.run_checks(databases=["default"]) if m.id == "webtools.W015"] == ["webtools.W015"]
    # Web fetch keeps nothing per scope that a fallback would use: no such page.
    fetch = PluginOptions.objects.get(plugin="web_fetch")
    assert client.get(reverse("admin:webtools_pluginoptions_scopes", args=[fetch.pk])).status_code == 404


def scopes_page(client) -> tuple[str, str]:
    """The options page and its Keys per engine page, Brave (with its key) the engine in use."""
    url = admin_page(client)
    assert client.post(url, {**FORM, "engine": "brave", "api_key": KEYS["brave"]}).status_code == 302
    return url, reverse("admin:webtools_pluginoptions_scopes", args=[PluginOptions.objects.get(plugin="web_search").pk])


def stored() -> tuple[dict, dict]:
    row = PluginOptions.objects.get(plugin="web_search")
    return dict(row.values), row.get_secrets()


@pytest.mark.django_db
def test_keys_per_engine_page_clears_a_kept_base_url_or_field_and_nothing_else(client):
    _url, scopes = scopes_page(client)
    for entered in ({"engine": "searxng", "base_url": "https://searx.example.org"},
                    {"engine": "google", "api_key": KEYS["google"], "cx": CX},
                    {"engine": "tavily", "api_key": KEYS["tavily"]}):
        assert client.post(scopes, entered).status_code == 302
    page = client.get(scopes).content.decode()
    assert "Clear its Base URL" in page and "Clear its Search engine ID (cx)" in page
    values, secrets = stored()
    assert values["base_url@searxng"] == "https://searx.example.org" and values["cx@google"] == CX

    # A blank field keeps what is kept; only the ticked box clears, for the chosen engine only.
    assert client.post(scopes, {"engine": "searxng", "base_url": ""}).status_code == 302
    assert stored() == (values, secrets)
    assert client.post(scopes, {"engine": "searxng", "base_url_clear": "on"}).status_code == 302
    assert stored() == ({k: v for k, v in values.items() if k != "base_url@searxng"}, secrets)
    assert client.post(scopes, {"engine": "google", "cx_clear": "on"}).status_code == 302
    after = {k: v for k, v in values.items() if k not in ("base_url@searxng", "cx@google")}
    assert stored() == (after, secrets)  # Google's key, Tavily's and the engine in use are untouched
    assert after["engine"] == "brave"

    page = client.get(scopes).content.decode()
    assert "Cleared for SearXNG." in page and "Cleared for Google Programmable Search." in page
    assert "https://searx.example.org" not in page and f"Search engine ID (cx): {CX}" not in page
    assert "API key: set" in page and not [key for key in KEYS.values() if key in page]


@pytest.mark.django_db
def test_keys_per_engine_page_refuses_to_clear_and_enter_at_once(client):
    _url, scopes = scopes_page(client)
    assert client.post(scopes, {"engine": "google", "api_key": KEYS["google"], "cx": CX}).status_code == 302
    before = stored()
    refused = client.post(scopes, {"engine": "google", "api_key_clear": "on", "cx": "cx-new-0123"})
    assert refused.status_code == 200
    assert "Either clear values or enter new ones: not both at once." in refused.content.decode()
    assert stored() == before
    assert not [key for key in KEYS.values() if key in refused.content.decode()]


@pytest.mark.django_db
def test_admin_pages_offer_no_api_key_link_for_engines_that_need_no_key(client):
    url, scopes = scopes_page(client)
    for page in (client.get(url).content.decode(), client.get(scopes).content.decode()):
        assert "Get a Tavily API key" in page and "Free: your own YaCy peer." in page
        for keyless in ("DuckDuckGo", "SearXNG", "YaCy"):
            assert f"Get a {keyless} API key" not in page


def test_the_admin_offers_fallback_engines_as_ordered_choices_and_saves_them_in_order(admin_client):
    from django.urls import reverse

    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_search")
    url = reverse("admin:webtools_pluginoptions_change", args=[row.pk])
    page = admin_client.get(url).content.decode()
    # Three places to start with, each a select of every engine.
    assert 'name="fallback_engines_0"' in page and 'name="fallback_engines_2"' in page
    assert 'name="fallback_engines_3"' not in page
    assert page.count('<option value="tavily">Tavily</option>') == 1 + 3  # the engine's own select, 3 places
    form = {"engine": "searxng", "base_url": "https://searx.example.org", "admin_engine_roles": "user",
            "max_results": "5", "safe_search": "moderate",
            "fallback_engines_0": "duckduckgo", "fallback_engines_1": "", "fallback_engines_2": "searxng"}
    saved = admin_client.post(url, form)
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    row.refresh_from_db()
    assert row.values["fallback_engines"] == ["duckduckgo", "searxng"]  # in place order, blanks left out
    page = admin_client.get(url).content.decode()
    assert 'name="fallback_engines_2"' in page  # one blank place more than the list fills
    first = page.split('name="fallback_engines_0"')[1].split("</select>")[0]
    assert '<option value="duckduckgo" selected>' in first
