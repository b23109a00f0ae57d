"""A long turn reads the user's roles and the operator's options again: a role or a key the operator
takes away stops serving within ``TURN_REFRESH_SECONDS`` (before every call with 0, as MCP sessions do).
"""
from __future__ import annotations

import json
import time

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from webtools.host import start_turn
from webtools.models import PluginOptions
from webtools.plugins.web_search.resolution import NEEDS_OWN_ENGINE
from webtools.runtime import Registry, Tool, Turn, TurnState

from .servers import LoopbackServer, Reply

pytestmark = pytest.mark.django_db
KEY = "brave-operator-key-0123456789"


@pytest.fixture
def brave(settings):
    with LoopbackServer({"/brave": Reply(200, {"Content-Type": "application/json"},
                                         json.dumps({"web": {"results": []}}))}) as server:
        settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {"brave": server.url("/brave")}}
        yield server


@pytest.fixture
def payer():
    row = PluginOptions.objects.create(plugin="web_search", values={
        "engine": "brave", "admin_engine_roles": ["payers"], "enabled_by_default": True, "user_toggle": True,
        "user_engines": True, "max_results": 5, "safe_search": "moderate", "user_searches_per_minute": 0})
    row.set_secrets({"api_key@brave": KEY})
    row.save()
    user = get_user_model().objects.create_user("pat")
    user.groups.add(Group.objects.create(name="payers"))
    return user


def test_a_user_taken_out_of_the_paying_group_loses_the_operators_engine_at_the_next_call(brave, payer):
    with start_turn(payer, refresh_seconds=0) as turn:
        assert not turn.call("web_search", {"query": "tides"}).is_error
        payer.groups.clear()
        refused = turn.call("web_search", {"query": "tides"})
    assert refused.output["error"] == NEEDS_OWN_ENGINE
    assert brave.hits("/brave") == 1


def test_within_the_refresh_interval_the_turn_keeps_what_it_read(brave, payer, settings):
    settings.WEBTOOLS = {**settings.WEBTOOLS, "TURN_REFRESH_SECONDS": 0.5}
    with start_turn(payer) as turn:
        payer.groups.clear()
        assert not turn.call("web_search", {"query": "tides"}).is_error  # read at the start
        time.sleep(0.6)
        assert turn.call("web_search", {"query": "tides"}).output["error"] == NEEDS_OWN_ENGINE
    assert brave.hits("/brave") == 1


def test_options_the_operator_changed_apply_to_a_running_turn(brave, payer):
    with start_turn(payer, refresh_seconds=0, requested_tools=["web_search", "web_fetch"]) as turn:
        assert not turn.call("web_search", {"query": "tides"}).is_error
        PluginOptions.objects.filter(plugin="web_search").update(values={"enabled_by_default": False})
        gone = turn.call("web_search", {"query": "tides"})
    assert gone.is_error and brave.hits("/brave") == 1


def test_a_failing_read_keeps_the_turn_as_it_was(caplog):
    echo = Tool("echo", "", {"type": "object"}, lambda input, ctx: {"roles": sorted(ctx.roles)})
    registry = Registry()
    registry.register(echo, "test")

    def broken() -> TurnState:
        raise RuntimeError("database went away")

    turn = Turn(registry=registry, roles={"user"}, requested_tools=["echo"], refresh=broken, refresh_seconds=0)
    assert turn.call("echo", {}).output == {"roles": ["user"]}
    assert "Reading the turn's settings again failed" in caplog.text
