"""DRF serializers of the settings API."""
from __future__ import annotations

from rest_framework import serializers
from rest_framework.fields import empty


class StrictBooleanField(serializers.BooleanField):
    """Only JSON ``true`` or ``false``: "yes", 1 or "false" as text are errors, not guesses."""

    default_error_messages = {"invalid": "Must be true or false."}
    # DRF reads a boolean missing from a form body as an unticked checkbox, False: here it is missing.
    default_empty_html = empty

    def to_internal_value(self, data):
        if isinstance(data, bool):
            return data
        self.fail("invalid")


class DetailSerializer(serializers.Serializer):
    """An error that is about the request as a whole."""

    detail = serializers.CharField()


class ToolSwitchSerializer(serializers.Serializer):
    enabled = StrictBooleanField()


class ToolStateSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField(help_text="The tool's human name, such as Web search.")
    helpText = serializers.CharField(  # noqa: N815  (the API's JSON spelling)
        help_text="What switching the tool on means, for people; may be empty."
    )
    description = serializers.CharField(help_text="The description the model reads.")
    enabled = serializers.BooleanField()
    userToggle = serializers.BooleanField()  # noqa: N815  (the API's JSON spelling)


class PluginSettingsSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    settings = serializers.DictField(help_text="The user's settings, secrets left out.", allow_null=True)
    secrets = serializers.DictField(
        child=serializers.BooleanField(), help_text="Whether each secret field is set; values are never returned."
    )
    secretsFor = serializers.DictField(  # noqa: N815  (the API's JSON spelling)
        child=serializers.ListField(child=serializers.CharField()),
        help_text="For a secret kept per value of another field (an API key per engine): the values that have one.",
    )
    schema = serializers.DictField(
        allow_null=True, help_text="JSON Schema of the settings; x-show-when says when a field applies."
    )
    tools = ToolStateSerializer(many=True)
