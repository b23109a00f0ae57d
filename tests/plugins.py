"""Small plugins for tests of the runtime, admin, API and settings page."""
from __future__ import annotations

from django import forms

from webtools.runtime import Plugin, PluginSetup, SecretField, Tool, ToolError

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": 100}},
    "required": ["text"],
    "additionalProperties": False,
}


class DemoOptionsForm(forms.Form):
    mode = forms.ChoiceField(choices=[("plain", "Plain"), ("keyed", "Keyed")], label="Mode")
    api_key = SecretField(label="API key")
    greeting = forms.CharField(required=False, initial="hello", max_length=50)
    echo_default = forms.BooleanField(required=False, initial=True)

    def clean(self):
        data = super().clean()
        if data.get("mode") == "keyed" and not data.get("api_key"):
            self.add_error("api_key", "The keyed mode needs an API key.")
        return data


class DemoUserForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[("default", "Default"), ("plain", "Plain"), ("keyed", "Keyed")], initial="default"
    )
    api_key = SecretField(label="Your API key")
    nickname = forms.CharField(required=False, max_length=20)

    def clean(self):
        data = super().clean()
        if data.get("mode") == "keyed" and not data.get("api_key"):
            self.add_error("api_key", "Add your API key.")
        return data


class DemoPlugin(Plugin):
    """Tools: ``echo`` (on by default, switchable, untrusted), ``shout`` (off, switchable), ``fixed``
    (on, not switchable), ``secret_echo`` (returns the options' key in an error: for masking tests)."""

    id = "demo"
    name = "Demo"
    options_form = DemoOptionsForm
    show_when = {"api_key": ("mode", ("keyed",))}

    def user_settings_form(self, options):
        return DemoUserForm

    def setup(self, setup: PluginSetup) -> None:
        options = setup.options

        def echo(input, ctx):
            return {"text": input["text"], "settings": sorted(ctx.settings)}

        def shout(input, ctx):
            return input["text"].upper()

        def fixed(input, ctx):
            return "fixed"

        def leak(input, ctx):
            raise ToolError(f"failed with key {options.get('api_key')}")

        setup.register_tool(
            Tool("echo", "Echo the text.", ECHO_SCHEMA, echo, default_enabled=bool(options.get("echo_default", True)),
                 user_toggle=True, untrusted=True)
        )
        setup.register_tool(Tool("shout", "Shout the text.", ECHO_SCHEMA, shout, user_toggle=True))
        setup.register_tool(Tool("fixed", "Always on.", {"type": "object"}, fixed, default_enabled=True))
        setup.register_tool(Tool("secret_echo", "Fails naming its key.", {"type": "object"}, leak, untrusted=True))


class QuietPlugin(Plugin):
    """A plugin with no settings and no switchable tool: the settings API leaves it out."""

    id = "quiet"
    name = "Quiet"

    def setup(self, setup: PluginSetup) -> None:
        setup.register_tool(Tool("quiet", "Quiet.", {"type": "object"}, lambda i, c: "ok", default_enabled=True))
