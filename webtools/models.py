"""What webtools keeps: plugin options, user tool switches and user plugin settings.

Secrets (API keys) are held apart from plain values, as one Fernet token per row, and are only ever
decrypted to build a turn or to validate a form; nothing renders them.

May import the base (``crypto``) and the runtime's pure helpers (``runtime.json_input``); never the
host or the admin, which import this. A row's display name is given by the admin (``PluginOptions``).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from . import crypto
from .runtime.json_input import readable


class SecretsMixin(models.Model):
    """Encrypted secrets beside plain ``values``."""

    values = models.JSONField(_("values"), default=dict, blank=True)
    encrypted_secrets = models.TextField(_("encrypted secrets"), blank=True, default="", editable=False)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db, field_names, values):
        # A value saved before NUL and lone surrogates were refused would make every page that shows
        # it fail to encode (a 500); it is read back repaired.
        instance = super().from_db(db, field_names, values)
        if isinstance(instance.__dict__.get("values"), (dict, list, str)):
            instance.values = readable(instance.values)
        return instance

    @classmethod
    def locked(cls, **lookup):
        """The row matching ``lookup`` (made when missing), held until the caller's transaction ends.

        Call it inside ``transaction.atomic()`` and read, change and save the row there: a second save
        of the same row waits for the first and then reads what it wrote, so neither loses the other's
        keys, and two first saves never both insert the row. PostgreSQL holds the row with ``SELECT
        ... FOR UPDATE``; SQLite serialises writing transactions when they begin ``IMMEDIATE``
        (docs/deploy.md).
        """
        cls.objects.get_or_create(**lookup)
        return cls.objects.select_for_update().get(**lookup)

    def get_secrets(self) -> dict[str, str]:
        return crypto.decrypt_json(self.encrypted_secrets)

    def set_secrets(self, secrets: dict[str, str]) -> None:
        self.encrypted_secrets = crypto.encrypt_json({k: v for k, v in secrets.items() if v})

    def secrets_set(self) -> dict[str, bool]:
        """Which secrets are set (names only: the values never leave this model). A secret kept per
        engine is named ``api_key@brave``."""
        return {name: True for name in self.get_secrets()}

    def rotate_secrets(self) -> bool:
        if not self.encrypted_secrets:
            return False
        self.encrypted_secrets = crypto.rotate(self.encrypted_secrets)
        return True


class PluginOptions(SecretsMixin):
    """The operator's options of one plugin, edited in the admin and validated by the plugin's form."""

    plugin = models.CharField(_("plugin"), max_length=100, unique=True)

    class Meta:
        verbose_name = _("plugin options")
        verbose_name_plural = _("plugin options")
        ordering = ["plugin"]

    #: The plugin's display name, given by whoever loaded the row and knows the plugins (the admin:
    #: the model does not ask the host, which imports the models); the plugin id until then.
    display_name = ""

    def __str__(self) -> str:
        return str(self.display_name or self.plugin)


class UserToolSetting(models.Model):
    """A user's choice to switch a tool on or off; honoured only for tools with ``user_toggle``."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="webtools_tool_settings",
        verbose_name=_("user"),
    )
    tool = models.CharField(_("tool"), max_length=100)
    enabled = models.BooleanField(_("enabled"))
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("user tool setting")
        verbose_name_plural = _("user tool settings")
        constraints = [models.UniqueConstraint(fields=["user", "tool"], name="webtools_user_tool_unique")]

    def __str__(self) -> str:
        return f"{self.user} · {self.tool}: {'on' if self.enabled else 'off'}"


class UserPluginSettings(SecretsMixin):
    """A user's settings of one plugin (for plugins that have user settings)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="webtools_plugin_settings",
        verbose_name=_("user"),
    )
    plugin = models.CharField(_("plugin"), max_length=100)

    class Meta:
        verbose_name = _("user plugin settings")
        verbose_name_plural = _("user plugin settings")
        constraints = [models.UniqueConstraint(fields=["user", "plugin"], name="webtools_user_plugin_unique")]

    def __str__(self) -> str:
        return f"{self.user} · {self.plugin}"


class Usage(models.Model):
    """Requests sent for one user with one tool and engine on one UTC day: the operator's view of use."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("user"),
    )
    tool = models.CharField(_("tool"), max_length=100)
    engine = models.CharField(_("engine"), max_length=100, blank=True)
    day = models.DateField(_("day (UTC)"))
    operator_key = models.BooleanField(
        _("operator's key"), help_text=_("Spent the operator's key (or the server's address), not the user's.")
    )
    requests = models.PositiveIntegerField(_("requests"), default=0)

    class Meta:
        verbose_name = _("usage")
        verbose_name_plural = _("usage")
        ordering = ["-day", "tool", "engine"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "tool", "engine", "day", "operator_key"], name="webtools_usage_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} · {self.user or '-'} · {self.tool} {self.engine}: {self.requests}"


class DailyCount(models.Model):
    """A counter of one UTC day (a user's searches on the operator's key), incremented atomically."""

    name = models.CharField(_("name"), max_length=200)
    day = models.DateField(_("day (UTC)"))
    count = models.PositiveIntegerField(_("count"), default=0)

    class Meta:
        verbose_name = _("daily count")
        verbose_name_plural = _("daily counts")
        constraints = [models.UniqueConstraint(fields=["name", "day"], name="webtools_daily_count_unique")]

    def __str__(self) -> str:
        return f"{self.name} on {self.day}: {self.count}"


class EnginePrice(models.Model):
    """What the operator pays an engine, for the usage page's cost estimate."""

    engine = models.CharField(_("engine"), max_length=100, unique=True)
    price_per_1000 = models.DecimalField(
        _("price per 1,000 requests"), max_digits=10, decimal_places=4,
        help_text=_("In your billing currency; the estimate multiplies it by the requests on your key."),
    )

    class Meta:
        verbose_name = _("engine price")
        verbose_name_plural = _("engine prices")
        ordering = ["engine"]

    def __str__(self) -> str:
        return f"{self.engine}: {self.price_per_1000} per 1,000"
