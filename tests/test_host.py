"""The database seam: what start_turn reads at turn start and which clients the tools get."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group

from tests.servers import LoopbackServer, Reply, redirect
from webtools.host import load_options, start_turn, user_roles
from webtools.models import PluginOptions, UserToolSetting
from webtools.net import AddressNotAllowed, AddressPolicy

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return get_user_model().objects.create_user("hana")


def test_context_fetch_refuses_private_addresses_by_default(user, demo_plugins):
    with LoopbackServer({"/": Reply(200, {}, "internal")}) as server, start_turn(user) as turn:
        with pytest.raises(AddressNotAllowed, match="not allowed"):
            turn.fetch.request("GET", server.url("/"), timeout=5, max_bytes=1000)


def test_context_fetch_refuses_a_redirect_to_a_private_address(user, demo_plugins, settings):
    # 127.0.0.1 stands in for a public host; 127.0.0.2 stays private.
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ADDRESS_POLICY": AddressPolicy.with_overrides(allow=["127.0.0.1/32"])}
    with LoopbackServer({"/": Reply(200, {}, "internal")}, host="127.0.0.2") as private:
        with LoopbackServer({"/go": redirect(private.url("/"))}) as public, start_turn(user) as turn:
            with pytest.raises(AddressNotAllowed):
                turn.fetch.follow("GET", public.url("/go"), timeout=5)
            assert private.hits("/") == 0


def test_context_fetch_reaches_private_addresses_when_the_operator_allows_them(user, demo_plugins, settings):
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_PRIVATE_NETWORKS": True}
    with LoopbackServer({"/": Reply(200, {}, "internal")}) as server, start_turn(user) as turn:
        assert turn.fetch.request("GET", server.url("/"), timeout=5, max_bytes=1000).content == b"internal"


def test_context_http_for_operator_urls_is_the_plain_client(user, demo_plugins):
    with LoopbackServer({"/": Reply(200, {}, "searxng")}) as server, start_turn(user) as turn:
        assert turn.http.request("GET", server.url("/"), timeout=5, max_bytes=1000).content == b"searxng"


def test_roles_hold_user_staff_superuser_and_group_names():
    person = get_user_model().objects.create_user("ivan", is_staff=True)
    person.groups.add(Group.objects.create(name="researchers"))
    assert user_roles(person) == {"user", "staff", "researchers"}
    boss = get_user_model().objects.create_superuser("jo")
    assert user_roles(boss) == {"user", "staff", "superuser"}
    assert user_roles(AnonymousUser()) == frozenset()


def test_roles_are_worked_out_once_when_the_turn_starts(demo_plugins):
    person = get_user_model().objects.create_user("kim")
    turn = start_turn(person)
    person.groups.add(Group.objects.create(name="late"))
    assert turn.roles == {"user"}


def test_stored_switches_pick_the_turns_tools(user, demo_plugins):
    UserToolSetting.objects.create(user=user, tool="echo", enabled=False)
    UserToolSetting.objects.create(user=user, tool="shout", enabled=True)
    assert [t.name for t in start_turn(user).tools] == ["shout", "fixed", "quiet"]


def test_unsaved_options_mean_defaults_and_not_configured_when_the_operator_must_choose(demo_plugins):
    loaded = load_options(demo_plugins["demo"])
    assert loaded.configured is False and loaded.saved is False and loaded.values["greeting"] == "hello"
    PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    assert load_options(demo_plugins["demo"]).configured is True


def test_unsaved_options_whose_defaults_validate_are_configured():
    from webtools.plugins.web_fetch import WebFetchPlugin

    loaded = load_options(WebFetchPlugin())
    assert loaded.configured is True and loaded.saved is False and loaded.values["max_characters"] == 20000
