"""The operator's side: plugin options (with write-only secrets) and a view of users' choices.

Owns the admin of every model: plugin options (one row per listed plugin, named by its plugin, with
the keys per engine and the Test page), users' switches and settings, usage and engine prices. Part of
the Django shell: may import the host, ``models``, ``forms``, the runtime and the base.
"""
from __future__ import annotations

import copy
import json
from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, Sum
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _

from . import crypto
from .admin_forms import EnginePriceForm, network_access
from .exceptions import TurnError, WebtoolsConfigurationError
from .forms import decorate_form
from .host import (
    build_registry,
    get_plugin,
    get_plugins,
    kept_values,
    load_options,
    scope_secrets,
    scoped_fields,
    secret_scopes,
    secrets_in_force,
    start_turn,
    validate_scope,
    validate_settings,
)
from .models import EnginePrice, PluginOptions, Usage, UserPluginSettings, UserToolSetting
from .runtime import SecretField, json_input, scoped


class PluginOptionsAdminForm(forms.ModelForm):
    """The plugin's own options form, rendered in the admin; secrets are write-only.

    A blank secret keeps the stored one; "clear" removes it. Validation is the plugin form's, run
    over what will be in force, so its cross-field rules see stored secrets too.
    """

    plugin_form: type[forms.Form]

    class Meta:
        model = PluginOptions
        fields: list[str] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        plugin = get_plugin(self.instance.plugin)
        self._carry_typed_secrets()
        stored = {**plugin.default_options(), **(self.instance.values or {})}
        try:
            stored_secrets = self.instance.get_secrets()
        except WebtoolsConfigurationError:
            stored_secrets = {}
        values = self.instance.values or {}
        in_force = secrets_in_force(stored_secrets, values, plugin.show_when)
        scopes = secret_scopes(stored_secrets, values, plugin.show_when)
        for key in kept_values(values, plugin.kept_per_scope, plugin.show_when):
            name, _sep, scope = key.partition("@")
            scopes.setdefault(name, []).append(scope)
        for name, field in self.fields.items():
            if isinstance(field, SecretField):
                field.help_text = self._secret_help(name, plugin, in_force, scopes)
                continue
            if name in stored and not name.endswith("_clear"):
                field.initial = stored[name]
            if scopes.get(name):
                field.help_text = " ".join((
                    str(field.help_text),
                    str(_("Kept for %(kept)s; left blank, the chosen %(choice)s's is used.")
                        % {"kept": self._scope_labels(name, plugin, scopes), "choice": self._choice(name, plugin)}),
                )).strip()
        rules = dict(plugin.show_when)
        for name in list(rules):
            if f"{name}_clear" in self.fields:
                rules[f"{name}_clear"] = rules[name]
        decorate_form(self, rules)

    def _carry_typed_secrets(self) -> None:
        """A key typed into a form that another field's error sends back is kept, not dropped: the page
        carries it encrypted with the encryption keys in a hidden field (``<name>__pending``, declared by
        ``options_admin_form``; never the key itself), and a blank field on the next submission uses it.
        Typing again replaces it."""
        self.pending: set[str] = set()
        secrets = [name for name, field in self.fields.items() if isinstance(field, SecretField)]
        if not self.is_bound:
            return
        data = self.data.copy()
        for name in secrets:
            typed = str(data.get(name) or "").strip()
            if not typed and data.get(f"{name}__pending"):
                try:
                    carried = crypto.decrypt_json(str(data[f"{name}__pending"]))
                except (WebtoolsConfigurationError, ValueError):
                    carried = {}
                typed = carried.get(name, "") if isinstance(carried, dict) else ""
                data[name] = typed
            if typed:
                self.pending.add(name)
        self.data = data

    def _post_clean(self):
        super()._post_clean()
        if not self._errors:
            return
        for name in self.pending:
            try:
                self.data[f"{name}__pending"] = crypto.encrypt_json({name: self.data[name]})
            except WebtoolsConfigurationError:  # no key: nothing secret can be kept (the field says so)
                continue
            note = str(_("Entered, not saved yet: it is saved with this form. Leave blank to keep it, or type "
                         "another to replace it."))
            self.fields[name].help_text = self[name].help_text = note  # the bound field keeps its own copy

    def _secret_help(self, name: str, plugin, in_force: dict, scopes: dict) -> str:
        """Whether a secret is set; for a key kept per value of its controlling field (per engine, per
        renderer), which values have one, named in that field's own word."""
        if name not in plugin.show_when:
            return str(_("A value is set and hidden. Leave blank to keep it.") if in_force.get(name) else _("Not set."))
        kept, choice = self._scope_labels(name, plugin, scopes), self._choice(name, plugin)
        if not kept:
            return str(_("Not set for any %(choice)s.") % {"choice": choice})
        help_text = str(
            _("Kept for %(kept)s, hidden. The key of the %(choice)s chosen above is used; leave blank to keep it.")
            % {"kept": kept, "choice": choice}
        )
        if name in (scoped_fields(plugin) or ("", ()))[1]:  # several at once (web search's fallback engines)
            help_text += " " + str(
                _("Another %(choice)s's key serves it as a fallback %(choice)s.") % {"choice": choice}
            )
        return help_text

    def _scope_labels(self, name: str, plugin, scopes: dict) -> str:
        """The display names of the values of ``name``'s controlling field that keep one (engines)."""
        controller = plugin.show_when[name][0]
        labels = dict(self.fields[controller].choices) if controller in self.fields else {}
        return ", ".join(str(labels.get(scope, scope)) for scope in sorted(set(scopes.get(name, []))))

    def _choice(self, name: str, plugin) -> str:
        """What a value of ``name``'s controlling field is called in a sentence ("engine", "renderer")."""
        return choice_word(plugin.options_form.base_fields, plugin.show_when[name][0])

    def clean(self):
        cleaned = super().clean()
        plugin = get_plugin(self.instance.plugin)
        try:
            stored_secrets = self.instance.get_secrets()
        except WebtoolsConfigurationError:
            stored_secrets = {}
        clear = [name for name in self.plugin_form.base_fields if self.cleaned_data.get(f"{name}_clear")]
        self.checked = validate_settings(
            self.plugin_form, self.data, stored_secrets, clear, show_when=plugin.show_when,
            stored_values=self.instance.values or {}, kept=plugin.kept_per_scope,
        )
        for field, errors in self.checked.form.errors.items():
            target = None if field == "__all__" else field
            if target is None or target not in self._errors:
                for error in errors:
                    self.add_error(target, error)
        return cleaned

    def save(self, commit=True):
        self.instance.values = self.checked.stored_values
        self.instance.set_secrets(self.checked.stored_secrets)
        return super().save(commit)


def choice_word(fields, controller: str) -> str:
    """What one value of the field ``controller`` is called in a sentence: its label in lower case
    ("Engine": "engine", "Renderer": "renderer")."""
    field = fields.get(controller)
    return str(getattr(field, "label", None) or controller.replace("_", " ")).lower()


def options_admin_form(plugin) -> type[PluginOptionsAdminForm]:
    attrs: dict = {"plugin_form": plugin.options_form}
    fields = plugin.options_form.base_fields
    for name, field in fields.items():
        attrs[name] = copy.deepcopy(field)
        if isinstance(field, SecretField):
            label = _("Clear %(field)s") % {"field": field.label or name}
            if name in plugin.show_when:
                label = _("Clear the chosen %(choice)s's %(field)s") % {
                    "choice": choice_word(fields, plugin.show_when[name][0]), "field": field.label or name,
                }
            attrs[f"{name}_clear"] = forms.BooleanField(required=False, label=label)
            attrs[f"{name}__pending"] = forms.CharField(required=False, widget=forms.HiddenInput)
    return type(f"{type(plugin).__name__}OptionsAdminForm", (PluginOptionsAdminForm,), attrs)


def scope_form(plugin, main: str) -> type[forms.Form] | None:
    """The form of the "keys per engine" page: a scope (an engine other than the one in force) and the
    fields kept for it, each with a "clear" box (a blank field keeps what is stored). None for a plugin
    that keeps nothing per scope."""
    spec = scoped_fields(plugin)
    if spec is None:
        return None
    controller, names = spec
    base = plugin.options_form.base_fields
    choices = [
        (value, label) for value, label in base[controller].choices
        if value and value != main and any(value in plugin.show_when[name][1] for name in names)
    ]
    attrs: dict = {controller: forms.ChoiceField(label=base[controller].label, choices=choices)}
    attrs[controller].choice_help = getattr(base[controller], "choice_help", None)  # where to get a key
    for name in names:
        attrs[name] = copy.deepcopy(base[name])
        attrs[name].required = False
        attrs[f"{name}_clear"] = forms.BooleanField(
            required=False, label=_("Clear its %(field)s") % {"field": base[name].label or name}
        )
    return type("ScopeForm", (forms.Form,), attrs)


def _scopes_title(plugin, controller: str) -> str:
    label = plugin.options_form.base_fields[controller].label or controller
    return str(_("Keys per %(field)s") % {"field": str(label).lower()})


class ToolTestForm(forms.Form):
    tool = forms.ChoiceField(label=_("Tool"))
    input = forms.CharField(label=_("Input (JSON)"), widget=forms.Textarea(attrs={"rows": 4, "cols": 60}))

    def __init__(self, *args, tools=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tool"].choices = [(t.name, f"{t.display_title} ({t.name})") for t in tools]

    def clean_input(self):
        try:
            value = json_input.loads(self.cleaned_data["input"])
        except json_input.JSONInputError as err:
            raise forms.ValidationError(str(err)) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(_("Enter a JSON object."))
        if json_input.text_problem(value):
            raise forms.ValidationError(json_input.UNSTORABLE)
        return value


@admin.register(PluginOptions)
class PluginOptionsAdmin(admin.ModelAdmin):
    """One row per listed plugin with options; rows are created on first view, never by hand.

    The "Test" page runs one call of the plugin's tools with the saved options, as the operator.
    """

    list_display = ("name", "plugin", "status", "tools_for_users", "updated_at")
    readonly_fields = ()
    # Rows come back on the next visit, so deleting them in bulk only resets options by surprise.
    actions = None

    class Media:
        js = ("webtools/show_when.js", "webtools/choice_help.js")

    def has_add_permission(self, request):
        return False

    def get_urls(self):
        opts = self.model._meta
        test = path(
            "<path:object_id>/test/",
            self.admin_site.admin_view(self.test_view),
            name=f"{opts.app_label}_{opts.model_name}_test",
        )
        scopes = path(
            "<path:object_id>/scopes/",
            self.admin_site.admin_view(self.scopes_view),
            name=f"{opts.app_label}_{opts.model_name}_scopes",
        )
        return [test, scopes, *super().get_urls()]

    def get_object(self, request, object_id, from_field=None):
        """The row, named by its plugin in titles, breadcrumbs, messages and the history; for a save,
        held until the save's transaction ends (the admin's change view runs in one), so a save here and
        one on *Keys per engine* at once never lose each other's keys."""
        obj = super().get_object(request, object_id, from_field)
        if obj is not None and request.method == "POST" and transaction.get_connection().in_atomic_block:
            obj = PluginOptions.locked(pk=obj.pk)
        plugin = get_plugin(obj.plugin) if obj is not None else None
        if plugin is not None:
            obj.display_name = plugin.name
        return obj

    @admin.display(description=PluginOptions._meta.verbose_name)
    def name(self, obj: PluginOptions) -> str:
        plugin = get_plugin(obj.plugin)
        return str(plugin.name) if plugin else obj.plugin

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id)
        plugin = get_plugin(obj.plugin) if obj else None
        spec = scoped_fields(plugin) if plugin is not None and plugin.options_form is not None else None
        link = _scopes_title(plugin, spec[0]) if spec else ""
        context = {**(extra_context or {}), "scopes_link": link, "network_access": network_access()}
        return super().change_view(request, object_id, form_url, context)

    def scopes_view(self, request, object_id):
        """Keys, base URLs and fields per engine, entered for an engine without choosing it (what a
        fallback engine uses), and cleared; never shown back. A change is saved in one transaction
        holding the row, and written to the admin's history by the fields' labels only."""
        with transaction.atomic():
            return self._scopes_view(request, object_id)

    def _scopes_view(self, request, object_id):
        obj = self.get_object(request, object_id)
        plugin = get_plugin(obj.plugin) if obj is not None else None
        if plugin is None or scoped_fields(plugin) is None:
            raise Http404("No such plugin options.")
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        controller, names = scoped_fields(plugin)
        values = obj.values or {}
        try:
            stored_secrets = obj.get_secrets()
        except WebtoolsConfigurationError as err:
            raise Http404(str(err)) from None
        form_class = scope_form(plugin, values.get(controller) or "")
        form = form_class(request.POST or None)
        decorate_form(form, {
            **{name: plugin.show_when[name] for name in names},
            **{f"{name}_clear": plugin.show_when[name] for name in names},
        })
        if request.method == "POST" and form.is_valid():
            scope = form.cleaned_data[controller]
            label = dict(form.fields[controller].choices).get(scope, scope)
            cleared = {scoped(name, scope) for name in names if form.cleaned_data.get(f"{name}_clear")}
            if cleared and any(form.cleaned_data.get(name) for name in names):
                form.add_error(None, _("Either clear values or enter new ones: not both at once."))
            elif cleared:
                # Clearing needs no validation: the engine simply has nothing kept (the check warns if listed).
                kept = scope_secrets(stored_secrets, values, plugin.show_when)
                obj.set_secrets({key: value for key, value in kept.items() if key not in cleared})
                obj.values = {key: value for key, value in values.items() if key not in cleared}
                obj.save()
                self._log_scope_change(request, obj, plugin, names, label, cleared=True, form=form)
                messages.info(request, _("Cleared for %(scope)s.") % {"scope": label})
                return HttpResponseRedirect(request.path)
            else:
                checked = validate_scope(plugin, scope, request.POST, values, stored_secrets)
                for field, errors in checked.errors.items():
                    for error in errors:
                        form.add_error(field if field in form.fields else None, error)
                if not form.errors:
                    obj.values = checked.stored_values
                    obj.set_secrets(checked.stored_secrets)
                    obj.save()
                    self._log_scope_change(request, obj, plugin, names, label, cleared=False, form=form)
                    messages.info(request, _("Kept for %(scope)s.") % {"scope": label})
                    return HttpResponseRedirect(request.path)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": obj,
            "title": f"{plugin.name}: {_scopes_title(plugin, controller)}",
            "form": form,
            "kept": self._kept_rows(plugin, form, controller, names, values, stored_secrets),
        }
        return TemplateResponse(request, "admin/webtools/pluginoptions/scopes.html", context)

    def _log_scope_change(self, request, obj, plugin, names, label, *, cleared: bool, form) -> None:
        """The admin history's entry for a change on *Keys per engine*: which fields of which engine
        were set or cleared, by their labels; never a value."""
        base = plugin.options_form.base_fields
        if cleared:
            changed = [name for name in names if form.cleaned_data.get(f"{name}_clear")]
        else:
            changed = [name for name in names if form.cleaned_data.get(name)]
        fields = [str(base[name].label or name) for name in changed]
        action = _("Cleared") if cleared else _("Set")
        self.log_change(request, obj, [{"changed": {
            "name": str(_("%(action)s for %(scope)s") % {"action": action, "scope": label}),
            "object": str(obj), "fields": fields,
        }}])

    @staticmethod
    def _kept_rows(plugin, form, controller, names, values, stored_secrets) -> list[tuple[str, list[str]]]:
        """Per scope, what is kept for it: a secret as "set", never its value; a plain value as it is."""
        kept = {**kept_values(values, plugin.kept_per_scope, plugin.show_when),
                **scope_secrets(stored_secrets, values, plugin.show_when)}
        base = plugin.options_form.base_fields
        rows = []
        for value, label in base[controller].choices:
            parts = []
            for name in names:
                found = kept.get(scoped(name, value)) if value else None
                if found:
                    shown = _("set") if isinstance(base[name], SecretField) else found
                    parts.append(f"{base[name].label}: {shown}")
            if parts:
                rows.append((str(label), parts))
        return rows

    def test_view(self, request, object_id):
        obj = self.get_object(request, object_id)
        if obj is None or get_plugin(obj.plugin) is None:
            raise Http404("No such plugin options.")
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        plugin = get_plugin(obj.plugin)
        registry, _ingesters, _loaded = build_registry()
        tools = registry.tools_of(plugin.id)
        # Each tool's example input; the page swaps it in when the operator picks another tool.
        examples = {tool.name: json.dumps(plugin.test_input(tool.name) or {}, indent=2) for tool in tools}
        first = tools[0].name if tools else ""
        initial = {"tool": first, "input": examples.get(first, "{}")}
        form = ToolTestForm(request.POST or None, tools=tools, initial=initial)
        result = None
        citations = []
        if request.method == "POST" and form.is_valid():
            try:
                turn = start_turn(request.user, requested_tools=[form.cleaned_data["tool"]])
            except TurnError as err:
                form.add_error(None, str(err))
            else:
                with turn:
                    # The operator wrote this input, so web_fetch may read the URLs in it.
                    turn.observe(json.dumps(form.cleaned_data["input"], ensure_ascii=False))
                    result = turn.call(form.cleaned_data["tool"], form.cleaned_data["input"])
                citations = turn.citations.as_list()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": obj,
            "title": _("Test %(plugin)s") % {"plugin": plugin.name},
            "form": form,
            "tools": tools,
            "examples": examples,
            "result": result,
            "output_text": json.dumps(result.output, indent=2, ensure_ascii=False) if result else "",
            "citations": citations,
        }
        return TemplateResponse(request, "admin/webtools/pluginoptions/test.html", context)

    def changelist_view(self, request, extra_context=None):
        for plugin_id, plugin in get_plugins().items():
            if plugin.options_form is not None:
                PluginOptions.objects.get_or_create(plugin=plugin_id)
        self._registry = build_registry()[0]  # once per page, for tools_for_users
        return super().changelist_view(request, extra_context)

    @admin.display(description=_("tools for users"))
    def tools_for_users(self, obj: PluginOptions) -> str:
        """Whether each of the plugin's tools is on for users who have not switched it, and whether they may."""
        registry = getattr(self, "_registry", None) or build_registry()[0]
        lines = []
        for tool in registry.tools_of(obj.plugin):
            state = _("on by default") if tool.default_enabled else _("off by default")
            switch = _("users may switch it") if tool.user_toggle else _("users cannot switch it")
            lines.append(f"{tool.display_title}: {state}, {switch}")
        return "; ".join(lines) or "—"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(plugin__in=list(get_plugins()))

    def get_form(self, request, obj=None, change=False, **kwargs):
        plugin = get_plugin(obj.plugin) if obj else None
        if plugin is None or plugin.options_form is None:
            return super().get_form(request, obj, change=change, fields=[], **kwargs)
        return options_admin_form(plugin)

    def get_fieldsets(self, request, obj=None):
        form = self.get_form(request, obj)
        return [(None, {"fields": list(form.base_fields)})]

    @admin.display(description=_("status"))
    def status(self, obj: PluginOptions) -> str:
        plugin = get_plugin(obj.plugin)
        if plugin is None or plugin.options_form is None:
            return "—"
        loaded = load_options(plugin, obj)
        if loaded.configured:
            return str(_("configured"))
        return str(_("needs attention")) if loaded.saved else str(_("not set up yet"))

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        messages.info(request, _("Options saved; they apply from the next turn."))


@admin.register(UserToolSetting)
class UserToolSettingAdmin(admin.ModelAdmin):
    list_display = ("user", "tool", "enabled", "updated_at")
    list_filter = ("tool", "enabled")
    search_fields = ("user__username", "tool")
    raw_id_fields = ("user",)


@admin.register(UserPluginSettings)
class UserPluginSettingsAdmin(admin.ModelAdmin):
    """Users' plugin settings, read only: the user owns them; their secrets show only as set or not."""

    list_display = ("user", "plugin", "updated_at")
    list_filter = ("plugin",)
    search_fields = ("user__username",)
    fields = ("user", "plugin", "values", "secrets_set_display", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description=_("secrets set"))
    def secrets_set_display(self, obj: UserPluginSettings) -> str:
        try:
            names = sorted(obj.secrets_set())
        except WebtoolsConfigurationError:
            return str(_("cannot be decrypted with the configured keys"))
        return ", ".join(names) or "—"


@admin.register(Usage)
class UsageAdmin(admin.ModelAdmin):
    """Requests per user, tool, engine and day (read only), with totals and an estimated cost per engine
    from the operator's prices (``EnginePrice``) for the requests on the operator's key."""

    list_display = ("day", "user", "tool", "engine", "operator_key", "requests")
    list_filter = ("day", "tool", "engine", "operator_key")
    date_hierarchy = "day"
    search_fields = ("user__username",)
    list_select_related = ("user",)
    change_list_template = "admin/webtools/usage/change_list.html"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            response.context_data["usage_totals"] = usage_totals(changelist.queryset)
        return response


def usage_totals(queryset) -> list[dict]:
    """Per tool and engine: requests, those on the operator's key, and their estimated cost."""
    prices = dict(EnginePrice.objects.values_list("engine", "price_per_1000"))
    rows = (
        queryset.order_by()
        .values("tool", "engine")
        .annotate(
            total=Sum("requests"),
            operator=Sum("requests", filter=Q(operator_key=True), default=0),
        )
        .order_by("tool", "engine")
    )
    out = []
    for row in rows:
        price = prices.get(row["engine"])
        row["price_per_1000"] = price
        row["cost"] = None if price is None else (price * row["operator"] / 1000).quantize(Decimal("0.01"))
        out.append(row)
    return out


@admin.register(EnginePrice)
class EnginePriceAdmin(admin.ModelAdmin):
    form = EnginePriceForm
    list_display = ("engine", "price_per_1000")
