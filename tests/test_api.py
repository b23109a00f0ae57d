"""The settings API: tool switches and user plugin settings."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from webtools.models import PluginOptions, UserPluginSettings, UserToolSetting

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def api(user, demo_plugins):
    client = APIClient()
    client.force_authenticate(user)
    return client


def entries(api) -> dict:
    response = api.get(reverse("webtools:plugin-settings"))
    assert response.status_code == 200
    return {entry["id"]: entry for entry in response.json()}


def test_settings_list_requires_authentication(demo_plugins):
    assert APIClient().get(reverse("webtools:plugin-settings")).status_code in (401, 403)


def test_token_authentication_is_accepted(user, demo_plugins):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    assert client.get(reverse("webtools:plugin-settings")).status_code == 200


def test_settings_list_shows_each_plugins_tools_with_enabled_state_and_user_toggle(api):
    demo = entries(api)["demo"]
    tools = {t["name"]: t for t in demo["tools"]}
    assert tools["echo"] == {"name": "echo", "title": "Echo", "helpText": "", "description": "Echo the text.",
                             "enabled": True, "userToggle": True}
    assert tools["shout"]["enabled"] is False and tools["shout"]["userToggle"] is True
    assert tools["fixed"]["userToggle"] is False


def test_plugin_without_user_settings_or_switchable_tools_is_left_out(api):
    assert "quiet" not in entries(api)


def test_settings_list_gives_schema_with_show_when_rules_and_secrets_as_set_or_not(api):
    demo = entries(api)["demo"]
    assert demo["settings"] == {"mode": "default", "nickname": None}
    assert demo["secrets"] == {"api_key": False}
    props = demo["schema"]["properties"]
    assert props["mode"]["enum"] == ["default", "plain", "keyed"]
    assert props["api_key"]["writeOnly"] is True
    assert props["api_key"]["x-show-when"] == {"field": "mode", "values": ["keyed"]}
    assert "x-show-when" not in props["nickname"]


def test_tool_switch_is_stored_and_changes_the_enabled_state(api, user):
    url = reverse("webtools:tool-switch", args=["demo", "echo"])
    assert api.put(url, {"enabled": False}, format="json").json() == {"enabled": False}
    assert UserToolSetting.objects.get(user=user, tool="echo").enabled is False
    assert {t["name"]: t["enabled"] for t in entries(api)["demo"]["tools"]}["echo"] is False
    api.put(url, {"enabled": True}, format="json")
    assert UserToolSetting.objects.filter(user=user, tool="echo").count() == 1


@pytest.mark.parametrize("plugin, tool", [("quiet", "echo"), ("demo", "nope"), ("nope", "echo")])
def test_tool_switch_for_a_tool_the_plugin_did_not_register_is_404(api, plugin, tool):
    response = api.put(reverse("webtools:tool-switch", args=[plugin, tool]), {"enabled": True}, format="json")
    assert response.status_code == 404


def test_tool_switch_for_a_tool_without_user_toggle_is_400(api, user):
    response = api.put(reverse("webtools:tool-switch", args=["demo", "fixed"]), {"enabled": False}, format="json")
    assert response.status_code == 400 and "cannot be switched" in response.json()["detail"]
    assert not UserToolSetting.objects.filter(user=user).exists()


@pytest.mark.parametrize("body", [{"enabled": "false"}, {"enabled": 1}, {"enabled": None}, {}, ["x"]])
def test_tool_switch_with_a_body_that_is_not_a_boolean_is_400(api, user, body):
    response = api.put(reverse("webtools:tool-switch", args=["demo", "echo"]), body, format="json")
    assert response.status_code == 400
    assert not UserToolSetting.objects.filter(user=user).exists()


def test_user_settings_are_validated_with_field_errors(api, user):
    url = reverse("webtools:user-plugin-settings", args=["demo"])
    response = api.put(url, {"mode": "keyed"}, format="json")
    assert response.status_code == 400 and response.json() == {"api_key": ["Add your API key."]}
    response = api.put(url, {"mode": "martian", "color": "red"}, format="json")
    assert response.status_code == 400 and response.json() == {"color": ["Unknown field."]}
    response = api.put(url, {"mode": "martian"}, format="json")
    assert response.status_code == 400 and "mode" in response.json()
    assert not UserPluginSettings.objects.filter(user=user).exists()


def test_user_secret_is_stored_encrypted_and_never_returned(api, user):
    url = reverse("webtools:user-plugin-settings", args=["demo"])
    secret = "user-key-1234567890"
    response = api.put(url, {"mode": "keyed", "api_key": secret, "nickname": "al"}, format="json")
    assert response.status_code == 200
    assert secret not in response.content.decode()
    assert response.json()["secrets"] == {"api_key": True}
    row = UserPluginSettings.objects.get(user=user)
    assert secret not in row.encrypted_secrets and secret not in str(row.values)
    assert row.get_secrets() == {"api_key@keyed": secret}
    assert secret not in api.get(reverse("webtools:plugin-settings")).content.decode()


def test_user_secret_absent_keeps_it_and_null_clears_it(api, user):
    url = reverse("webtools:user-plugin-settings", args=["demo"])
    api.put(url, {"mode": "keyed", "api_key": "user-key-1234567890"}, format="json")
    assert api.put(url, {"mode": "keyed", "nickname": "x"}, format="json").status_code == 200
    assert UserPluginSettings.objects.get(user=user).get_secrets() == {"api_key@keyed": "user-key-1234567890"}
    assert api.put(url, {"mode": "keyed", "api_key": None}, format="json").status_code == 400  # keyed needs one
    assert api.put(url, {"mode": "plain"}, format="json").status_code == 200
    assert api.put(url, {"mode": "keyed", "api_key": "other-key-12345678"}, format="json").status_code == 200
    assert UserPluginSettings.objects.get(user=user).get_secrets() == {"api_key@keyed": "other-key-12345678"}


def test_delete_clears_settings_and_leaves_tool_choices(api, user):
    api.put(reverse("webtools:tool-switch", args=["demo", "echo"]), {"enabled": False}, format="json")
    url = reverse("webtools:user-plugin-settings", args=["demo"])
    api.put(url, {"mode": "plain", "nickname": "al"}, format="json")
    assert api.delete(url).status_code == 204
    assert not UserPluginSettings.objects.filter(user=user).exists()
    assert UserToolSetting.objects.get(user=user, tool="echo").enabled is False


def test_settings_of_a_plugin_without_user_settings_are_404(api):
    assert api.put(reverse("webtools:user-plugin-settings", args=["quiet"]), {}, format="json").status_code == 404
    assert api.delete(reverse("webtools:user-plugin-settings", args=["nope"])).status_code == 404


def test_one_users_choices_do_not_touch_another_users(api, user):
    other = get_user_model().objects.create_user("bob")
    api.put(reverse("webtools:tool-switch", args=["demo", "echo"]), {"enabled": False}, format="json")
    client = APIClient()
    client.force_authenticate(other)
    assert {t["name"]: t["enabled"] for t in entries(client)["demo"]["tools"]}["echo"] is True


def test_operator_options_change_what_the_api_reports(api):
    PluginOptions.objects.create(plugin="demo", values={"mode": "plain", "echo_default": False})
    assert {t["name"]: t["enabled"] for t in entries(api)["demo"]["tools"]}["echo"] is False


def test_openapi_schema_describes_the_settings_api(api):
    response = api.get(reverse("webtools:schema"), HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/plugins/settings" in paths
    assert "put" in paths["/api/plugins/{plugin_id}/tools/{tool_name}"]
    assert {"put", "delete"} <= set(paths["/api/plugins/{plugin_id}/settings"])


@pytest.mark.parametrize("key,message", [
    ("user-key-12345\r\nX-Injected: 1", "without spaces or line breaks"),
    ("user-key-12345\n", None),  # a trailing line break from a paste is dropped, not refused
    ("user key 12345678", "without spaces or line breaks"),
    ("user-kéy-12345678", "without spaces or line breaks"),
    ("user-key-\x00-12345", "must not contain NUL characters"),
    ("user-key-\ud800-12345", "must not contain NUL characters or unpaired surrogates"),
    ("short", "at least 8 characters"),
    ("k" * 1001, "at most 1000 characters"),
])
def test_a_key_is_printable_ascii_without_spaces_and_of_sensible_length(api, user, key, message):
    # json.dumps escapes a lone surrogate as \ud800, as a client would send it.
    response = api.put(reverse("webtools:user-plugin-settings", args=["demo"]),
                       json.dumps({"mode": "keyed", "api_key": key}), content_type="application/json")
    if message is None:
        assert response.status_code == 200
        assert UserPluginSettings.objects.get(user=user).get_secrets() == {"api_key@keyed": key.strip()}
        return
    assert response.status_code == 400
    errors = " ".join(response.json()["api_key"])
    assert message in errors and key.strip() not in errors


def test_without_an_encryption_key_a_secret_is_a_field_error_not_a_500(api, user, settings):
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENCRYPTION_KEYS": []}
    url = reverse("webtools:user-plugin-settings", args=["demo"])
    response = api.put(url, {"mode": "keyed", "api_key": "users-own-key-123456"}, format="json")
    assert response.status_code == 400
    message = " ".join(response.json()["api_key"])
    assert "No encryption key is set" in message and "WEBTOOLS_ENCRYPTION_KEYS" in message
    assert "users-own-key-123456" not in response.content.decode()
    assert not UserPluginSettings.objects.filter(user=user).exists()
