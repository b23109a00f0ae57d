"""The admin's smaller forms and read-only lines: engine prices, and what the guard lets through.

Part of the Django shell, beside ``admin`` (which imports this).
"""
from __future__ import annotations

from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _

from .host import get_plugin
from .models import EnginePrice


def network_access() -> str:
    """What the guarded client may reach beyond the public internet, as the settings file says (shown
    read-only on each plugin's options page: it is set in settings, not here)."""
    from .conf import get_setting

    if get_setting("ALLOW_PRIVATE_NETWORKS"):
        return str(_("Private networks: every address (ALLOW_PRIVATE_NETWORKS is on: the SSRF guard is off)."))
    entries = get_setting("ALLOW_ADDRESSES") or []
    if not entries:
        return str(_("Private networks: none. The tools reach public addresses only "
                     '(WEBTOOLS["ALLOW_ADDRESSES"] in settings lets named private ones through).'))
    return str(_('Private networks allowed by WEBTOOLS["ALLOW_ADDRESSES"] in settings: %(entries)s.')
               % {"entries": ", ".join(str(entry) for entry in entries)})


def engine_choices() -> list[tuple[str, str]]:
    """The installed search engines as (id, name), for forms that name one, then the rerank services
    under the name their requests are counted by (``rerank:<service>``)."""
    from .plugins.web_search import rerank

    plugin = get_plugin("web_search")
    engines = getattr(plugin, "engines", None)
    if engines is None:
        from .plugins.web_search.engines import ENGINES as engines
    return [(engine.id, f"{engine.name} ({engine.id})") for engine in engines] + [
        (rerank.usage_engine(r), f"{r.name} reranking ({rerank.usage_engine(r)})") for r in rerank.RERANKERS]


class EnginePriceForm(forms.ModelForm):
    """An engine price names an installed engine, and is never negative."""

    engine = forms.ChoiceField(label=_("engine"))
    price_per_1000 = forms.DecimalField(
        label=_("price per 1,000 requests"), min_value=Decimal(0), max_digits=10, decimal_places=4,
        help_text=EnginePrice._meta.get_field("price_per_1000").help_text,
    )

    class Meta:
        model = EnginePrice
        fields = ["engine", "price_per_1000"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = engine_choices()
        current = self.instance.engine if self.instance.pk else ""
        if current and current not in dict(choices):  # an engine no longer installed keeps its row
            choices.append((current, current))
        self.fields["engine"].choices = [("", "---------"), *choices]
