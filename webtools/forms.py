"""Rendering help shared by the admin and the settings page: show-when rules and JSON Schema.

Part of the Django shell: imports only the runtime's form fields; the admin and the API import it.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django import forms
from django.core import validators

from .runtime import CommaListField, SecretField


def show_when_attrs(rule: tuple[str, tuple[str, ...]]) -> dict[str, str]:
    """Widget attributes read by ``webtools/show_when.js``."""
    field, values = rule
    return {"data-show-when": json.dumps({"field": field, "values": list(values)})}


def _initial(field: forms.Field) -> Any:
    return field.initial() if callable(field.initial) else field.initial


def field_json_schema(field: forms.Field) -> dict[str, Any]:
    """One form field as a JSON Schema property."""
    schema: dict[str, Any] = {"title": str(field.label) if field.label else None}
    if isinstance(field, SecretField):
        # No minLength: "" clears a stored secret.
        schema.update(type="string", writeOnly=True, format="password", pattern="^[!-~]*$", maxLength=field.max_length)
    elif isinstance(field, forms.BooleanField):
        schema["type"] = "boolean"
    elif isinstance(field, forms.IntegerField):
        schema["type"] = "integer"
        for v in field.validators:
            if isinstance(v, validators.MinValueValidator):
                schema["minimum"] = v.limit_value
            elif isinstance(v, validators.MaxValueValidator):
                schema["maximum"] = v.limit_value
    elif isinstance(field, forms.ChoiceField):
        schema["type"] = "string"
        schema["enum"] = [str(value) for value, _label in field.choices if value != ""]
        schema["enumNames"] = [str(label) for value, label in field.choices if value != ""]
        # Help that depends on the chosen option (where to get each engine's key, what it costs).
        if getattr(field, "choice_help", None):
            schema["x-choice-help"] = choice_help(field)
    elif isinstance(field, CommaListField):
        schema.update(type="array", items={"type": "string"})
    elif isinstance(field, forms.URLField):
        schema.update(type="string", format="uri")
    else:
        schema["type"] = "string"
        if getattr(field, "max_length", None):
            schema["maxLength"] = field.max_length
    if field.help_text:
        schema["description"] = str(field.help_text)
    default = _initial(field)
    if default is not None and not isinstance(field, SecretField):
        schema["default"] = default
    return {k: v for k, v in schema.items() if v is not None}


def form_json_schema(
    form_class: type[forms.BaseForm], show_when: Mapping[str, tuple[str, tuple[str, ...]]] | None = None
) -> dict[str, Any]:
    """A settings form as a JSON Schema object.

    A field that applies only for some values of another carries ``x-show-when: {field, values}``:
    clients show it only then (the settings page and the admin do).
    """
    show_when = show_when or {}
    properties = {}
    required = []
    for name, field in form_class.base_fields.items():
        prop = field_json_schema(field)
        rule = show_when.get(name)
        if rule:
            prop["x-show-when"] = {"field": rule[0], "values": list(rule[1])}
        properties[name] = prop
        if field.required and not isinstance(field, SecretField):
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def choice_help(field: forms.Field) -> dict[str, dict[str, str]]:
    """A choice field's ``choice_help`` (option -> note, url, link) as plain strings, empty parts left out."""
    return {
        str(value): {k: str(v) for k, v in help.items() if v}
        for value, help in (getattr(field, "choice_help", None) or {}).items()
    }


def decorate_form(form: forms.BaseForm, show_when: Mapping[str, tuple[str, tuple[str, ...]]]) -> None:
    """Add the show-when attributes, and each choice field's ``choice_help`` (read by
    ``webtools/choice_help.js``), to a bound or unbound form's widgets."""
    for name, rule in show_when.items():
        if name in form.fields:
            form.fields[name].widget.attrs.update(show_when_attrs(rule))
    for field in form.fields.values():
        if getattr(field, "choice_help", None):
            field.widget.attrs["data-choice-help"] = json.dumps(choice_help(field))
