"""Keys per engine: a secret saved before keys were kept per engine (a bare ``api_key``) moves to the
engine its row was saved with (``api_key@brave``), and values that do not apply to that engine go.

Rows no configured key can open are left as they are: their secrets are unreadable either way.
"""
from django.db import migrations


def keys_per_engine(apps, schema_editor):
    from django.apps import apps as live_apps

    from webtools import crypto
    from webtools.exceptions import WebtoolsConfigurationError
    from webtools.host import applies, scope_secrets

    plugins = live_apps.get_app_config("webtools").plugins
    for model in ("PluginOptions", "UserPluginSettings"):
        for row in apps.get_model("webtools", model).objects.all():
            plugin = plugins.get(row.plugin)
            show_when = plugin.show_when if plugin else {}
            if not show_when:
                continue
            values = {k: v for k, v in row.values.items() if applies(k, row.values, show_when)}
            try:
                stored = crypto.decrypt_json(row.encrypted_secrets)
                secrets = scope_secrets(stored, row.values, show_when)
                token = crypto.encrypt_json(secrets) if secrets != stored else row.encrypted_secrets
            except WebtoolsConfigurationError:
                token = row.encrypted_secrets
            if values != row.values or token != row.encrypted_secrets:
                row.values, row.encrypted_secrets = values, token
                row.save(update_fields=["values", "encrypted_secrets"])


class Migration(migrations.Migration):

    dependencies = [
        ("webtools", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(keys_per_engine, migrations.RunPython.noop),
    ]
