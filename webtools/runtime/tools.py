"""Tools, their results, and the registry that records which plugin registered each tool."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webtools.exceptions import TurnError, WebtoolsConfigurationError

if TYPE_CHECKING:
    from .context import ToolContext  # noqa: F401  (used in the Handler alias)

Handler = Callable[[dict, "ToolContext"], Any]


@dataclass(frozen=True)
class Tool:
    """A function the model may call.

    ``handler(input, ctx)`` receives input already validated against ``input_schema`` and returns
    JSON-serialisable output, or raises ``ToolError`` with a message for the model.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
    #: Offered to the model when the host names no tools and the user has not switched it.
    default_enabled: bool = False
    #: Whether users may switch the tool on and off in their settings.
    user_toggle: bool = False
    #: Output comes from outside the user's control (the web) and is wrapped before the model sees it.
    untrusted: bool = False
    #: What people read (the settings page, the admin): a human name ("Web search") and one sentence on
    #: what switching the tool on means. ``description`` is written for the model.
    title: str = ""
    help_text: str = ""

    @property
    def display_title(self) -> str:
        """``title``, else the name made readable (``web_search`` → "Web search")."""
        return str(self.title) if self.title else self.name.replace("_", " ").capitalize()
    #: Calls allowed in one turn (0: no limit); the call past it is an error the model can act on.
    max_uses: int = 0
    #: That error's message; the default names the tool.
    max_uses_message: str = ""
    #: The JSON Schema of a successful call's output, for doors that publish it (MCP's ``outputSchema``,
    #: which clients check every successful result against); None: not published.
    output_schema: Mapping[str, Any] | None = None
    #: How many uses a call counts (``uses(input)``; web_search's ``queries``: one each); None: one. A call
    #: that wants more than are left gets what is left (``ToolContext.uses_granted``), at least one.
    uses: Callable[[Mapping[str, Any]], int] | None = None

    def limit_message(self) -> str:
        return self.max_uses_message or f"The {self.name} limit for this answer is reached."

    def is_enabled(self, stored_choice: bool | None) -> bool:
        """The user's stored choice wins only for a tool with ``user_toggle``; else the default."""
        if self.user_toggle and stored_choice is not None:
            return stored_choice
        return self.default_enabled

    def openai_format(self) -> dict:
        """The tool in OpenAI Chat Completions' ``tools`` format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": dict(self.input_schema)},
        }

    def anthropic_format(self) -> dict:
        """The tool in Anthropic Messages' ``tools`` format."""
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}


@dataclass
class ToolResult:
    """One call's outcome. ``output`` is the raw output (what a host stores); ``model_text`` is what the
    model sees, wrapped when the tool is untrusted."""

    tool: str
    call_id: str
    input: Any
    output: Any
    is_error: bool
    untrusted: bool
    model_text: str
    citations: list = field(default_factory=list)
    #: The failure's stable name when the error has one (``ToolError.code``).
    error_code: str | None = None
    #: For a ``url_not_in_prior_context`` refusal: the canonical URL that was refused (nothing was sent).
    unseen_url: str | None = None


class Registry:
    """The tools of the installed plugins, each with the id of the plugin that registered it."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._owners: dict[str, str] = {}

    def register(self, tool: Tool, plugin_id: str) -> None:
        if tool.name in self._tools:
            raise WebtoolsConfigurationError(
                f"Tool {tool.name!r} is registered by both {self._owners[tool.name]!r} and {plugin_id!r}."
            )
        self._tools[tool.name] = tool
        self._owners[tool.name] = plugin_id

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def owner(self, name: str) -> str | None:
        return self._owners.get(name)

    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def tools_of(self, plugin_id: str) -> list[Tool]:
        return [tool for name, tool in self._tools.items() if self._owners[name] == plugin_id]

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def select_tools(
    registry: Registry,
    choices: Mapping[str, bool],
    requested: Iterable[str] | None,
    supports_tools: bool,
) -> list[Tool]:
    """The tools offered to the model in a turn.

    ``requested`` given (even empty): exactly those; an unknown name, or any name for a model without
    tool support, raises ``TurnError``. ``requested`` absent: the user's enabled tools, and none (without
    failing) when the model lacks tool support.
    """
    if requested is not None:
        names = list(dict.fromkeys(requested))
        unknown = [name for name in names if name not in registry]
        if unknown:
            raise TurnError(f"Unknown tool: {', '.join(unknown)}.")
        if names and not supports_tools:
            raise TurnError("This model cannot use tools, but the request names tools.")
        return [registry.get(name) for name in names]
    if not supports_tools:
        return []
    return [tool for tool in registry.tools() if tool.is_enabled(choices.get(tool.name))]
