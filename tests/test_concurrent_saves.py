"""Two saves of the same settings at once: neither fails and neither loses the other's key.

Each round sends two saves at the same moment (a barrier), through a real threaded server for the API
and through the admin's views from two threads, each with its own database connection; both databases
run it in CI (SQLite, PostgreSQL).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from webtools.models import PluginOptions, UserPluginSettings

from .test_fallback_engines import FORM, KEYS

ROUNDS = 15
BRAVE_KEY = "brave-user-key-{0}-0123456789"
TAVILY_KEY = "tavily-user-key-{0}-0123456789"


def at_once(*calls):
    """Run the calls in threads released together; their results in order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


@pytest.fixture
def operator(transactional_db):
    row = PluginOptions.objects.create(plugin="web_search", values={
        "engine": "brave", "admin_engine_roles": [], "user_engines": True, "max_results": 5,
        "safe_search": "moderate"})
    row.set_secrets({"api_key@brave": KEYS["brave"]})
    row.save()
    return row


def api_session(live_server, username: str) -> tuple[requests.Session, str]:
    user = get_user_model().objects.create_user(username, password="pw-0123456789")
    session = requests.Session()
    session.headers["Authorization"] = f"Token {Token.objects.create(user=user).key}"
    return session, live_server.url + reverse("webtools:user-plugin-settings", args=["web_search"])


def both_keys_saved(session, url, round_: int) -> list[int]:
    brave = {"engine": "brave", "api_key": BRAVE_KEY.format(round_)}
    tavily = {"engine": "tavily", "api_key": TAVILY_KEY.format(round_)}
    answers = at_once(lambda: session.put(url, json=brave, timeout=60),
                      lambda: session.put(url, json=tavily, timeout=60))
    return [answer.status_code for answer in answers]


def test_two_first_saves_at_once_both_succeed_and_keep_both_keys(live_server, operator):
    for round_ in range(ROUNDS):
        session, url = api_session(live_server, f"first-{round_}")
        assert both_keys_saved(session, url, round_) == [200, 200]
        row = UserPluginSettings.objects.get(user__username=f"first-{round_}")
        assert row.get_secrets() == {"api_key@brave": BRAVE_KEY.format(round_),
                                     "api_key@tavily": TAVILY_KEY.format(round_)}


def test_two_saves_of_an_existing_row_at_once_keep_both_keys(live_server, operator):
    session, url = api_session(live_server, "again")
    assert session.put(url, json={"engine": "brave", "api_key": BRAVE_KEY.format("x")}, timeout=60).ok
    for round_ in range(ROUNDS):
        assert both_keys_saved(session, url, round_) == [200, 200]
        row = UserPluginSettings.objects.get(user__username="again")
        assert row.get_secrets() == {"api_key@brave": BRAVE_KEY.format(round_),
                                     "api_key@tavily": TAVILY_KEY.format(round_)}


def test_the_options_page_and_keys_per_engine_at_once_keep_both_keys_and_both_are_in_the_history(operator):
    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    change = reverse("admin:webtools_pluginoptions_change", args=[operator.pk])
    scopes = reverse("admin:webtools_pluginoptions_scopes", args=[operator.pk])
    clients = [Client(), Client()]
    for client in clients:
        client.force_login(admin)
    for round_ in range(ROUNDS):
        main_key, kept_key = f"brave-operator-{round_}-0123456789", f"tavily-operator-{round_}-0123456789"
        answers = at_once(
            lambda: clients[0].post(change, {**FORM, "engine": "brave", "api_key": main_key}),
            lambda: clients[1].post(scopes, {"engine": "tavily", "api_key": kept_key}),
        )
        assert [answer.status_code for answer in answers] == [302, 302]
        operator.refresh_from_db()
        assert operator.get_secrets() == {"api_key@brave": main_key, "api_key@tavily": kept_key}
    history = [entry.get_change_message() for entry in LogEntry.objects.filter(object_id=str(operator.pk))]
    assert len(history) == 2 * ROUNDS
    assert sum("API key" in message and "Tavily" in message for message in history) == ROUNDS, history
    assert not [message for message in history if "operator-" in message]
