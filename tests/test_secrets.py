"""No key travels: distinctive keys are planted everywhere, and every response, admin page, log record and
tool output is searched for any spelling of them (``tests.leaks``).

The operator's key (web_search with Brave, saved through the admin), a user's key (Kagi, saved through
the settings API) and the model server's key (the demo chat) are planted; the engines and the model
server are loopback servers that echo the key they got back in every spelling ``leaks.spellings``
knows: exact, in capitals, cut short, base64 at each offset, spaced, as entities, percent-encoded.
DEBUG is off, as in production.
"""
from __future__ import annotations

import json
import logging

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from webtools.host import start_turn
from webtools.models import PluginOptions, UserPluginSettings

from .leaks import assert_no_leak, spellings
from .servers import LoopbackServer, Reply

pytestmark = pytest.mark.django_db

ADMIN_KEY = "Wq4ZoPkEy7-Hd93Lx0Rb5Nc2Vt8Mf6Ja1Sg"
USER_KEY = "Yu2XvMeRk5-Tg71Qz9Pw3Bd6Ln0Hc4Fs8Kj"
MODEL_KEY = "Mx8KsLlMk3-Rj52Wn7Gd1Zq9Vb4Tp0Ce6Hy"
KEYS = (ADMIN_KEY, USER_KEY, MODEL_KEY)


def every_spelling(key: str) -> str:
    return " | ".join(spellings(key).values())


def json_reply(status: int, body: object) -> Reply:
    return Reply(status, {"Content-Type": "application/json"}, json.dumps(body))


@pytest.fixture
def logs(caplog):
    """Every record from every logger, DEBUG and up."""
    caplog.set_level(logging.DEBUG)
    for name in ("webtools", "project", "django", "urllib3"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def assert_logs_clean(logs) -> None:
    assert logs.records, "the failures were logged"
    for record in logs.records:
        text = record.getMessage() + (logs.handler.format(record) if record.exc_info else "")
        assert_no_leak(text, *KEYS, where=f"log record {record.name}")


@pytest.fixture
def engines(settings):
    """Brave and Kagi on loopback, each echoing in every spelling the key it was sent."""
    with LoopbackServer() as server:
        server.route("/brave", lambda req: json_reply(422, {
            "type": "ErrorResponse",
            "error": {"code": "SUBSCRIPTION_TOKEN_INVALID",
                      "detail": "Token " + every_spelling(req.headers["X-Subscription-Token"])},
        }))
        server.route("/kagi", lambda req: json_reply(401, {
            "error": [{"code": 1, "msg": "Bad token " + every_spelling(req.headers["Authorization"][4:])}],
        }))
        settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {
            "brave": server.url("/brave"), "kagi": server.url("/kagi")}}
        yield server


@pytest.fixture
def admin_client(client):
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    return client


@pytest.fixture
def operator_options(admin_client):
    """The operator saves Brave with ADMIN_KEY through the admin form."""
    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_search")
    response = admin_client.post(reverse("admin:webtools_pluginoptions_change", args=[row.pk]), {
        "engine": "brave", "api_key": ADMIN_KEY, "admin_engine_roles": "user", "enabled_by_default": "on",
        "user_toggle": "on", "user_engines": "on", "max_results": "5", "safe_search": "moderate",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    row.refresh_from_db()
    assert row.get_secrets() == {"api_key@brave": ADMIN_KEY}
    return row


@pytest.fixture
def user():
    return get_user_model().objects.create_user("reader", password="pw-reader-123")


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    return client


def test_the_operators_key_is_in_no_admin_page_tool_output_or_log(engines, operator_options, admin_client, logs):
    pages = {
        "changelist": admin_client.get(reverse("admin:webtools_pluginoptions_changelist")),
        "change page": admin_client.get(reverse("admin:webtools_pluginoptions_change", args=[operator_options.pk])),
        "test page": admin_client.get(reverse("admin:webtools_pluginoptions_test", args=[operator_options.pk])),
        "test run": admin_client.post(
            reverse("admin:webtools_pluginoptions_test", args=[operator_options.pk]),
            {"tool": "web_search", "input": '{"query": "django"}'},
        ),
    }
    assert engines.hits("/brave") == 1
    for where, response in pages.items():
        assert response.status_code == 200, where
        assert_no_leak(response.content.decode(), *KEYS, where=where)
    assert "The Brave API key was rejected." in pages["test run"].content.decode()
    assert_logs_clean(logs)


def test_the_users_key_is_in_no_api_response_page_tool_output_or_log(
    engines, operator_options, admin_client, api, user, logs
):
    saved = api.put(reverse("webtools:user-plugin-settings", args=["web_search"]),
                    {"engine": "kagi", "api_key": USER_KEY}, format="json")
    assert saved.status_code == 200
    assert UserPluginSettings.objects.get(user=user).get_secrets() == {"api_key@kagi": USER_KEY}
    responses = {
        "PUT response": saved,
        "settings list": api.get(reverse("webtools:plugin-settings")),
        "browsable API": api.get(reverse("webtools:plugin-settings"), HTTP_ACCEPT="text/html"),
        "schema": api.get(reverse("webtools:schema")),
        "refused PUT": api.put(reverse("webtools:user-plugin-settings", args=["web_search"]),
                               {"engine": "kagi", "api_key": USER_KEY + "\r\nX-Evil: 1"}, format="json"),
    }
    browser = Client()
    browser.force_login(user)
    responses["settings page"] = browser.get(reverse("webtools:settings"))
    row = UserPluginSettings.objects.get(user=user)
    responses["admin's view of the user's settings"] = admin_client.get(
        reverse("admin:webtools_userpluginsettings_change", args=[row.pk]))
    responses["admin's list of users' settings"] = admin_client.get(
        reverse("admin:webtools_userpluginsettings_changelist"))
    assert responses["refused PUT"].status_code == 400
    for where, response in responses.items():
        assert response.status_code in (200, 400), where
        assert_no_leak(response.content.decode(), *KEYS, where=where)

    with start_turn(user) as turn:
        result = turn.call("web_search", {"query": "django"})
    assert engines.hits("/kagi") == 1
    assert result.is_error and result.output == {"error": "The Kagi API key was rejected.", "error_code": "unavailable"}
    assert_no_leak(json.dumps(result.output) + result.model_text, *KEYS, where="tool output")
    assert_logs_clean(logs)


def test_a_key_echoed_in_search_results_is_masked_in_the_tool_output(engines, operator_options, user, logs):
    engines.route("/brave", lambda req: json_reply(200, {"web": {"results": [{
        "title": "Your key " + spellings(req.headers["X-Subscription-Token"])["upper"],
        "url": "https://example.com/",
        "description": every_spelling(req.headers["X-Subscription-Token"]),
    }]}}))
    with start_turn(user) as turn:
        result = turn.call("web_search", {"query": "django"})
    assert not result.is_error and result.output["results"][0]["title"].startswith("Your key ")
    assert_no_leak(json.dumps(result.output) + result.model_text, *KEYS, where="tool output")


def test_the_model_servers_key_is_in_no_chat_event_page_or_log(settings, user, client, logs):
    from .test_demo_chat import QUESTION, events_of

    def echo(req):
        return json_reply(401, {"error": {"message": "Incorrect API key provided: "
                                          + every_spelling(req.headers["Authorization"][7:])}})

    client.force_login(user)
    settings.OPENAI_MODEL = "some-model"
    settings.OPENAI_API_KEY = MODEL_KEY
    with LoopbackServer({"*": echo}) as server:
        settings.OPENAI_BASE_URL = server.url("/v1").replace("http://", f"http://operator:{MODEL_KEY}@")
        page = client.get(reverse("chat"))
        response = client.post(reverse("chat-stream"), {"messages": [QUESTION]},
                               content_type="application/json")
        events = events_of(response)
        assert server.hits() == 1
    settings.OPENAI_BASE_URL = f"http://operator:{MODEL_KEY}@127.0.0.1:9/v1"
    unreachable = events_of(client.post(reverse("chat-stream"), {"messages": [{"role": "user", "content": "hi"}]},
                                        content_type="application/json"))
    assert events[0] == {"type": "error", "message": "The model server rejected the API key (OPENAI_API_KEY) "
                                                     "with HTTP 401."}
    assert "at http://127.0.0.1:9/v1/chat/completions could not be reached" in unreachable[0]["message"]
    for where, text in {"chat page": page.content.decode(), "events": json.dumps(events),
                        "unreachable events": json.dumps(unreachable)}.items():
        assert_no_leak(text, *KEYS, where=where)
    assert_logs_clean(logs)


def test_the_chat_page_shows_the_model_server_without_credentials_or_query(settings, user, client):
    client.force_login(user)
    settings.OPENAI_MODEL = "some-model"
    settings.OPENAI_BASE_URL = f"https://operator:{MODEL_KEY}@models.example.com:8443/v1?api-key={MODEL_KEY}#x"
    page = client.get(reverse("chat")).content.decode()
    assert "https://models.example.com:8443/v1" in page
    assert_no_leak(page, MODEL_KEY, where="chat page")
    assert "operator" not in page and "api-key" not in page


RERANK_KEY = "Rk6PqTz2Wm-Ny48Hc7Lb0Xd5Fv3Js9Ga1Ue"


@pytest.mark.parametrize("status", [401, 200])
def test_the_rerank_key_is_in_no_admin_page_tool_output_or_log(settings, admin_client, user, logs, status):
    """The operator's Cohere rerank key, saved through the admin: the service echoes it in every spelling
    (refusing it, or in an answer not in the documented shape), and the search keeps the engine's order."""
    brave = {"web": {"results": [
        {"title": f"Result {i}", "url": f"https://r{i}.example/", "description": "snippet"} for i in range(3)]}}
    with LoopbackServer() as server:
        server.route("/brave", json_reply(200, brave))
        server.route("/cohere", lambda req: json_reply(status, {
            "message": "invalid api token " + every_spelling(req.headers["Authorization"][7:])}))
        settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {"brave": server.url("/brave")},
                             "RERANK_URLS": {"cohere": server.url("/cohere")}}
        admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
        row = PluginOptions.objects.get(plugin="web_search")
        saved = admin_client.post(reverse("admin:webtools_pluginoptions_change", args=[row.pk]), {
            "engine": "brave", "api_key": ADMIN_KEY, "admin_engine_roles": "user", "enabled_by_default": "on",
            "user_toggle": "on", "max_results": "5", "safe_search": "moderate",
            "rerank_with": "cohere", "rerank_api_key": RERANK_KEY,
        })
        assert saved.status_code == 302, saved.content.decode()[:2000]
        row.refresh_from_db()
        assert row.get_secrets()["rerank_api_key@cohere"] == RERANK_KEY
        pages = {
            "change page": admin_client.get(reverse("admin:webtools_pluginoptions_change", args=[row.pk])),
            "test run": admin_client.post(reverse("admin:webtools_pluginoptions_test", args=[row.pk]),
                                          {"tool": "web_search", "input": '{"query": "django"}'}),
        }
        with start_turn(user) as turn:
            result = turn.call("web_search", {"query": "django"})
        assert server.hits("/cohere") == 2
    assert not result.is_error and [r["url"] for r in result.output["results"]] == [
        f"https://r{i}.example/" for i in range(3)]
    for where, response in pages.items():
        assert response.status_code == 200, where
        assert_no_leak(response.content.decode(), RERANK_KEY, *KEYS, where=where)
    assert_no_leak(json.dumps(result.output) + result.model_text, RERANK_KEY, where="tool output")
    assert any("Reranking with Cohere Rerank skipped" in record.getMessage() for record in logs.records)
    for record in logs.records:
        assert_no_leak(record.getMessage(), RERANK_KEY, where=f"log record {record.name}")
