"""The plugin contract: what a tool plugin declares and how it registers its tools and ingesters.

A plugin is a class listed in ``settings.WEBTOOLS["PLUGINS"]``. Its options (edited by the operator in
the Django admin) and its user settings (edited by each user through the API) are Django forms, so
validation, messages and rendering are Django's own. Secret fields are ``SecretField``: the shell stores
them encrypted and never shows their value.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from . import json_input
from .ingesters import Ingester, Ingesters
from .tools import Registry, Tool


#: A key is printable ASCII without spaces: what every issuer hands out. Anything else (a line break
#: that would split an HTTP header, a lone surrogate, a space from a bad paste) is refused on save.
_KEY_CHARACTERS = re.compile(r"[\x21-\x7e]*")


def validate_key_characters(value: str) -> None:
    """Refuse a secret that is not printable ASCII without spaces. The message never quotes it."""
    if not _KEY_CHARACTERS.fullmatch(value):
        raise ValidationError(
            "Enter the key as it was issued: letters, digits and punctuation only, without spaces or line breaks.",
            code="invalid_characters",
        )


class SecretField(forms.CharField):
    """A secret such as an API key: written, replaced or cleared, never read back.

    A blank value when editing keeps the stored secret; the shell offers a separate "clear" choice.
    A value must be printable ASCII without spaces or line breaks, of ``min_length`` to ``max_length``
    characters (8 to 1000 unless the plugin says otherwise); leading and trailing whitespace from a
    paste is dropped first.
    """

    widget = forms.PasswordInput(render_value=False)
    default_validators = [validate_key_characters]

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", True)
        kwargs.setdefault("min_length", 8)
        kwargs.setdefault("max_length", 1000)
        super().__init__(**kwargs)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        # No maxlength/minlength attributes: a browser would cut a too-long paste silently.
        return {}


class CommaListField(forms.Field):
    """A list of strings, typed one per line (or comma separated) in a form, or given as a JSON list."""

    widget = forms.Textarea(attrs={"rows": 3})

    def to_python(self, value: Any) -> list[str]:
        if value in (None, ""):
            return []
        if isinstance(value, str):
            items = value.replace(",", "\n").splitlines()
        elif isinstance(value, (list, tuple)):
            items = value
        else:
            raise forms.ValidationError("Enter a list.", code="invalid")
        out = []
        for item in items:
            if not isinstance(item, str):
                raise forms.ValidationError("Each entry must be text.", code="invalid")
            if json_input.text_problem(item):
                raise forms.ValidationError(json_input.UNSTORABLE, code="invalid")
            if item.strip():
                out.append(item.strip())
        return out

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return "\n".join(value)
        return value


class LimitField(forms.IntegerField):
    """A limit an operator sets: a whole number, 0 for no limit, left blank for the documented default."""

    def __init__(self, *, initial: int, max_value: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(initial=initial, min_value=0, max_value=max_value, **kwargs)

    def to_python(self, value: Any) -> int:
        value = super().to_python(value)
        return self.initial if value is None else value


def cache_ttl_field(what: str) -> LimitField:
    """The ``cache_ttl_seconds`` option every plugin with a shared cache has (off by default)."""
    return LimitField(
        initial=0, max_value=7 * 24 * 3600, label="Shared cache (seconds)",
        help_text=f"Keep {what} this long in the shared cache, for every user whose rules give the same "
        "result. 0 turns the cache off. See the privacy note in docs/deploy.md.",
    )


def scoped(name: str, scope: str) -> str:
    """The name a field is kept under for one value of its controlling field: ``api_key@brave``."""
    return f"{name}@{scope}"


def secret_fields(form_class: type[forms.BaseForm]) -> list[str]:
    """The names of a settings form's secret fields."""
    return [name for name, f in form_class.base_fields.items() if isinstance(f, SecretField)]


@dataclass
class PluginSetup:
    """What ``Plugin.setup`` receives: the validated options and the places to register into."""

    plugin_id: str
    options: Mapping[str, Any]
    registry: Registry
    ingesters: Ingesters
    configured: bool = True
    errors: list[str] = field(default_factory=list)
    #: Whether the operator ever saved these options (``configured`` is False for options never saved
    #: when the operator must choose something, such as web search's engine).
    saved: bool = True

    def register_tool(self, tool: Tool) -> None:
        self.registry.register(tool, self.plugin_id)

    def register_ingester(self, ingester: Ingester) -> None:
        self.ingesters.register(ingester)


class Plugin:
    """Base class of a tool plugin. Subclasses set ``id`` and ``name`` and override what they need."""

    #: Stable identifier used in URLs and the database, such as ``"web_search"``.
    id: str = ""
    #: Human name shown in the admin and the settings page.
    name: str = ""
    #: The operator's options, a ``django.forms.Form`` whose ``clean()`` holds cross-field rules.
    options_form: type[forms.Form] | None = None
    #: Field -> (controlling field, values): a field shows only when the controller has one of the values.
    #: Applies to the options form and the user settings form alike.
    show_when: Mapping[str, tuple[str, tuple[str, ...]]] = {}
    #: Plain option fields kept per value of their controlling field, as every secret with a ``show_when``
    #: rule is (web search's base URL and engine fields: one per engine). The options handed to ``setup``
    #: and ``check`` hold, beside the values in force, every value and secret so kept under its scoped
    #: name (``scoped("base_url", "searxng")``, ``scoped("api_key", "brave")``): a plugin that uses
    #: several at once (fallback engines) takes each one's own, and must never hand one to another.
    kept_per_scope: frozenset[str] = frozenset()

    def user_settings_form(self, options: Mapping[str, Any]) -> type[forms.Form] | None:
        """The form of the user's settings under these options, or None when the plugin has none."""
        return None

    def setup(self, setup: PluginSetup) -> None:
        """Register the plugin's tools and ingesters for ``setup.options``.

        ``setup.configured`` is False when the operator has not saved valid options yet; ``options``
        are then the form's initial values and the plugin should register tools that explain this.
        """

    def check(self, options: Mapping[str, Any]) -> list[str]:
        """Problems with these saved options on this host (a program or a kernel feature they need is
        missing, a key they need is not set): the system check ``webtools.W015`` shows each one to the
        operator. ``options`` include the secrets in force, so a check can see whether a key is set; a
        message must never quote one."""
        return []

    def test_input(self, tool_name: str) -> dict[str, Any] | None:
        """An input that exercises ``tool_name`` against the real service, for the admin's "Test"
        page and ``manage.py webtools check``; None when the tool has no harmless test call."""
        return None

    def default_options(self) -> dict[str, Any]:
        """The options form's initial values."""
        if self.options_form is None:
            return {}
        return {
            name: (f.initial() if callable(f.initial) else f.initial)
            for name, f in self.options_form.base_fields.items()
            if not isinstance(f, SecretField)
        }

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}>"
