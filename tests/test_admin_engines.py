"""The admin's Test page for web search, once per engine, against a loopback stub that ``ENGINE_URLS``
(or the base URL) points at, serving the engine's real recorded answer. Nothing reaches the internet."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.html import escape

from webtools.models import PluginOptions
from webtools.plugins.web_search import WebSearchPlugin
from webtools.plugins.web_search.engines import ENGINES

from .engine_contract import recorded_path
from .servers import LoopbackServer, Reply

pytestmark = pytest.mark.django_db

KEY = "admin-test-key-0123456789abcdef"


@pytest.fixture
def admin_client(client, use_plugins):
    use_plugins(WebSearchPlugin())
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    return client


@pytest.fixture
def stub():
    server = LoopbackServer().start()
    yield server
    server.stop()


def configure(engine, server, settings) -> str:
    """Save options for ``engine`` pointing at ``server``; the admin Test page URL."""
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {engine.id: server.url(f"/{engine.id}")}}
    values = {"engine": engine.id, "max_results": 5, "cx": "cx-0123"}
    if engine.needs_base_url:
        values["base_url"] = server.origin
    row = PluginOptions.objects.create(plugin="web_search", values=values)
    if engine.needs_key:
        row.set_secrets({"api_key": KEY})
        row.save()
    return reverse("admin:webtools_pluginoptions_test", args=[row.pk])


def run_test_page(admin_client, url) -> str:
    response = admin_client.post(url, {"tool": "web_search", "input": '{"query": "django orm"}'})
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.id)
def test_test_page_searches_through_a_local_stub_serving_the_recorded_answer(engine, admin_client, stub, settings):
    path = recorded_path(engine)
    content_type = "text/html; charset=utf-8" if path.suffix == ".html" else "application/json"
    stub.route("*", Reply(200, {"Content-Type": content_type}, path.read_bytes()))

    page = run_test_page(admin_client, configure(engine, stub, settings))

    first_url = engine.parse(path.read_text(encoding="utf-8"))[0].url
    assert 'id="test-outcome">Result<' in page, page[page.find("test-output") - 200:][:600]
    assert escape(first_url) in page
    assert KEY not in page
    assert stub.requests, "the search did not reach the stub"


def test_test_page_shows_an_error_serpstack_gives_with_http_200(admin_client, stub, settings):
    engine = next(e for e in ENGINES if e.id == "serpstack")
    body = json.dumps({"success": False, "error": {"code": 104, "type": "usage_limit_reached"}})
    stub.route("*", Reply(200, {"Content-Type": "application/json"}, body))

    page = run_test_page(admin_client, configure(engine, stub, settings))

    assert 'id="test-outcome">Error<' in page and escape(engine.quota_message()) in page
    assert KEY not in page
