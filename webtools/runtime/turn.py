"""The turn wrapper: the host's entry point for the tools of one model turn."""
from __future__ import annotations

import json
import logging
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from webtools.exceptions import (
    INVALID_TOOL_INPUT,
    MAX_USES_EXCEEDED,
    QUERY_TOO_LONG,
    UNAVAILABLE,
    URL_TOO_LONG,
    ToolCancelled,
    ToolError,
    UnseenURL,
)
from webtools.net import displayed_urls

from .context import CancelSignal, Citations, ToolContext
from . import json_input
from .ingesters import Ingesters
from .limits import AnswerUses, LimitStore, MemoryStore, WindowUses
from .provenance import ConversationUrls
from .redaction import redact, redact_data
from .tools import Registry, Tool, ToolResult, select_tools
from .wrapping import model_text
from .wrapping import replay as _replay

logger = logging.getLogger("webtools.turn")

UNEXPECTED_ERROR = "The tool failed unexpectedly. The error was logged for the operator."

#: Calls of one step that run at once. A model rarely asks for more than a few; the bound keeps a
#: step that asks for fifty fetches from opening fifty connections from one chat request.
MAX_CONCURRENT_CALLS = 4


@dataclass(frozen=True)
class TurnState:
    """What a turn reads from the host at its start and again when it refreshes (``Turn(refresh=...)``):
    the registry (the operator's options are baked into its tools), the user's roles, settings and tool
    switches, and the secrets to mask."""

    registry: Registry
    roles: frozenset[str] = frozenset()
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    choices: Mapping[str, bool] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()


class Turn:
    """The tools of one turn: which are offered, running their calls, citations, and the turn cache.

    Build one per model turn (``webtools.turns.start_turn`` does it from the database), use it as a
    context manager or call ``close()``; the turn cache is dropped when the turn ends, whether it
    completes, errors or is cancelled. ``call`` never raises: every failure becomes an error result the
    model can read.
    """

    def __init__(
        self,
        *,
        registry: Registry,
        ingesters: Ingesters | None = None,
        user: str = "",
        conversation: str = "",
        roles: Iterable[str] = (),
        choices: Mapping[str, bool] | None = None,
        requested_tools: Iterable[str] | None = None,
        supports_tools: bool = True,
        fetch: Any = None,
        http: Any = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
        secrets: Iterable[str] = (),
        user_agent: str = "webtools",
        on_call: Callable[[ToolResult, dict], None] | None = None,
        messages: Iterable[str] = (),
        limits: LimitStore | None = None,
        shared_cache: Any = None,
        urls: ConversationUrls | None = None,
        turn_cache: dict | None = None,
        uses: AnswerUses | WindowUses | None = None,
        refresh: Callable[[], TurnState] | None = None,
        refresh_seconds: float = 120.0,
    ) -> None:
        self.registry = registry
        self.ingesters = ingesters or Ingesters()
        self.user = user
        self.conversation = conversation
        self.roles = frozenset(roles)
        self.signal = CancelSignal()
        self.citations = Citations()
        #: The URLs that appeared in the conversation: ``messages``, ``observe``d text, tools' outputs.
        #: A door that keeps a conversation across turns (MCP) hands over its record, its turn cache
        #: (``turn_cache``) and its count of ``max_uses`` (``uses``); by default each is the turn's own.
        self.urls = urls if urls is not None else ConversationUrls()
        for text in messages:
            self.urls.observe(text)
        self.fetch = fetch
        self.http = http
        self.user_agent = user_agent
        self._settings = settings or {}
        self._secrets = frozenset(s for s in secrets if s)
        self._on_call = on_call
        self._caches: dict[str, dict] | None = turn_cache if turn_cache is not None else {}
        #: Per-user and per-engine counts (a store of this turn alone unless the host hands one over).
        self.limits: LimitStore = limits if limits is not None else MemoryStore()
        self.shared_cache = shared_cache
        self._uses = uses if uses is not None else AnswerUses()
        requested_tools = None if requested_tools is None else list(requested_tools)
        self.tools: list[Tool] = select_tools(registry, choices or {}, requested_tools, supports_tools)
        self._offered = {tool.name: tool for tool in self.tools}
        self._selection = (requested_tools, supports_tools)
        self._refresh = refresh
        self._refresh_seconds = max(0.0, float(refresh_seconds))
        self._refreshed_at = time.monotonic()
        self._refresh_lock = threading.Lock()

    def observe(self, text: str) -> None:
        """Tell the turn what the user wrote (or other text of the conversation the host vouches for),
        so the URLs in it count as having appeared in the conversation (see ``web_fetch``'s
        ``only_conversation_urls``). Never pass the model's own messages."""
        self.urls.observe(text)

    # -- tool definitions ------------------------------------------------------------------------

    def openai_tools(self) -> list[dict]:
        """The offered tools in OpenAI Chat Completions' ``tools`` format."""
        return [tool.openai_format() for tool in self.tools]

    def anthropic_tools(self) -> list[dict]:
        """The offered tools in Anthropic Messages' ``tools`` format."""
        return [tool.anthropic_format() for tool in self.tools]

    # -- running calls ---------------------------------------------------------------------------

    def call(self, name: str, input: Any, call_id: str | None = None) -> ToolResult:
        """Run one tool call; the result holds the raw output and the text the model sees.

        ``on_call(result, event)`` (given at construction) hears of every call, with ``event`` holding
        ``tool``, ``plugin``, ``user``, ``conversation``, ``duration_ms``, ``outcome`` (``ok``,
        ``error`` or ``cancelled``) and the details the tool recorded with ``ctx.audit``.
        """
        return self._run(name, input, call_id, defer_citations=False)

    def call_many(
        self, calls: Sequence[tuple[str, Any, str | None]], *, max_workers: int = MAX_CONCURRENT_CALLS
    ) -> list[ToolResult]:
        """Run one step's calls ``(name, input, call_id)``, at most ``max_workers`` at once.

        Results come back in call order, and so do the reply's citations: each call's sources are held
        back until the step ends, then added call by call, so the order does not depend on which call
        finished first. A call still waiting for a worker when the turn is cancelled returns "The turn
        is over." without running.
        """
        calls = list(calls)
        if len(calls) <= 1 or max_workers <= 1:
            return [self.call(name, input, call_id) for name, input, call_id in calls]
        with ThreadPoolExecutor(min(max_workers, len(calls)), thread_name_prefix="webtools-call") as pool:
            futures = [
                pool.submit(self._run, name, input, call_id, defer_citations=True) for name, input, call_id in calls
            ]
            results = [future.result() for future in futures]
        for result in results:
            result.citations = [c for c in result.citations if self.citations.add(c.url, c.title) is not None]
        return results

    def _run(self, name: str, input: Any, call_id: str | None, *, defer_citations: bool) -> ToolResult:
        started = time.monotonic()
        details: dict = {}
        result = self._call(name, input, call_id or uuid.uuid4().hex, details, defer_citations)
        if self._on_call is not None:
            outcome = "ok" if not result.is_error else "error"
            if result.is_error and self.signal.cancelled:
                outcome = "cancelled"
            event = {
                "tool": name,
                "plugin": self.registry.owner(name),
                "user": self.user,
                "conversation": self.conversation,
                "duration_ms": round((time.monotonic() - started) * 1000, 1),
                "outcome": outcome,
                **details,
            }
            if result.is_error:
                event["error"] = result.output["error"]
                event["error_code"] = result.output["error_code"]
            try:
                self._on_call(result, event)
            except Exception:
                logger.exception("A receiver of tool call events failed.")
        return result

    def refresh_if_due(self) -> None:
        """Read the host's state again (``refresh``) when ``refresh_seconds`` have passed since it was
        last read: roles, settings, switches and the operator's options. A tool offered at the start
        stays callable only while it is still selected; one the operator or the user took away answers
        "not available". Runs before each call; a failing read keeps the turn as it was (logged)."""
        if self._refresh is None or time.monotonic() - self._refreshed_at < self._refresh_seconds:
            return
        with self._refresh_lock:
            if time.monotonic() - self._refreshed_at < self._refresh_seconds:
                return
            try:
                state = self._refresh()
            except Exception:
                logger.exception("Reading the turn's settings again failed; the turn keeps its own.")
                return
            self._refreshed_at = time.monotonic()
            requested, supports = self._selection
            if requested is not None:  # a requested tool the operator removed since is simply gone
                requested = [name for name in requested if name in state.registry]
            selected = {tool.name: tool for tool in select_tools(state.registry, state.choices, requested, supports)}
            self.registry = state.registry
            self.roles = frozenset(state.roles)
            self._settings = state.settings
            self._secrets = self._secrets | frozenset(s for s in state.secrets if s)
            self._offered = {name: selected[name] for name in self._offered if name in selected}
            self.tools = [self._offered[tool.name] for tool in self.tools if tool.name in self._offered]

    def _call(self, name: str, input: Any, call_id: str, details: dict, defer_citations: bool) -> ToolResult:
        self.refresh_if_due()
        tool = self._offered.get(name)
        if tool is None:
            return self._result(name, call_id, input, ToolError(f"The tool {name!r} is not available in this turn."),
                                None, [])
        if self._caches is None:
            return self._result(name, call_id, input, ToolError("The turn is over."), tool, [])
        if isinstance(input, str):
            try:
                input = json_input.loads(input or "{}")
            except json_input.JSONInputError as err:
                why = str(err) if isinstance(err, json_input.JSONTooDeep) else "not JSON."
                return self._result(name, call_id, input, ToolError(f"Invalid input for {name}: {why}",
                                                                    INVALID_TOOL_INPUT), tool, [])
        if json_input.text_problem(input):
            return self._result(name, call_id, input, ToolError(f"Invalid input for {name}: {json_input.UNSTORABLE}",
                                                                INVALID_TOOL_INPUT), tool, [])
        problem = self._validate(tool, input)
        if problem:
            return self._result(name, call_id, input, problem, tool, [])
        uses = self._take_uses(tool, input)
        if not uses:
            return self._result(name, call_id, input, ToolError(tool.limit_message(), MAX_USES_EXCEEDED), tool, [])

        cited: list = []
        ctx = ToolContext(
            user=self.user,
            conversation=self.conversation,
            roles=self.roles,
            signal=self.signal,
            fetch=self.fetch,
            http=self.http,
            citations=_CallCitations(self.citations, cited, defer_citations),
            turn_cache=self._caches.setdefault(name, {}),
            ingesters=self.ingesters,
            settings=self._settings.get(self.registry.owner(name) or "", {}),
            user_agent=self.user_agent,
            audit_details=details,
            conversation_urls=self.urls,
            limits=self.limits,
            shared_cache=self.shared_cache,
            uses_granted=len(uses),
        )
        try:
            self.signal.raise_if_cancelled()
            output = tool.handler(dict(input), ctx)
            json.dumps(output)
            # A page or an engine may echo a key back; no spelling of one reaches the model. A lone
            # surrogate (from JSON a tool read) would fail every encoder downstream: it is replaced.
            output = json_input.readable(redact_data(output, self._secrets))
            self.urls.observe_result(output, untrusted=tool.untrusted, call_input=input)
        except ToolError as err:
            if isinstance(err, UnseenURL):
                for use in uses:
                    use.release()  # refused before anything was sent: not a use
            return self._result(name, call_id, input, err, tool, cited, unseen_url=getattr(err, "url", None))
        except Exception:
            if self.signal.cancelled:
                return self._result(name, call_id, input, ToolCancelled(), tool, cited)
            trace = redact(displayed_urls(traceback.format_exc()), self._secrets)
            logger.error("Tool %s failed.\n%s", name, trace)
            return self._result(name, call_id, input, ToolError(UNEXPECTED_ERROR, UNAVAILABLE), tool, cited)
        return ToolResult(
            tool=name,
            call_id=call_id,
            input=input,
            output=output,
            is_error=False,
            untrusted=tool.untrusted,
            model_text=model_text(output, tool.untrusted),
            citations=cited,
        )

    def _take_uses(self, tool: Tool, input: Any) -> list:
        """Count a call of ``tool``: ``Tool.uses`` of its input (one by default), each a reservation of its
        ``max_uses``; fewer when the limit leaves room for fewer, none when it leaves none."""
        wanted = max(1, int(tool.uses(input))) if tool.uses is not None else 1
        uses = []
        for _ in range(wanted):
            use = self._uses.take(tool.name, tool.max_uses)
            if use is None:
                break
            uses.append(use)
        return uses

    def _validate(self, tool: Tool, input: Any) -> ToolError | None:
        validator = jsonschema.Draft202012Validator(tool.input_schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(input))
        if error is None:
            return None
        where = ".".join(str(part) for part in error.absolute_path)
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        code = INVALID_TOOL_INPUT
        if error.validator == "maxLength" and error.absolute_path:
            # A URL or a query longer than the schema allows has a code of its own.
            code = {"url": URL_TOO_LONG, "query": QUERY_TOO_LONG, "queries": QUERY_TOO_LONG}.get(
                str(error.absolute_path[0]), INVALID_TOOL_INPUT)
        return ToolError(f"Invalid input for {tool.name}: {where + ': ' if where else ''}{message}", code)

    def _result(self, name, call_id, input, error: ToolError, tool, cited, *, unseen_url=None) -> ToolResult:
        """An error result: the message and its stable code (``ToolError.code``), the one place they meet.
        The message goes to the model, the host's signals and logs: every URL in it is shown without user
        info, query or fragment (a share token in a query stays out of all three), and no spelling of a
        key is left in what remains."""
        output = {"error": redact(displayed_urls(error.message), self._secrets), "error_code": error.code}
        untrusted = bool(tool and tool.untrusted)
        return ToolResult(
            tool=name,
            call_id=call_id,
            input=input,
            output=output,
            is_error=True,
            untrusted=untrusted,
            model_text=model_text(output, untrusted),
            citations=cited,
            error_code=error.code,
            unseen_url=unseen_url,
        )

    def replay(self, results: Iterable[Mapping[str, Any]]) -> list[str]:
        """Render stored raw results of an earlier turn for the model, with fresh boundaries.

        The URLs of the results that counted when they were new (successful outputs of untrusted tools,
        less the URLs of their own ``input`` where stored) count again; errors never do, nor do results
        of a tool no longer registered (nobody can say where they came from).
        """
        results = list(results)
        for result in results:
            tool = self.registry.get(result.get("tool"))
            self.urls.observe_result(
                result.get("output"), untrusted=tool is not None and tool.untrusted,
                is_error=_is_error(result), call_input=result.get("input"),
            )
        return _replay(results, self.registry)

    # -- lifetime --------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the turn: running tools see the signal, and the turn cache is dropped."""
        self.signal.cancel()
        self.close()

    def close(self) -> None:
        """End the turn and drop the turn cache."""
        self._caches = None

    @property
    def closed(self) -> bool:
        return self._caches is None

    def __enter__(self) -> Turn:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_error(result: Mapping[str, Any]) -> bool:
    """A stored result that was an error (``is_error``, or the ``{"error": message}`` output of one)."""
    output = result.get("output")
    return bool(result.get("is_error")) or (
        isinstance(output, Mapping) and "error" in output and set(output) <= {"error", "error_code"}
    )


class _CallCitations:
    """A call's citations: forwarded to the turn's accumulator at once, or (for calls running side by
    side) kept apart until ``call_many`` adds them in call order. Remembers the ones it added."""

    def __init__(self, turn_citations: Citations, cited: list, defer: bool = False) -> None:
        self._turn = turn_citations
        self._target = Citations() if defer else turn_citations
        self._cited = cited

    def add(self, url: str, title: str | None = None):
        citation = self._target.add(url, title)
        if citation is not None:
            self._cited.append(citation)
        return citation

    def __iter__(self):
        return iter(self._turn)
