"""One key per engine: switching engine brings that engine's key or none, never another's.

Brave and Tavily are loopback servers that record the key each request carried; users save their
settings through the API and operators through the admin, as they would.
"""
from __future__ import annotations

import importlib
import json

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from webtools.host import start_turn
from webtools.models import PluginOptions, UserPluginSettings

from .servers import LoopbackServer, Reply

pytestmark = pytest.mark.django_db

BRAVE_KEY = "brave-user-key-0123456789"
TAVILY_KEY = "tavily-user-key-0123456789"
OPERATOR_KEY = "tavily-operator-key-0123456789"


@pytest.fixture
def engines(settings):
    """Brave and Tavily on loopback, answering no results and recording the key of each request."""
    keys: dict[str, list[str]] = {"brave": [], "tavily": []}

    def brave(req):
        keys["brave"].append(req.headers.get("X-Subscription-Token", ""))
        return Reply(200, {"Content-Type": "application/json"}, json.dumps({"web": {"results": []}}))

    def tavily(req):
        keys["tavily"].append(req.headers.get("Authorization", "").removeprefix("Bearer "))
        return Reply(200, {"Content-Type": "application/json"}, json.dumps({"results": []}))

    with LoopbackServer() as server:
        server.route("/brave", brave)
        server.route("/tavily", tavily)
        settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {
            "brave": server.url("/brave"), "tavily": server.url("/tavily")}}
        yield keys


def operator_options(engine: str = "tavily", key: str = OPERATOR_KEY, **values) -> PluginOptions:
    row = PluginOptions.objects.create(plugin="web_search", values={
        "engine": engine, "admin_engine_roles": ["user"], "enabled_by_default": True, "user_toggle": True,
        "user_engines": True, "max_results": 5, "safe_search": "moderate", **values})
    row.set_secrets({f"api_key@{engine}": key})
    row.save()
    return row


@pytest.fixture
def user():
    return get_user_model().objects.create_user("kim", password="pw-kim-123")


@pytest.fixture
def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def put(api, **body):
    return api.put(reverse("webtools:user-plugin-settings", args=["web_search"]), body, format="json")


def search(user) -> None:
    with start_turn(user) as turn:
        result = turn.call("web_search", {"query": "django"})
    assert not result.is_error, result.output


def test_switching_to_the_operators_engine_uses_the_operators_key_never_the_users_other_key(engines, api, user):
    operator_options("tavily")
    saved = put(api, engine="brave", api_key=BRAVE_KEY)
    assert saved.status_code == 200 and saved.json()["secrets"] == {"api_key": True}
    search(user)
    assert engines["brave"] == [BRAVE_KEY]

    switched = put(api, engine="tavily")
    assert switched.status_code == 200
    assert switched.json()["secrets"] == {"api_key": False}  # the Brave key is not Tavily's
    assert switched.json()["secretsFor"] == {"api_key": ["brave"]}
    search(user)
    assert engines["tavily"] == [OPERATOR_KEY]


def test_each_engine_keeps_its_own_key_and_switching_back_brings_it_back(engines, api, user):
    operator_options("tavily")
    put(api, engine="brave", api_key=BRAVE_KEY)
    assert put(api, engine="tavily", api_key=TAVILY_KEY).status_code == 200
    search(user)
    back = put(api, engine="brave")  # no key typed: Brave's own is still there
    assert back.status_code == 200 and back.json()["secrets"] == {"api_key": True}
    assert back.json()["secretsFor"] == {"api_key": ["brave", "tavily"]}
    search(user)
    assert engines == {"tavily": [TAVILY_KEY], "brave": [BRAVE_KEY]}
    stored = UserPluginSettings.objects.get(user=user).get_secrets()
    assert stored == {"api_key@brave": BRAVE_KEY, "api_key@tavily": TAVILY_KEY}


def test_a_keyed_engine_without_its_own_key_is_refused_even_when_another_engine_has_one(api):
    operator_options("tavily")
    put(api, engine="brave", api_key=BRAVE_KEY)
    refused = put(api, engine="exa")
    assert refused.status_code == 400 and "Add your Exa API key." in refused.json()["api_key"]


def test_values_that_do_not_apply_to_the_chosen_engine_are_not_stored(api, user):
    operator_options("tavily")
    assert put(api, engine="searxng", base_url="https://searx.example.org").status_code == 200
    assert UserPluginSettings.objects.get(user=user).values["base_url"] == "https://searx.example.org"
    moved = put(api, engine="brave", api_key=BRAVE_KEY, base_url="https://searx.example.org")
    assert moved.status_code == 200 and moved.json()["settings"]["base_url"] is None
    assert "base_url" not in UserPluginSettings.objects.get(user=user).values


def test_operator_switching_engine_in_the_admin_keeps_one_key_per_engine(engines, client, user):
    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client.force_login(admin)
    client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_search")
    url = reverse("admin:webtools_pluginoptions_change", args=[row.pk])
    form = {"admin_engine_roles": "user", "enabled_by_default": "on", "user_toggle": "on", "user_engines": "on",
            "max_results": "5", "safe_search": "moderate"}
    assert client.post(url, {**form, "engine": "brave", "api_key": BRAVE_KEY}).status_code == 302
    # Tavily without a key of its own is refused: Brave's key does not count.
    refused = client.post(url, {**form, "engine": "tavily"})
    assert refused.status_code == 200 and "Enter the API key that Tavily needs." in refused.content.decode()
    assert client.post(url, {**form, "engine": "tavily", "api_key": OPERATOR_KEY}).status_code == 302
    search(user)
    page = client.get(url).content.decode()
    assert "Kept for Brave, Tavily, hidden." in page
    assert client.post(url, {**form, "engine": "brave"}).status_code == 302
    search(user)
    assert engines == {"tavily": [OPERATOR_KEY], "brave": [BRAVE_KEY]}


def test_migration_moves_each_saved_key_to_the_engine_it_was_saved_with(user):
    migration = importlib.import_module("webtools.migrations.0002_keys_per_engine")
    options = PluginOptions.objects.create(plugin="web_search", values={"engine": "brave", "base_url": "http://x"})
    options.set_secrets({"api_key": BRAVE_KEY})
    options.save()
    mine = UserPluginSettings.objects.create(user=user, plugin="web_search", values={"engine": "tavily"})
    mine.set_secrets({"api_key": TAVILY_KEY})
    mine.save()
    other = get_user_model().objects.create_user("lee")
    # A key saved with the operator's engine ("default") never applied to any engine of the user's.
    stale = UserPluginSettings.objects.create(user=other, plugin="web_search", values={"engine": "default"})
    stale.set_secrets({"api_key": "stale-key-0123456789"})
    stale.save()

    migration.keys_per_engine(apps, None)
    for row in (options, mine, stale):
        row.refresh_from_db()
    assert options.get_secrets() == {"api_key@brave": BRAVE_KEY} and options.values == {"engine": "brave"}
    assert mine.get_secrets() == {"api_key@tavily": TAVILY_KEY}
    assert stale.get_secrets() == {}
    migration.keys_per_engine(apps, None)  # running it again changes nothing
    options.refresh_from_db()
    assert options.get_secrets() == {"api_key@brave": BRAVE_KEY}
