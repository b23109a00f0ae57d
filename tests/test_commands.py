"""``manage.py webtools call`` and ``manage.py webtools tools``."""
from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from tests.test_integrations_openai import web  # noqa: F401 (web: the real plugins)
from webtools.models import PluginOptions, UserToolSetting

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(demo_plugins):
    return get_user_model().objects.create_superuser("root", password="pw-root-123")


def run(*args) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("webtools", *args, stdout=out)
    except SystemExit as exit:
        return exit.code, out.getvalue()
    return 0, out.getvalue()


def test_call_prints_the_result_and_exactly_what_the_model_sees(root):
    code, out = run("call", "echo", "--input", '{"text": "hi"}')
    result = json.loads(out)
    assert code == 0
    assert result["tool"] == "echo" and result["is_error"] is False
    assert result["output"] == {"text": "hi", "settings": []}
    assert result["citations"] == []
    assert result["model_text"].startswith('<untrusted_tool_output id="')
    assert json.dumps(result["output"]) in result["model_text"]


def test_call_exits_1_when_the_call_is_an_error(root):
    code, out = run("call", "echo", "--input", '{"text": 5}')
    assert code == 1 and json.loads(out)["is_error"] is True


def test_call_never_prints_the_operators_secret(root):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": "operator-key-0123456789"})
    row.save()
    code, out = run("call", "secret_echo")
    assert code == 1 and "operator-key-0123456789" not in out and "[redacted]" in out


def test_call_runs_as_the_named_user_with_their_settings(root):
    bob = get_user_model().objects.create_user("bob")
    from webtools.models import UserPluginSettings

    UserPluginSettings.objects.create(user=bob, plugin="demo", values={"mode": "plain", "nickname": "b"})
    _code, out = run("call", "echo", "--input", '{"text": "x"}', "--user", "bob")
    assert json.loads(out)["output"]["settings"] == ["mode", "nickname"]


def test_call_with_bad_input_or_unknown_tool_or_user_is_a_clear_error(root):
    with pytest.raises(CommandError, match="--input is not JSON"):
        run("call", "echo", "--input", "{oops")
    with pytest.raises(CommandError, match="must be a JSON object"):
        run("call", "echo", "--input", "[1]")
    with pytest.raises(CommandError, match="Unknown tool: nope"):
        run("call", "nope")
    with pytest.raises(CommandError, match="No user named 'zed'"):
        run("call", "echo", "--user", "zed")


def test_tools_lists_each_tool_with_whether_it_is_enabled_and_why(root):
    UserToolSetting.objects.create(user=root, tool="shout", enabled=True)
    UserToolSetting.objects.create(user=root, tool="fixed", enabled=False)
    _code, out = run("tools")
    lines = {line.split("\t")[0]: line for line in out.splitlines()}
    assert "\tenabled\t(the user switched it on" in lines["shout"]
    assert "\tenabled\t(default on; user can switch" in lines["echo"]
    assert "\tenabled\t(the default applies" in lines["fixed"]
    assert "\tdisabled\t(default off; fixed by the operator" in lines["secret_echo"]


def test_check_reports_invalid_options_and_exits_1(root):
    PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    code, out = run("check", "--offline")
    assert code == 1
    assert "ERROR   Demo: api_key: The keyed mode needs an API key." in out
    assert "OK      Quiet: options valid." in out


def test_check_runs_each_plugins_test_call_and_passes_when_all_is_well(root, monkeypatch):
    from tests.plugins import DemoPlugin

    PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    monkeypatch.setattr(DemoPlugin, "test_input", lambda self, tool: {"text": "ping"} if tool == "shout" else None)
    code, out = run("check")
    assert code == 0, out
    assert 'shout test call {"text": "ping"} succeeded.' in out and "0 error(s)" in out


def test_check_reports_a_failing_test_call(root, monkeypatch):
    from tests.plugins import DemoPlugin

    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": "operator-key-0123456789"})
    row.save()
    monkeypatch.setattr(DemoPlugin, "test_input", lambda self, tool: {} if tool == "secret_echo" else None)
    code, out = run("check")
    assert code == 1 and "secret_echo test call failed: failed with key [redacted]" in out
    assert "operator-key-0123456789" not in out


@pytest.mark.django_db
@pytest.mark.parametrize("code", ["EAI_AGAIN", "EAI_NONAME"])
def test_check_on_a_machine_without_a_network_warns_that_it_cannot_reach_it(web, monkeypatch, code):  # noqa: F811
    """No name server answers (EAI_AGAIN: the usual offline machine), or it has no address for any name
    (EAI_NONAME): web_fetch's test call (https://example.com/) cannot be made, which is a warning."""
    import socket

    import webtools.net.connection

    def offline(host, port):
        raise socket.gaierror(getattr(socket, code), "as getaddrinfo says it")

    monkeypatch.setattr(webtools.net.connection, "system_resolver", offline)
    get_user_model().objects.create_superuser("root", password="pw-root-123")
    exit_code, out = run("check")
    assert exit_code == 0, out
    [line] = [line for line in out.splitlines() if "web_fetch test call" in line]
    assert line.startswith("WARNING web_fetch test call could not reach the network: The host example.com could not")
    assert "robots" not in line and "--offline" in line
    assert "0 error(s)" in out


@pytest.mark.django_db
def test_call_fetches_the_url_the_operator_gave(web):  # noqa: F811
    user, _engine, site = web
    get_user_model().objects.create_superuser("root", password="pw-root-123")
    code, out = run("call", "web_fetch", "--input", json.dumps({"url": site.url("/article")}))
    result = json.loads(out)
    assert code == 0 and result["is_error"] is False, result["output"]
    assert "lazy" in result["output"]["content"]
