"""``manage.py webtools <subcommand>``: run a tool, list tools, rotate encryption keys, serve MCP.

Part of the Django shell: may import the host, ``models``, ``mcp`` and the base.
"""
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
        check = sub.add_parser(
            "check", help="Validate keys, settings and every plugin's options, and try each plugin's test call."
        )
        check.add_argument("--user", help="Username to run the test calls as (default: the first superuser).")
        check.add_argument("--offline", action="store_true", help="Skip the test calls (no request leaves).")
        mcp = sub.add_parser(
            "mcp", help="Serve the user's enabled tools to an MCP client over stdio (needs django-webtools[mcp])."
        )
        mcp.add_argument("--user", required=True, help="Username whose tools, switches and keys are served.")

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
            # The operator wrote these URLs, so web_fetch may read them.
            turn.observe(json.dumps(payload, ensure_ascii=False))
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

    def handle_mcp(self, user: str, **options):
        try:
            from webtools.mcp.server import run_stdio
        except ImportError as err:
            raise CommandError(
                f"The MCP server needs the mcp package: pip install 'django-webtools[mcp]' ({err})."
            ) from None
        account = self._user(user)
        # stdout carries the protocol from here on: nothing else may be written to it.
        run_stdio(account)

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

    def handle_check(self, user: str | None, offline: bool, **options):
        from webtools import crypto
        from webtools.conf import debug, get_setting
        from webtools.host import build_registry, get_plugins, start_turn
        from webtools.net.errors import no_network

        report: list[tuple[str, str]] = []
        problem = crypto.check_keys()
        report.append(("error" if problem else "ok", problem or f"{len(crypto.configured_keys())} encryption key(s)."))
        if get_setting("ALLOW_PRIVATE_NETWORKS"):
            level = "warning" if debug() else "error"
            report.append((level, "ALLOW_PRIVATE_NETWORKS is on: the SSRF guard is off."))
        if not get_setting("PUBLIC_URL"):
            report.append(("warning", 'WEBTOOLS["PUBLIC_URL"] is empty: sites cannot learn who your bot is.'))
        try:
            registry, _ingesters, loaded = build_registry()
        except WebtoolsConfigurationError as err:
            report.append(("error", str(err)))
            return self._finish(report)
        for plugin_id, plugin in get_plugins().items():
            opts = loaded[plugin_id]
            if opts.configured:
                report.append(("ok", f"{plugin.name}: options valid."))
            elif not opts.saved:
                problems = "; ".join(f"{f}: {' '.join(m)}" for f, m in opts.errors.items())
                report.append(("warning", f"{plugin.name}: not set up yet ({problems})."))
            else:
                for field, messages in opts.errors.items():
                    where = "" if field == "__all__" else f"{field}: "
                    report.append(("error", f"{plugin.name}: {where}{' '.join(messages)}"))
        if not offline:
            account = self._user(user)
            for plugin_id, plugin in get_plugins().items():
                if not loaded[plugin_id].configured:
                    continue
                for tool in registry.tools_of(plugin_id):
                    test_input = plugin.test_input(tool.name)
                    if test_input is None:
                        continue
                    with start_turn(account, requested_tools=[tool.name]) as turn:
                        # The plugin's own example, not the model's: web_fetch may read its URL.
                        turn.observe(json.dumps(test_input, ensure_ascii=False))
                        result = turn.call(tool.name, test_input)
                    error = result.output["error"] if result.is_error else ""
                    if error and no_network(error):
                        # A machine without a network (or a name service) is not a broken set-up.
                        report.append(("warning", f"{tool.name} test call could not reach the network: {error} "
                                       "Run the check where the server runs, or pass --offline."))
                    elif error:
                        report.append(("error", f"{tool.name} test call failed: {error}"))
                    else:
                        report.append(("ok", f"{tool.name} test call {json.dumps(test_input)} succeeded."))
        return self._finish(report)

    def _finish(self, report: list[tuple[str, str]]) -> None:
        styles = {"ok": self.style.SUCCESS, "warning": self.style.WARNING, "error": self.style.ERROR}
        for level, message in report:
            self.stdout.write(styles[level](f"{level.upper():8}") + message)
        errors = sum(1 for level, _ in report if level == "error")
        self.stdout.write(f"{errors} error(s), {sum(1 for level, _ in report if level == 'warning')} warning(s).")
        if errors:
            raise SystemExit(1)

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
