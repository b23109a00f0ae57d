"""Small things a new operator meets first: the words of the engine links and the example PUBLIC_URL."""
from __future__ import annotations

import pytest

from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.forms import engine_field


def test_each_key_link_takes_the_article_its_engine_name_takes():
    links = {engine.id: str(help["link"]) for engine in ENGINES
             for help in [engine_field(ENGINES, [(e.id, e.name) for e in ENGINES]).choice_help.get(engine.id)]
             if help and help["link"]}
    assert links["exa"] == "Get an Exa API key"
    assert links["brave"] == "Get a Brave API key" and links["youcom"].startswith("Get a You")
    assert all(link.startswith(("Get a ", "Get an ")) and link.endswith(" API key") for link in links.values())
    for engine_id, link in links.items():
        name = link.removeprefix("Get an ").removeprefix("Get a ").removesuffix(" API key")
        assert link.startswith("Get an " if name[0].lower() in "aeiou" else "Get a "), engine_id


@pytest.mark.parametrize("url, warned", [
    ("https://chat.example.com/bot", True),     # the README's, unchanged
    ("https://example.org/", True),
    ("http://bots.example.net./about", True),
    ("https://chat.mycompany.com/bot", False),
    ("https://notexample.com/bot", False),
    ("", False),                                 # empty: `webtools check` says so
    ("not a url at all", False),
])
def test_check_warns_while_public_url_is_an_example_address(settings, url, warned):
    from webtools.checks import check_public_url

    settings.WEBTOOLS = {**settings.WEBTOOLS, "PUBLIC_URL": url}
    found = check_public_url()
    assert [w.id for w in found] == (["webtools.W030"] if warned else [])
    if warned:
        assert url in found[0].msg and "site owners" in found[0].msg


@pytest.mark.django_db
def test_an_engine_price_names_an_installed_engine_and_is_never_negative(admin_client):
    from django.urls import reverse

    from webtools.models import EnginePrice

    url = reverse("admin:webtools_engineprice_add")
    page = admin_client.get(url).content.decode()
    assert '<select name="engine"' in page and '<option value="brave">Brave (brave)</option>' in page
    bad = admin_client.post(url, {"engine": "bravee", "price_per_1000": "-1"})
    errors = bad.context["adminform"].form.errors
    assert "bravee is not one of the available choices" in " ".join(errors["engine"])
    assert "greater than or equal to 0" in " ".join(errors["price_per_1000"])  # both at once
    assert not EnginePrice.objects.exists()
    done = admin_client.post(url, {"engine": "brave", "price_per_1000": "5.00"})
    assert done.status_code == 302
    assert EnginePrice.objects.get().engine == "brave"


@pytest.mark.django_db
def test_a_key_typed_into_a_form_with_another_error_is_kept_and_never_shown(admin_client):
    from django.urls import reverse

    from webtools.models import PluginOptions

    key = "BSA-typed-once-0123456789"
    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_search")
    url = reverse("admin:webtools_pluginoptions_change", args=[row.pk])
    form = {"engine": "brave", "admin_engine_roles": "user", "enabled_by_default": "on", "user_toggle": "on",
            "user_engines": "on", "max_results": "5", "safe_search": "moderate"}
    sent_back = admin_client.post(url, {**form, "api_key": key, "country": "USA"})  # too long
    assert sent_back.status_code == 200
    page = sent_back.content.decode()
    assert "at most 2 characters" in page
    assert key not in page  # never echoed...
    assert "Entered, not saved yet" in page  # ...but kept, and the page says so
    carried = sent_back.context["adminform"].form.data["api_key__pending"]
    assert carried and key not in carried and f'value="{carried}"' in page
    row.refresh_from_db()
    assert row.get_secrets() == {}  # nothing saved yet
    done = admin_client.post(url, {**form, "api_key": "", "api_key__pending": carried, "country": "US"})
    assert done.status_code == 302, done.content.decode()[:1500]
    row.refresh_from_db()
    assert row.get_secrets() == {"api_key@brave": key}
    # A token that is not ours carries nothing: the key stays required.
    row.set_secrets({})
    row.save()
    forged = admin_client.post(url, {**form, "api_key": "", "api_key__pending": "not-a-token", "country": "US"})
    assert forged.status_code == 200 and "api_key" in forged.context["adminform"].form.errors
    row.refresh_from_db()
    assert row.get_secrets() == {}
