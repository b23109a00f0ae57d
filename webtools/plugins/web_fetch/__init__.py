"""The web fetch plugin: any page or PDF as clean Markdown, in parts, inside the operator's rules.

Listing the plugin turns the ``web_fetch`` tool on for everyone (``default_enabled``); it needs no
operator input, so its options all have defaults. See docs/fetch.md.

Owns the plugin (options, system checks, setup); the tool is in ``tool``, extraction in ``extract``,
rendering in ``render`` and ``services``. May import the runtime's public API, ``net``, ``conf``,
``exceptions`` and this plugin's modules; never another plugin, a model or the host.
"""
from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from webtools.runtime import LimitField, Plugin, PluginSetup, SecretField, Tool, cache_ttl_field
from webtools.runtime.domains import DomainListField

from . import services
from .schema import DESCRIPTION, OUTPUT_SCHEMA, input_schema
from .tool import MAX_USES, FetchOptions, WebFetch

__all__ = ["WebFetchOptionsForm", "WebFetchPlugin"]


class WebFetchOptionsForm(forms.Form):
    """The operator's options of web fetch; every field has a default."""

    allow_domains = DomainListField(
        required=False, initial=list, label=_("Allowed domains"),
        help_text=_("When set, only these domains and their subdomains may be fetched. One host name "
                    "per line, such as example.com."),
    )
    deny_domains = DomainListField(
        required=False, initial=list, label=_("Denied domains"),
        help_text=_("These domains and their subdomains are never fetched. Checked before the allowed "
                    "domains, on every redirect."),
    )
    only_conversation_urls = forms.BooleanField(
        required=False, initial=True, label=_("Fetch only URLs from the conversation"),
        help_text=_("Fetch a URL only when it appeared in the conversation: in a user's message, a search "
                    "result or a page fetched before. A page that tells the model to send conversation "
                    "data to an address of its own then gets nowhere."),
    )
    user_toggle = forms.BooleanField(
        required=False, initial=True, label=_("Users may switch the tool off"),
    )
    max_characters = forms.IntegerField(
        required=False, initial=20_000, min_value=500, max_value=1_000_000, label=_("Characters per part"),
        help_text=_("Longer text is returned in parts of this size."),
    )
    max_content_tokens = forms.IntegerField(
        required=False, initial=5_000, min_value=100, max_value=1_000_000, label=_("Tokens per part"),
        help_text=_("A part holds at most this many tokens (estimated: four ASCII characters or one other "
                    "character a token), and at most the characters per part. The model may ask for fewer."),
    )
    max_bytes = forms.IntegerField(
        required=False, initial=5_000_000, min_value=10_000, max_value=100_000_000,
        label=_("Page size limit (bytes)"),
        help_text=_("A page is read up to this size; the rest is dropped."),
    )
    max_file_bytes = forms.IntegerField(
        required=False, initial=20_000_000, min_value=10_000, max_value=500_000_000,
        label=_("File size limit (bytes)"),
        help_text=_("A file (such as a PDF) larger than this is refused: a cut file cannot be read."),
    )
    timeout_seconds = forms.IntegerField(
        required=False, initial=20, min_value=1, max_value=300, label=_("Timeout (seconds)"),
        help_text=_("One deadline for the whole call: the download, redirects included, and the reading of "
                    "the page or file. A call that runs out of time ends with an error, or with the pages "
                    "of a PDF read so far."),
    )
    max_pdf_pages = forms.IntegerField(
        required=False, initial=50, min_value=1, max_value=10_000, label=_("PDF pages read"),
        help_text=_("Pages of a PDF after these are not read; the text says so."),
    )
    max_document_characters = forms.IntegerField(
        required=False, initial=None, min_value=500, max_value=10_000_000,
        label=_("Characters kept from a document"),
        help_text=_("The text of a page or file is cut to this many characters before it is returned in "
                    "parts; the text says so. Empty: ten parts (ten times the characters per part)."),
    )
    max_html_bytes = forms.IntegerField(
        required=False, initial=3_000_000, min_value=10_000, max_value=100_000_000,
        label=_("HTML read for text (bytes)"),
        help_text=_("Only this much of a page's HTML is turned into text: reading HTML costs seconds of "
                    "CPU per megabyte."),
    )
    respect_robots_txt = forms.BooleanField(
        required=False, initial=True, label=_("Respect robots.txt"),
        help_text=_("Refuse pages that the site's robots.txt closes to this app's product token."),
    )
    respect_content_signals = forms.BooleanField(
        required=False, initial=True, label=_("Respect content signals"),
        help_text=_("Refuse pages whose site asks, in its robots.txt (Content-Signal: ai-input=no, or "
                    "Content-Usage: ai-use=n) or in the answer's own header, that they not be used as input "
                    "to AI answers. The robots.txt is read for these lines even when robots.txt is not "
                    "otherwise respected."),
    )
    include_image_urls = forms.BooleanField(
        required=False, initial=False, label=_("Include image URLs"),
        help_text=_("Images are left out of the text (their captions stay); this adds them, as their alt text "
                    "and URL."),
    )

    render_javascript = forms.ChoiceField(
        required=False, initial="never", label=_("Render JavaScript"),
        choices=[("never", _("Never")), ("auto", _("When a page needs it")), ("always", _("Always"))],
        help_text=_("Pages built by scripts are empty without a browser. 'When a page needs it' renders a "
                    "page in a headless Chromium only when its static text is too short and it shows the "
                    "marks of a script-built page. Needs Chromium and Playwright (django-webtools[render])."),
    )
    render_with = forms.ChoiceField(
        required=False, initial="chromium", label=_("Renderer"),
        choices=[("chromium", _("Chromium on this server")),
                 *((service.id, service.name) for service in services.SERVICES)],
        help_text=_("Chromium renders on this server, inside the guard. Firecrawl and Jina Reader are "
                    "services: the page's URL is sent to them and they read the page on their own "
                    "machines (see the privacy note in docs/fetch.md). Firecrawl needs an API key; Jina "
                    "Reader works without one at a lower rate limit."),
    )
    render_api_key = SecretField(
        label=_("Renderer API key"),
        help_text=_("The key of the service chosen above; each service keeps its own. Get one at "
                    "firecrawl.dev (Firecrawl) or jina.ai (Jina Reader)."),
    )
    bot_auth_key = SecretField(
        label=_("Web Bot Auth key"), min_length=43, max_length=44,
        help_text=_("An Ed25519 private key, 43 characters of base64url (the d of its JWK): every fetch is "
                    "signed with it (Web Bot Auth), so sites can tell this bot from others. Publish its public "
                    "key as docs/fetch.md says."),
    )
    bot_auth_agent = forms.URLField(
        required=False, initial="", label=_("Web Bot Auth signature agent"), assume_scheme="https",
        help_text=_("The https URL of the host that serves your key directory "
                    "(/.well-known/http-message-signatures-directory), sent as Signature-Agent."),
    )
    render_isolation = forms.ChoiceField(
        required=False, initial="netns", label=_("Browser isolation"),
        choices=[("netns", _("Network namespace and proxy (recommended)")),
                 ("flags", _("Browser flags and proxy only"))],
        help_text=_("The network namespace leaves the browser no way out but the guarding proxy; it needs "
                    "Linux and root. Flags only is for hosts without namespaces: one wall instead of two."),
    )
    render_max_concurrent = forms.IntegerField(
        required=False, initial=2, min_value=1, max_value=16, label=_("Concurrent renders"),
        help_text=_("Pages rendered at once by this server process; more wait their turn."),
    )
    render_memory_mb = forms.IntegerField(
        required=False, initial=1024, min_value=256, max_value=16_384, label=_("Browser memory cap (MiB)"),
        help_text=_("When the browser's processes grow past this, it is restarted between renders."),
    )
    # Limits (docs/operators.md, "Limits"): 0 means no limit.
    max_uses = LimitField(
        initial=20, label=_("Fetches per answer"),
        help_text=_("How many fetches the model may make for one answer (parts of a page it has already "
                    "fetched count too). 0: no limit."),
    )
    user_fetches_per_minute = LimitField(
        initial=30, label=_("Fetches per user per minute"),
        help_text=_("Downloads per user; pages already read in the turn or the shared cache are not "
                    "counted. 0: no limit."),
    )
    user_concurrent_fetches = LimitField(
        initial=4, label=_("Fetches at once per user"),
        help_text=_("Downloads one user may have running at once, across all their chats and all "
                    "workers; more wait a few seconds in line. 0: no limit."),
    )
    cache_ttl_seconds = cache_ttl_field("fetched texts")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        key, agent = cleaned.get("bot_auth_key"), cleaned.get("bot_auth_agent")
        if key:
            from .botauth import read_key

            try:
                read_key(key)
            except ValueError as err:
                self.add_error("bot_auth_key", str(err))
            if not agent:
                self.add_error("bot_auth_agent", _("Signed requests name the host of your key directory: set it."))
        if agent and not agent.startswith("https://"):
            self.add_error("bot_auth_agent", _("The signature agent must be an https URL."))
        # A field left empty takes its default: web fetch works with no saved options at all.
        for name, field in self.fields.items():
            if isinstance(field, SecretField):
                continue
            if cleaned.get(name) in (None, "") and name not in self.errors:
                cleaned[name] = field.initial() if callable(field.initial) else field.initial
        return cleaned


class WebFetchPlugin(Plugin):
    """Registers ``web_fetch``: enabled once listed, untrusted output, no user settings."""

    id = "web_fetch"
    name = _("Web fetch")
    options_form = WebFetchOptionsForm
    show_when = {
        **{
            name: ("render_javascript", ("auto", "always"))
            for name in ("render_with", "render_isolation", "render_max_concurrent", "render_memory_mb")
        },
        # Kept per service (render_api_key@firecrawl): switching service never sends another's key.
        "render_api_key": ("render_with", tuple(service.id for service in services.SERVICES)),
    }

    def check(self, options) -> list[str]:
        if options.get("render_javascript", "never") == "never":
            return []
        service = services.BY_ID.get(options.get("render_with") or "chromium")
        if service is not None:
            if service.needs_key and not options.get("render_api_key"):
                return [f"Web fetch renders pages with {service.name}, which needs an API key, and none is "
                        "set: pages that need JavaScript fail until one is."]
            return []
        from . import render

        return render.problems(options.get("render_isolation", "netns"))

    def test_input(self, tool_name: str) -> dict[str, Any] | None:
        return {"url": "https://example.com/"} if tool_name == "web_fetch" else None

    def setup(self, setup: PluginSetup) -> None:
        options = {**self.default_options(), **dict(setup.options)}
        setup.register_tool(Tool(
            name="web_fetch",
            description=DESCRIPTION,
            input_schema=input_schema(int(options["max_content_tokens"]),
                                      shared_cache=bool(options.get("cache_ttl_seconds"))),
            handler=WebFetch(FetchOptions.from_options(options)),
            default_enabled=True,
            user_toggle=bool(options.get("user_toggle", True)),
            untrusted=True,
            title=_("Web fetch"),  # as the plugin, the docs and the admin name it
            help_text=_(
                "The assistant may open web pages and PDFs (links you give it or it found) and cite them. "
                "Pages are fetched from this server, never from your network."
            ),
            max_uses=int(options.get("max_uses") or 0),
            max_uses_message=MAX_USES,
            output_schema=OUTPUT_SCHEMA,
        ))
