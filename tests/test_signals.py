"""Audit signals and log lines: who called which tool, how long, the outcome; never a secret."""
from __future__ import annotations

import json
import logging

import pytest
from django.contrib.auth import get_user_model

from webtools import signals
from webtools.host import start_turn
from webtools.models import PluginOptions

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    events = []

    def receiver(signal_name):
        def receive(sender, **kwargs):
            events.append((signal_name, sender, kwargs))
        return receive

    receivers = {name: receiver(name) for name in ("tool_called", "tool_failed", "search_performed")}
    for name, fn in receivers.items():
        getattr(signals, name).connect(fn)
    yield events
    for name, fn in receivers.items():
        getattr(signals, name).disconnect(fn)


def test_every_call_sends_tool_called_with_user_tool_duration_and_outcome(demo_plugins, heard):
    user = get_user_model().objects.create_user("dora")
    with start_turn(user, conversation="c9") as turn:
        turn.call("echo", {"text": "hi"})
    [(name, sender, kwargs)] = heard
    assert name == "tool_called" and sender == "echo"
    assert kwargs["user"] == str(user.pk) and kwargs["conversation"] == "c9" and kwargs["plugin"] == "demo"
    assert kwargs["outcome"] == "ok" and kwargs["duration_ms"] >= 0


def test_a_failure_sends_tool_failed_and_logs_no_secret(demo_plugins, heard, caplog):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": "operator-key-0123456789"})
    row.save()
    user = get_user_model().objects.create_user("dora")
    with caplog.at_level(logging.INFO, logger="webtools.audit"):
        with start_turn(user, requested_tools=["secret_echo"]) as turn:
            turn.call("secret_echo", {})
    names = [name for name, _sender, _kwargs in heard]
    assert names == ["tool_called", "tool_failed"]
    failed = heard[1][2]
    assert failed["outcome"] == "error" and "operator-key" not in failed["error"]
    line = caplog.records[-1].getMessage()
    assert line.startswith("tool_call ") and json.loads(line.split(" ", 1)[1])["outcome"] == "error"
    assert "operator-key-0123456789" not in caplog.text


def test_details_recorded_by_the_tool_reach_the_signal(use_plugins, heard):
    from webtools.runtime import Plugin, Tool

    class Searchy(Plugin):
        id = "searchy"
        name = "Searchy"

        def setup(self, setup):
            def search(input, ctx):
                ctx.audit(engine="brave", results=3)
                return []

            setup.register_tool(Tool("web_search", "", {"type": "object"}, search, default_enabled=True))

    use_plugins(Searchy())
    with start_turn(get_user_model().objects.create_user("eve")) as turn:
        turn.call("web_search", {})
    assert [name for name, _s, _k in heard] == ["tool_called", "search_performed"]
    assert heard[1][2]["details"] == {"engine": "brave", "results": 3}


def test_fetch_and_search_record_host_status_and_engine_but_no_content(heard):
    from webtools.net import AddressPolicy, HttpClient
    from webtools.plugins.web_fetch.tool import FetchOptions, WebFetch
    from webtools.runtime import Registry, Tool, Turn
    from webtools.signals import send_call_signals
    from tests.servers import LoopbackServer

    with LoopbackServer() as server:
        server.route("/doc", (200, {"Content-Type": "text/plain"}, b"secret page body"))
        registry = Registry()
        handler = WebFetch(FetchOptions.from_options({"respect_robots_txt": False}))
        registry.register(Tool("web_fetch", "", {"type": "object"}, handler, untrusted=True), "web_fetch")
        client = HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]))
        turn = Turn(registry=registry, requested_tools=["web_fetch"], fetch=client, on_call=send_call_signals,
                    messages=[f"Read {server.url('/doc')}"])
        turn.call("web_fetch", {"url": server.url("/doc")})
    fetched = [kwargs for name, _s, kwargs in heard if name == "tool_called"][0]
    assert fetched["details"] == {"host": "127.0.0.1", "cached": False, "status": 200, "content_type": "text/plain"}
    assert "secret page body" not in str(fetched)
