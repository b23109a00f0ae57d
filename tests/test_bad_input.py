"""Every bad input is a clear 4xx, never a 500 (issue #9, defect 4 and the smaller gaps of defect 5).

Requests go through Django's test client with ``raise_request_exception=False`` and DEBUG off, so a
crash shows as the 500 a visitor would get, not as a Python exception in the test.
"""
from __future__ import annotations

import base64
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from webtools.models import PluginOptions, UserPluginSettings, UserToolSetting
from webtools.runtime import Registry, Tool, Turn

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000
SURROGATE_JSON = '{"engine": "google", "api_key": "Gk3yWq8ZpL2x-9Rt5", "cx": "abc\\ud800def"}'


@pytest.fixture
def user():
    return get_user_model().objects.create_user("reader", password="pw-reader-123")


@pytest.fixture
def api(user):
    """A client with the user's DRF token, and no session."""
    return Client(raise_request_exception=False, HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)


@pytest.fixture
def browser(user):
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def admin(db):
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    return client


def settings_url(plugin: str = "web_search") -> str:
    return reverse("webtools:user-plugin-settings", args=[plugin])


def switch_url() -> str:
    return reverse("webtools:tool-switch", args=["web_search", "web_search"])


# -- deep nesting ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [settings_url, switch_url])
def test_deeply_nested_json_on_the_api_is_a_400(api, url):
    response = api.put(url(), DEEP, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": "The JSON is nested more than 64 levels deep."}


def test_deeply_nested_json_on_the_demo_chat_is_a_400(browser, settings):
    settings.OPENAI_BASE_URL, settings.OPENAI_MODEL = "http://127.0.0.1:9/v1", "m"
    response = browser.post(reverse("chat-stream"), DEEP, content_type="application/json")
    assert response.status_code == 400 and b"nested more than 64 levels" in response.content


def test_deeply_nested_json_on_the_admin_test_page_is_a_form_error(admin):
    admin.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_fetch")
    response = admin.post(reverse("admin:webtools_pluginoptions_test", args=[row.pk]),
                          {"tool": "web_fetch", "input": DEEP})
    assert response.status_code == 200
    assert "nested more than 64 levels" in response.content.decode()


def echo_turn() -> Turn:
    registry = Registry()
    registry.register(Tool(name="echo", description="Echo.", input_schema={"type": "object"},
                           handler=lambda input, ctx: input), "test")
    return Turn(registry=registry, requested_tools=["echo"])


def test_deeply_nested_tool_arguments_from_a_model_are_an_error_result():
    with echo_turn() as turn:
        result = turn.call("echo", '{"a": ' + DEEP)
    assert result.is_error and result.output == {
        "error": "Invalid input for echo: The JSON is nested more than 64 levels deep.",
        "error_code": "invalid_tool_input"}


def test_the_depth_check_ignores_brackets_inside_strings():
    with echo_turn() as turn:
        result = turn.call("echo", json.dumps({"text": DEEP + '\\"' + DEEP}))
    assert not result.is_error and result.output == {"text": DEEP + '\\"' + DEEP}


# -- unstorable text ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["abc\\ud800def", "abc\\u0000def", "\\udfff"])
def test_a_lone_surrogate_or_nul_in_a_settings_value_is_a_field_error(api, user, value):
    body = '{"engine": "google", "api_key": "Gk3yWq8ZpL2x-9Rt5", "cx": "%s"}' % value
    response = api.put(settings_url(), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"cx": ["Text must not contain NUL characters or unpaired surrogates."]}
    assert not UserPluginSettings.objects.filter(user=user).exists()


def test_a_value_stored_before_these_were_refused_reads_back_safely(api, user, admin):
    from django.db import DataError, connection, transaction

    if connection.vendor == "postgresql":
        # PostgreSQL's jsonb refuses a lone surrogate itself, so no such value can have been stored there.
        with pytest.raises(DataError), transaction.atomic():
            UserPluginSettings.objects.create(user=user, plugin="web_search", values=json.loads(SURROGATE_JSON))
        return
    # As the settings API stored it before this check existed (json.loads gave it the lone surrogate).
    row = UserPluginSettings.objects.create(user=user, plugin="web_search", values=json.loads(SURROGATE_JSON))
    options = PluginOptions.objects.create(plugin="web_search", values={"engine": "google", "cx": "x\ud800y"})

    listed = api.get(reverse("webtools:plugin-settings"))
    assert listed.status_code == 200
    [entry] = [e for e in listed.json() if e["id"] == "web_search"]
    assert entry["settings"]["cx"] == "abc\ufffddef"
    assert admin.get(reverse("admin:webtools_userpluginsettings_change", args=[row.pk])).status_code == 200
    assert admin.get(reverse("admin:webtools_pluginoptions_change", args=[options.pk])).status_code == 200
    assert admin.get(reverse("admin:webtools_pluginoptions_changelist")).status_code == 200


def test_nul_in_a_list_option_is_refused_in_the_admin(admin):
    admin.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_fetch")
    page = admin.get(reverse("admin:webtools_pluginoptions_change", args=[row.pk]))
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data = {k: ("\n".join(v) if isinstance(v, list) else v) for k, v in data.items() if v is not False}
    data["deny_domains"] = "example.com\nevil\x00.com"
    response = admin.post(reverse("admin:webtools_pluginoptions_change", args=[row.pk]), data)
    assert response.status_code == 200
    assert "must not contain NUL characters" in response.content.decode()


# -- types and missing values ------------------------------------------------------------------------------


def test_a_form_encoded_switch_without_enabled_is_a_400_not_off(api, user):
    response = api.put(switch_url(), "", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and response.json() == {"enabled": ["This field is required."]}
    assert not UserToolSetting.objects.filter(user=user).exists()


@pytest.mark.parametrize("value,message", [
    ({"a": 1}, "Must be text or null."),
    (["x"], "Must be text or null."),
    (7, "Must be text or null."),
    (True, "Must be text or null."),
])
def test_a_value_of_the_wrong_json_type_is_a_field_error_not_text(api, user, value, message):
    body = {"engine": "google", "api_key": "Gk3yWq8ZpL2x-9Rt5", "cx": value}
    response = api.put(settings_url(), json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and response.json() == {"cx": [message]}
    assert not UserPluginSettings.objects.filter(user=user).exists()


def test_a_secret_of_the_wrong_json_type_is_a_field_error(api, user):
    body = {"engine": "brave", "api_key": {"key": "Gk3yWq8ZpL2x-9Rt5"}}
    response = api.put(settings_url(), json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and response.json() == {"api_key": ["Must be text or null."]}


def test_nan_and_oversized_bodies_are_400s(api):
    assert api.put(settings_url(), '{"cx": NaN}', content_type="application/json").status_code == 400
    huge = json.dumps({"cx": "x" * 200_000})
    response = api.put(settings_url(), huge, content_type="application/json")
    assert response.status_code == 400 and "larger than" in response.json()["detail"]


# -- authentication ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "Token not-a-real-token", "Token ", "Bearer abc"])
def test_missing_or_bad_credentials_are_a_401_saying_how_to_sign_in(header):
    client = Client(raise_request_exception=False, **({"HTTP_AUTHORIZATION": header} if header else {}))
    response = client.get(reverse("webtools:plugin-settings"))
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("classes", [
    ["rest_framework.authentication.BasicAuthentication"],
    [],
])
def test_token_and_session_work_whatever_the_hosts_authentication_classes(settings, user, browser, classes):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_AUTHENTICATION_CLASSES": classes}
    token = Token.objects.create(user=user).key
    by_token = Client(HTTP_AUTHORIZATION=f"Token {token}").get(reverse("webtools:plugin-settings"))
    assert by_token.status_code == 200
    assert browser.get(reverse("webtools:plugin-settings")).status_code == 200
    basic = "Basic " + base64.b64encode(b"reader:pw-reader-123").decode()
    by_basic = Client(raise_request_exception=False, HTTP_AUTHORIZATION=basic).get(reverse("webtools:plugin-settings"))
    assert by_basic.status_code == (200 if classes else 401)  # the host's own classes keep working


def test_a_session_put_still_needs_the_csrf_token(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.put(switch_url(), '{"enabled": true}', content_type="application/json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]


# -- the demo's sign-in ----------------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["webtools:settings", "chat"])
def test_a_user_who_is_not_staff_signs_in_to_the_settings_page_and_the_chat(user, page):
    client = Client()
    target = reverse(page)
    response = client.get(target)
    assert response.status_code == 302
    login = client.get(response["Location"])
    assert login.status_code == 200 and b'name="password"' in login.content
    signed_in = client.post(response["Location"], {"username": "reader", "password": "pw-reader-123"})
    assert signed_in.status_code == 302 and signed_in["Location"] == target
    assert client.get(target).status_code == 200
