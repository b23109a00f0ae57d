"""The operator's admin: plugin options validated on save, secrets write-only."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from webtools.models import PluginOptions, UserPluginSettings

pytestmark = pytest.mark.django_db

SECRET = "admin-key-9876543210"


@pytest.fixture
def admin_client(client, demo_plugins):
    user = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client.force_login(user)
    return client


def change_url(row) -> str:
    return reverse("admin:webtools_pluginoptions_change", args=[row.pk])


def post(admin_client, row, **data):
    body = {"mode": "plain", "greeting": "hello", "echo_default": "on", "api_key": "", **data}
    return admin_client.post(change_url(row), body)


def test_changelist_lists_one_row_per_plugin_with_options(admin_client):
    response = admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    assert response.status_code == 200
    assert list(PluginOptions.objects.values_list("plugin", flat=True)) == ["demo"]
    assert "not set up yet" in response.content.decode()


def test_a_row_the_admin_created_on_first_view_is_not_a_system_error(admin_client):
    from webtools import checks

    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    assert checks.check_plugin_options(databases=["default"]) == []
    PluginOptions.objects.filter(plugin="demo").update(values={"mode": "keyed"})
    assert [e.id for e in checks.check_plugin_options(databases=["default"])] == ["webtools.E002"]


def test_saving_valid_options_stores_values_and_encrypted_secret(admin_client):
    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="demo")
    response = post(admin_client, row, mode="keyed", api_key=SECRET)
    assert response.status_code == 302
    row.refresh_from_db()
    assert row.values["mode"] == "keyed" and row.get_secrets() == {"api_key@keyed": SECRET}
    assert SECRET not in row.encrypted_secrets


def test_invalid_options_are_refused_with_the_plugins_message_and_nothing_is_saved(admin_client):
    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="demo")
    response = post(admin_client, row, mode="keyed")
    assert response.status_code == 200
    assert "The keyed mode needs an API key." in response.content.decode()
    row.refresh_from_db()
    assert row.values == {}


def test_change_page_never_shows_the_secret_only_whether_it_is_set(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": SECRET})
    row.save()
    page = admin_client.get(change_url(row)).content.decode()
    assert SECRET not in page
    assert "Kept for Keyed, hidden." in page
    # The key field carries its show-when rule for the admin's script.
    assert "data-show-when" in page and "webtools/show_when.js" in page


def test_blank_secret_keeps_the_stored_one_so_keyed_options_still_validate(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": SECRET})
    row.save()
    assert post(admin_client, row, mode="keyed", greeting="hi").status_code == 302
    row.refresh_from_db()
    assert row.get_secrets() == {"api_key@keyed": SECRET} and row.values["greeting"] == "hi"


def test_secret_can_be_replaced_and_cleared(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": SECRET})
    row.save()
    post(admin_client, row, mode="keyed", api_key="new-key-0000000000")
    row.refresh_from_db()
    assert row.get_secrets() == {"api_key@keyed": "new-key-0000000000"}
    post(admin_client, row, mode="plain")
    post(admin_client, row, mode="plain", api_key_clear="on")  # the plain mode has no key to clear
    row.refresh_from_db()
    assert row.get_secrets() == {"api_key@keyed": "new-key-0000000000"}


def test_a_value_that_does_not_apply_to_the_chosen_mode_is_not_stored(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    assert post(admin_client, row, mode="plain", api_key="typed-but-hidden-123").status_code == 302
    row.refresh_from_db()
    assert row.get_secrets() == {} and row.encrypted_secrets == ""


def test_clearing_a_secret_that_the_options_need_is_refused(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": SECRET})
    row.save()
    response = post(admin_client, row, mode="keyed", api_key_clear="on")
    assert "The keyed mode needs an API key." in response.content.decode()
    row.refresh_from_db()
    assert row.get_secrets() == {"api_key": SECRET}  # untouched: still as saved


def test_operators_cannot_add_rows_by_hand(admin_client):
    assert admin_client.get(reverse("admin:webtools_pluginoptions_add")).status_code == 403


def test_user_plugin_settings_page_shows_only_which_secrets_are_set(admin_client):
    user = get_user_model().objects.get(username="root")
    row = UserPluginSettings(user=user, plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": "users-own-key-123456"})
    row.save()
    page = admin_client.get(reverse("admin:webtools_userpluginsettings_change", args=[row.pk])).content.decode()
    assert "users-own-key-123456" not in page and "api_key" in page


def test_test_page_runs_a_call_with_the_saved_options_and_saves_nothing(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    url = reverse("admin:webtools_pluginoptions_test", args=[row.pk])
    assert 'href="%s"' % url in admin_client.get(change_url(row)).content.decode()
    page = admin_client.get(url).content.decode()
    assert '<option value="echo"' in page
    response = admin_client.post(url, {"tool": "shout", "input": '{"text": "hey"}'})
    assert '<pre id="test-output"' in response.content.decode() and "HEY" in response.content.decode()
    row.refresh_from_db()
    assert row.values == {"mode": "plain"}


def test_test_page_shows_the_exact_error_without_the_key(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    row.set_secrets({"api_key": SECRET})
    row.save()
    url = reverse("admin:webtools_pluginoptions_test", args=[row.pk])
    page = admin_client.post(url, {"tool": "secret_echo", "input": "{}"}).content.decode()
    assert "failed with key [redacted]" in page and SECRET not in page


def test_test_page_refuses_input_that_is_not_a_json_object(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    url = reverse("admin:webtools_pluginoptions_test", args=[row.pk])
    page = admin_client.post(url, {"tool": "echo", "input": "[1, 2]"}).content.decode()
    assert "Enter a JSON object." in page and "test-output" not in page


def test_a_key_with_a_line_break_is_refused_on_the_field(admin_client):
    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="demo")
    response = post(admin_client, row, mode="keyed", api_key="admin-key\r\n98765")
    assert response.status_code == 200
    page = response.content.decode()
    assert "without spaces or line breaks" in page and "98765" not in page
    row.refresh_from_db()
    assert row.values == {} and not row.encrypted_secrets


def test_without_an_encryption_key_a_secret_is_a_field_error_not_a_crash(admin_client, settings):
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENCRYPTION_KEYS": []}
    admin_client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="demo")
    response = post(admin_client, row, mode="keyed", api_key=SECRET)
    assert response.status_code == 200
    page = response.content.decode()
    assert "This cannot be saved yet. No encryption key is set." in page and "WEBTOOLS_ENCRYPTION_KEYS" in page
    assert SECRET not in page
    row.refresh_from_db()
    assert row.values == {} and row.encrypted_secrets == ""
    # Options without a secret still save.
    assert post(admin_client, row, mode="plain").status_code == 302


def test_test_page_shows_what_the_model_reads_beside_the_raw_output_and_citations(admin_client):
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    url = reverse("admin:webtools_pluginoptions_test", args=[row.pk])
    page = admin_client.post(url, {"tool": "echo", "input": '{"text": "hey"}'}).content.decode()
    model_text = page.split('<pre id="test-model-text">')[1].split("</pre>")[0]
    raw = page.split('<pre id="test-output">')[1].split("</pre>")[0]
    # echo is untrusted: the model reads it inside the boundary, the raw output is the bare result.
    assert "hey" in model_text and "hey" in raw and model_text != raw
    assert "Wrapped as untrusted web content" in page and "Citations" in page


def test_test_page_renders_a_form_wide_error(admin_client, monkeypatch):
    from webtools import admin as webtools_admin
    from webtools.exceptions import TurnError

    def refuse(*args, **kwargs):
        raise TurnError("This turn cannot start: the daily limit is reached.")

    monkeypatch.setattr(webtools_admin, "start_turn", refuse)
    row = PluginOptions.objects.create(plugin="demo", values={"mode": "plain"})
    url = reverse("admin:webtools_pluginoptions_test", args=[row.pk])
    page = admin_client.post(url, {"tool": "echo", "input": '{"text": "hey"}'}).content.decode()
    assert 'id="test-form-errors"' in page and "the daily limit is reached" in page


def test_test_page_prefills_each_tools_example_input(client, settings):
    admin = get_user_model().objects.create_superuser("op", password="pw-op-123")
    client.force_login(admin)
    client.get(reverse("admin:webtools_pluginoptions_changelist"))
    row = PluginOptions.objects.get(plugin="web_fetch")
    page = client.get(reverse("admin:webtools_pluginoptions_test", args=[row.pk])).content.decode()
    assert "https://example.com/" in page.split('name="input"')[1].split("</textarea>")[0]
    search = PluginOptions.objects.get(plugin="web_search")
    page = client.get(reverse("admin:webtools_pluginoptions_test", args=[search.pk])).content.decode()
    assert 'id="wt-test-examples"' in page and "Django web framework" in page


def test_options_list_says_per_tool_whether_users_have_it_and_offers_no_bulk_delete(admin_client):
    page = admin_client.get(reverse("admin:webtools_pluginoptions_changelist")).content.decode()
    assert "Echo: on by default, users may switch it" in page
    assert "Shout: off by default, users may switch it" in page
    assert "Fixed: on by default, users cannot switch it" in page
    assert "delete_selected" not in page and 'name="action"' not in page


def test_the_admin_names_each_row_by_its_plugin_in_lists_titles_and_history(admin_client):
    from django.contrib.admin.models import LogEntry

    listing = admin_client.get(reverse("admin:webtools_pluginoptions_changelist")).content.decode()
    row = PluginOptions.objects.get(plugin="demo")
    assert str(row) == "demo"  # the model alone does not know the plugins; the admin names it
    assert f'<a href="{change_url(row)}">Demo</a>' in listing
    assert "<title>Demo | Change plugin options" in admin_client.get(change_url(row)).content.decode()
    test_page = admin_client.get(reverse("admin:webtools_pluginoptions_test", args=[row.pk])).content.decode()
    assert f'<a href="{change_url(row)}">Demo</a>' in test_page  # its breadcrumbs
    assert post(admin_client, row).status_code == 302
    assert LogEntry.objects.get().object_repr == "Demo"
