"""The runtime: the public API of webtools for tool plugins and for the host's model loop.

Plain Python: nothing here touches the database. ``webtools.host.start_turn`` builds a ``Turn`` from
the database for a host; tests and third-party plugins can build one directly.

May import ``net`` and the base only (docs/architecture.md): never a plugin, a model or the host.
"""
from webtools.exceptions import URL_NOT_IN_PRIOR_CONTEXT, ToolCancelled, ToolError, TurnError, UnseenURL

from . import cache, domains, json_input, limits, workers
from .budget import Deadline, ReadingTooLong
from .context import CancelSignal, Citation, Citations, ToolContext
from .ingesters import Ingester, IngestInput, Ingesters
from .plugins import (
    CommaListField,
    LimitField,
    Plugin,
    PluginSetup,
    SecretField,
    cache_ttl_field,
    scoped,
    secret_fields,
)
from .redaction import excerpt, masked_in_logs, redact
from .tools import Registry, Tool, ToolResult, select_tools
from .turn import Turn, TurnState
from .wrapping import output_text, replay, wrap_untrusted

__all__ = [
    "CancelSignal",
    "Citation",
    "Citations",
    "Deadline",
    "CommaListField",
    "IngestInput",
    "LimitField",
    "Ingester",
    "Ingesters",
    "Plugin",
    "ReadingTooLong",
    "PluginSetup",
    "Registry",
    "SecretField",
    "Tool",
    "ToolCancelled",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "Turn",
    "TurnState",
    "TurnError",
    "URL_NOT_IN_PRIOR_CONTEXT",
    "UnseenURL",
    "cache",
    "cache_ttl_field",
    "domains",
    "excerpt",
    "json_input",
    "limits",
    "workers",
    "masked_in_logs",
    "redact",
    "output_text",
    "replay",
    "scoped",
    "secret_fields",
    "select_tools",
    "wrap_untrusted",
]
