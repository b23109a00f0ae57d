"""The settings API for chat clients: per-user tool switches and plugin settings."""
from __future__ import annotations

from django.apps import apps
from django.db import transaction
from django.http import Http404, QueryDict
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from ..exceptions import WebtoolsConfigurationError
from ..forms import form_json_schema
from ..host import (
    applies,
    build_registry,
    get_plugin,
    get_plugins,
    secret_scopes,
    secrets_in_force,
    user_roles,
    validate_settings,
)
from ..models import UserPluginSettings, UserToolSetting
from ..runtime import secret_fields
from .parsers import SafeJSONParser
from .serializers import DetailSerializer, PluginSettingsSerializer, ToolSwitchSerializer

#: The errors every operation may answer, as the schema documents them.
AUTH_ERRORS = {
    401: OpenApiResponse(
        DetailSerializer,
        description="No credentials, or a bad token. The `WWW-Authenticate: Token` header says how to sign in.",
    ),
    403: OpenApiResponse(DetailSerializer, description="Signed in with a session, but without the CSRF token."),
}
BODY_ERRORS = {
    400: OpenApiResponse(
        OpenApiTypes.OBJECT,
        description='Field errors, `{"field": ["message"]}`, or `{"detail": "message"}` for a body that is not '
        "JSON, is nested too deeply or is larger than 100 kB.",
    ),
    415: OpenApiResponse(DetailSerializer, description="A body that is not JSON or a form."),
}


def authentication_classes() -> list[type]:
    """The host's ``DEFAULT_AUTHENTICATION_CLASSES``, plus DRF token authentication (when
    ``rest_framework.authtoken`` is installed) and session authentication whatever those say:
    docs/api.md promises both. Token comes first, so a request without credentials or with a bad token
    is a 401 carrying ``WWW-Authenticate: Token`` rather than a 403."""
    chosen: list[type] = [TokenAuthentication] if apps.is_installed("rest_framework.authtoken") else []
    for auth in [*api_settings.DEFAULT_AUTHENTICATION_CLASSES, SessionAuthentication]:
        if auth not in chosen:
            chosen.append(auth)
    return chosen


def operation(**kwargs):
    """``extend_schema`` built on drf-spectacular's ``AutoSchema`` whatever the host's
    ``DEFAULT_SCHEMA_CLASS`` is (``extend_schema`` starts from a schema set on the method, else from that
    setting)."""

    def decorator(method):
        method.schema = AutoSchema
        return extend_schema(**kwargs)(method)

    return decorator


def _stored_secrets(row: UserPluginSettings | None) -> dict[str, str]:
    if row is None:
        return {}
    try:
        return row.get_secrets()
    except WebtoolsConfigurationError:
        return {}  # the key that wrote them is gone: they count as not set


def plugin_entries(user, built=None) -> list[dict]:
    """Each plugin that has user settings or a switchable tool, as the API shows it.

    ``built`` is a ``build_registry()`` result the caller already has, so a request builds it once.
    """
    registry, _ingesters, loaded = built or build_registry()
    choices = dict(UserToolSetting.objects.filter(user=user).values_list("tool", "enabled"))
    rows = {row.plugin: row for row in UserPluginSettings.objects.filter(user=user)}
    entries = []
    for plugin_id, plugin in get_plugins().items():
        form = plugin.user_settings_form(loaded[plugin_id].effective)
        tools = registry.tools_of(plugin_id)
        if form is None and not any(tool.user_toggle for tool in tools):
            continue
        entry = {
            "id": plugin_id,
            "name": str(plugin.name),
            "settings": None,
            "secrets": {},
            "secretsFor": {},
            "schema": None,
            "tools": [
                {
                    "name": tool.name,
                    "title": tool.display_title,
                    "helpText": str(tool.help_text),
                    "description": tool.description,
                    "enabled": tool.is_enabled(choices.get(tool.name)),
                    "userToggle": tool.user_toggle,
                }
                for tool in tools
            ],
        }
        if form is not None:
            row = rows.get(plugin_id)
            secret_names = secret_fields(form)
            defaults = {
                name: (f.initial() if callable(f.initial) else f.initial)
                for name, f in form.base_fields.items()
                if name not in secret_names
            }
            stored_values = row.values if row else {}
            settings = {**defaults, **{k: v for k, v in stored_values.items() if k in defaults}}
            entry["settings"] = {k: v if applies(k, settings, plugin.show_when) else None for k, v in settings.items()}
            stored = _stored_secrets(row)
            present = secrets_in_force(stored, stored_values, plugin.show_when)
            entry["secrets"] = {name: bool(present.get(name)) for name in secret_names}
            entry["secretsFor"] = {
                name: scopes
                for name, scopes in secret_scopes(stored, stored_values, plugin.show_when).items()
                if name in secret_names
            }
            entry["schema"] = form_json_schema(form, plugin.show_when)
        entries.append(entry)
    return entries


class SettingsAPIView(APIView):
    """Base of the settings API's views: a signed-in user, webtools' own schema class, authentication
    and parsers, so none depends on the host's ``REST_FRAMEWORK`` defaults."""

    permission_classes = [IsAuthenticated]
    parser_classes = [SafeJSONParser, FormParser, MultiPartParser]
    schema = AutoSchema()

    def get_authenticators(self):
        return [auth() for auth in authentication_classes()]


class PluginSettingsListView(SettingsAPIView):
    """The signed-in user's plugins: their settings, which secrets are set, a JSON Schema of the
    settings form, and each tool with whether it is on."""

    @operation(
        responses={200: PluginSettingsSerializer(many=True), **AUTH_ERRORS},
        summary="The user's plugin settings and tools",
    )
    def get(self, request):
        return Response(plugin_entries(request.user))


class ToolSwitchView(SettingsAPIView):
    """Switch one of the plugin's tools on or off for the signed-in user: send {"enabled": true} or
    {"enabled": false}."""

    @operation(
        request=ToolSwitchSerializer,
        responses={
            200: ToolSwitchSerializer,
            **BODY_ERRORS,
            **AUTH_ERRORS,
            404: OpenApiResponse(DetailSerializer, description="No such plugin, or the plugin did not register "
                                 "that tool."),
        },
        summary="Switch a tool on or off for the user",
    )
    def put(self, request, plugin_id: str, tool_name: str):
        if get_plugin(plugin_id) is None:
            raise Http404("No such plugin.")
        registry, _ingesters, _loaded = build_registry()
        tool = registry.get(tool_name)
        if tool is None or registry.owner(tool_name) != plugin_id:
            raise Http404("This plugin has no such tool.")
        if not tool.user_toggle:
            return Response(
                {"detail": f"{tool_name} cannot be switched by users."}, status=status.HTTP_400_BAD_REQUEST
            )
        serializer = ToolSwitchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        enabled = serializer.validated_data["enabled"]
        UserToolSetting.objects.update_or_create(user=request.user, tool=tool_name, defaults={"enabled": enabled})
        return Response({"enabled": enabled})


class UserPluginSettingsView(SettingsAPIView):
    """The signed-in user's settings of one plugin.

    PUT replaces the plain values. A secret field absent from the body keeps its stored value, a
    string replaces it, and null or "" clears it. Keys are kept per engine: switching engine brings
    back that engine's key, or none. Fields that do not apply to the chosen engine are not stored.
    DELETE clears the settings (tool switches stay).
    """

    def _form(self, plugin_id: str):
        """The plugin's user settings form under the current options, and the registry it was built with."""
        plugin = get_plugin(plugin_id)
        if plugin is None:
            raise Http404("No such plugin.")
        built = build_registry()
        form = plugin.user_settings_form(built[2][plugin_id].effective)
        if form is None:
            raise Http404("This plugin has no user settings.")
        return form, built

    @operation(
        request=OpenApiTypes.OBJECT,
        responses={
            200: PluginSettingsSerializer,
            **BODY_ERRORS,
            **AUTH_ERRORS,
            404: OpenApiResponse(DetailSerializer, description="No such plugin, or it has no user settings."),
        },
        summary="Store the user's settings of a plugin",
    )
    def put(self, request, plugin_id: str):
        form, built = self._form(plugin_id)
        body = request.data
        if not isinstance(body, dict):
            return Response({"detail": "Send a JSON object."}, status=status.HTTP_400_BAD_REQUEST)
        unknown = sorted(set(body) - set(form.base_fields))
        if unknown:
            return Response({name: ["Unknown field."] for name in unknown}, status=status.HTTP_400_BAD_REQUEST)
        wrong_types = {} if isinstance(body, QueryDict) else json_type_errors(form, plugin_id, body)
        if wrong_types:
            return Response(wrong_types, status=status.HTTP_400_BAD_REQUEST)
        secret_names = secret_fields(form)
        clear = [name for name in secret_names if name in body and not body[name]]
        data = {k: v for k, v in body.items() if not (k in secret_names and v is None)}
        show_when = get_plugin(plugin_id).show_when
        # Read, change and write in one transaction holding the row, so two saves at once each build
        # on the other's keys instead of one overwriting them (or both inserting the row: 500).
        with transaction.atomic():
            row = UserPluginSettings.locked(user=request.user, plugin=plugin_id)
            checked = validate_settings(
                form, data, _stored_secrets(row), clear, show_when=show_when, stored_values=row.values or {},
                roles=user_roles(request.user),
            )
            if not checked.is_valid():
                transaction.set_rollback(True)
                return Response(checked.errors, status=status.HTTP_400_BAD_REQUEST)
            row.values = checked.values
            row.set_secrets(checked.stored_secrets)
            row.save()
        entry = next(e for e in plugin_entries(request.user, built) if e["id"] == plugin_id)
        return Response(entry)

    @operation(
        responses={
            204: None,
            **AUTH_ERRORS,
            404: OpenApiResponse(DetailSerializer, description="No such plugin, or it has no user settings."),
        },
        summary="Clear the user's settings of a plugin (tool switches stay)",
    )
    def delete(self, request, plugin_id: str):
        self._form(plugin_id)
        UserPluginSettings.objects.filter(user=request.user, plugin=plugin_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


#: JSON Schema type -> what a JSON body may hold for it, and the message when it holds something else.
_JSON_TYPES = {
    "string": ((str,), "Must be text or null."),
    "boolean": ((bool,), "Must be true, false or null."),
    "integer": ((int,), "Must be a whole number or null."),
    "number": ((int, float), "Must be a number or null."),
    "array": ((list, str), "Must be a list of text, or null."),
}


def json_type_errors(form, plugin_id: str, body: dict) -> dict[str, list[str]]:
    """Field errors for values of a JSON body whose type is not the field's (as the settings schema
    gives it): ``{"cx": {"a": 1}}`` is an error, not the text ``"{'a': 1}"`` a Django form would make
    of it. ``null`` is accepted for every field (the list endpoint shows unset values as null)."""
    plugin = get_plugin(plugin_id)
    properties = form_json_schema(form, plugin.show_when if plugin else None)["properties"]
    errors = {}
    for name, value in body.items():
        expected = properties.get(name, {}).get("type")
        if value is None or expected not in _JSON_TYPES:
            continue
        types, message = _JSON_TYPES[expected]
        wrong = not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
        if isinstance(value, list) and not all(isinstance(item, str) for item in value):
            wrong = True
        if wrong:
            errors[name] = [message]
    return errors
