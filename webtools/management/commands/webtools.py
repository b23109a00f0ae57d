"""``manage.py webtools <subcommand>``: run a tool, list tools, rotate encryption keys."""
from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from webtools.exceptions import TurnError, WebtoolsConfigurationError


class Command(BaseCommand):
    help = "webtools operations: call a tool, list tools for a user, rotate encryption keys."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="subcommand", required=True)
        call = sub.add_parser("call", help="Run one tool call in a turn and print the result as JSON.")
        call.add_argument("tool")
        call.add_argument("--input", default="{}", help="The call's input, a JSON object.")
        call.add_argument("--user", help="Username to run as (default: the first superuser).")
        call.add_argument("--conversation", default="", help="Conversation id passed to the tool.")
        tools = sub.add_parser("tools", help="List each tool, whether it is enabled for the user, and why.")
        tools.add_argument("--user", help="Username (default: the first superuser).")
        sub.add_parser("rotate-keys", help="Re-encrypt every stored secret with the first encryption key.")

    def handle(self, *args, subcommand: str, **options):
        return getattr(self, "handle_" + subcommand.replace("-", "_"))(**options)

    # -- helpers ---------------------------------------------------------------------------------

    def _user(self, username: str | None):
        User = get_user_model()
        if username:
            try:
                return User.objects.get(**{User.USERNAME_FIELD: username})
            except User.DoesNotExist:
                raise CommandError(f"No user named {username!r}.") from None
        user = User.objects.filter(is_superuser=True).order_by("pk").first()
        if user is None:
            raise CommandError("No superuser exists; pass --user NAME.")
        return user

    # -- subcommands -----------------------------------------------------------------------------

    def handle_call(self, tool: str, input: str, user: str | None, conversation: str, **options):
        from webtools.host import start_turn

        try:
            payload = json.loads(input)
        except json.JSONDecodeError as err:
            raise CommandError(f"--input is not JSON: {err.msg} (line {err.lineno}, column {err.colno}).") from None
        if not isinstance(payload, dict):
            raise CommandError("--input must be a JSON object.")
        account = self._user(user)
        try:
            turn = start_turn(account, conversation=conversation, requested_tools=[tool])
        except TurnError as err:
            raise CommandError(str(err)) from None
        with turn:
            result = turn.call(tool, payload)
        self.stdout.write(
            json.dumps(
                {
                    "tool": result.tool,
                    "is_error": result.is_error,
                    "output": result.output,
                    "citations": turn.citations.as_list(),
                    "model_text": result.model_text,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        if result.is_error:
            raise SystemExit(1)

    def handle_tools(self, user: str | None, **options):
        from webtools.host import build_registry, tool_choices

        account = self._user(user)
        registry, _ingesters, _loaded = build_registry()
        choices = tool_choices(account)
        for tool in registry.tools():
            choice = choices.get(tool.name)
            enabled = tool.is_enabled(choice)
            if tool.user_toggle and choice is not None:
                why = f"the user switched it {'on' if choice else 'off'}"
            elif choice is not None:
                why = "the default applies: users cannot switch this tool, so the stored choice is ignored"
            else:
                why = f"default {'on' if tool.default_enabled else 'off'}"
            toggle = "user can switch" if tool.user_toggle else "fixed by the operator"
            self.stdout.write(
                f"{tool.name}\t{'enabled' if enabled else 'disabled'}\t({why}; {toggle}; "
                f"plugin {registry.owner(tool.name)})"
            )

    def handle_rotate_keys(self, **options):
        from webtools.models import PluginOptions, UserPluginSettings

        count = 0
        try:
            with transaction.atomic():
                for model in (PluginOptions, UserPluginSettings):
                    for row in model.objects.select_for_update().exclude(encrypted_secrets=""):
                        row.rotate_secrets()
                        row.save(update_fields=["encrypted_secrets"])
                        count += 1
        except WebtoolsConfigurationError as err:
            raise CommandError(f"{err} Nothing was changed.") from None
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted the secrets of {count} row(s) with the first key."))
