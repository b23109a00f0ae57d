"""Secrets at rest, key rotation, uniqueness, and the system checks."""
from __future__ import annotations

import io

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import IntegrityError, connection

from webtools import checks
from webtools.exceptions import WebtoolsConfigurationError
from webtools.models import PluginOptions, UserPluginSettings, UserToolSetting

SECRET = "brave-key-ABCDEFGHIJ0123456789"


@pytest.fixture
def keys(settings):
    def use(*keys):
        settings.WEBTOOLS = {**settings.WEBTOOLS, "ENCRYPTION_KEYS": list(keys)}

    return use


@pytest.mark.django_db
def test_secrets_are_encrypted_at_rest(keys):
    keys(Fernet.generate_key().decode())
    row = PluginOptions(plugin="demo")
    row.set_secrets({"api_key": SECRET})
    row.save()
    with connection.cursor() as cursor:
        cursor.execute('SELECT encrypted_secrets, "values" FROM webtools_pluginoptions WHERE id = %s', [row.pk])
        raw = " ".join(str(v) for v in cursor.fetchone())
    assert SECRET not in raw
    assert PluginOptions.objects.get(pk=row.pk).get_secrets() == {"api_key": SECRET}


@pytest.mark.django_db
def test_rotate_keys_re_encrypts_every_secret_with_the_first_key(keys):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    keys(old)
    user = get_user_model().objects.create_user("u")
    options = PluginOptions(plugin="demo")
    options.set_secrets({"api_key": SECRET})
    options.save()
    mine = UserPluginSettings(user=user, plugin="demo")
    mine.set_secrets({"api_key": "user-secret-0123456789"})
    mine.save()
    keys(new, old)
    out = io.StringIO()
    call_command("webtools", "rotate-keys", stdout=out)
    assert "2 row(s)" in out.getvalue()
    keys(new)  # the old key is gone: everything must still open
    assert PluginOptions.objects.get(pk=options.pk).get_secrets() == {"api_key": SECRET}
    assert UserPluginSettings.objects.get(pk=mine.pk).get_secrets() == {"api_key": "user-secret-0123456789"}


@pytest.mark.django_db
def test_secret_written_with_a_removed_key_is_a_clear_configuration_error(keys):
    keys(Fernet.generate_key().decode())
    row = PluginOptions(plugin="demo")
    row.set_secrets({"api_key": SECRET})
    row.save()
    keys(Fernet.generate_key().decode())
    with pytest.raises(WebtoolsConfigurationError, match="cannot be decrypted") as info:
        PluginOptions.objects.get(pk=row.pk).get_secrets()
    assert SECRET not in str(info.value)


@pytest.mark.django_db
def test_tool_switch_is_unique_per_user_and_tool():
    user = get_user_model().objects.create_user("u")
    UserToolSetting.objects.create(user=user, tool="web_search", enabled=True)
    with pytest.raises(IntegrityError):
        UserToolSetting.objects.create(user=user, tool="web_search", enabled=False)


def test_missing_key_is_an_error_with_debug_off_and_a_warning_with_debug_on(settings, keys):
    keys()
    settings.DEBUG = False
    errors = checks.check_encryption_keys()
    assert [e.id for e in errors] == ["webtools.E001"]
    settings.DEBUG = True
    warnings = checks.check_encryption_keys()
    assert [w.id for w in warnings] == ["webtools.W002"]
    assert "Web search" in warnings[0].msg and "WEBTOOLS_ENCRYPTION_KEYS" in warnings[0].hint


def test_missing_key_is_no_concern_when_no_plugin_has_a_secret(settings, keys, use_plugins):
    from tests.plugins import QuietPlugin

    use_plugins(QuietPlugin())
    keys()
    settings.DEBUG = False
    assert checks.check_encryption_keys() == []


def test_invalid_key_is_a_system_error(settings, keys):
    keys("not-a-fernet-key")
    settings.DEBUG = False
    assert [e.id for e in checks.check_encryption_keys()] == ["webtools.E001"]


def test_private_networks_allowed_with_debug_off_is_a_system_warning(settings):
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_PRIVATE_NETWORKS": True}
    settings.DEBUG = False
    assert [w.id for w in checks.check_private_networks()] == ["webtools.W001"]
    settings.DEBUG = True
    assert checks.check_private_networks() == []


@pytest.mark.django_db
def test_stored_options_that_no_longer_validate_are_a_system_error(demo_plugins):
    PluginOptions.objects.create(plugin="demo", values={"mode": "keyed"})
    errors = checks.check_plugin_options(databases=["default"])
    assert [e.id for e in errors] == ["webtools.E002"]
    assert "api_key" in errors[0].msg and "needs an API key" in errors[0].msg
