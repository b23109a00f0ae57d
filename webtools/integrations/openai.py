"""OpenAI Chat Completions: the turn's tools, running a response's ``tool_calls``, ``tool`` messages.

Works with the ``openai`` SDK's objects and with the plain dicts of the HTTP API (``requests``, or any
OpenAI-compatible server: llama.cpp, Ollama, vLLM), and never imports the SDK. A loop (README.md and
docs/integrating.md have it whole, run by ``tests/test_doc_loops.py``)::

    openai.observe(turn, messages)    # before the model runs: the URLs the user wrote may be fetched
    tools = openai.tools(turn) or None
    for _ in range(MAX_STEPS):        # a model that keeps asking for tools is stopped
        message = client.chat.completions.create(model=..., messages=messages, tools=tools).choices[0].message
        messages.append(openai.assistant_message(message))
        if not openai.tool_calls(message):
            break
        messages += openai.run_tool_calls(turn, message)
    sources = openai.citations(turn)
"""
from __future__ import annotations

from typing import Any

from webtools.runtime import ToolResult, Turn

from .base import MAX_CONCURRENT_CALLS, Call, field, run_calls, text_parts


def tools(turn: Turn) -> list[dict]:
    """The offered tools in the ``tools`` format (empty when none: send ``tools=None`` then)."""
    return turn.openai_tools()


def observe(turn: Turn, messages: Any) -> None:
    """Tell the turn what the conversation holds, so the URLs that someone other than the model wrote
    may be fetched: the text of every ``user`` message, and every ``tool`` message that holds a
    successful untrusted result (less the URLs of its own call's arguments). ``system`` and
    ``assistant`` messages, tool arguments and error results are not counted: a URL the model wrote
    may be one a page dictated (``webtools.runtime.provenance`` has the rule)."""
    messages = list(messages or [])
    arguments = {
        field(call, "id"): field(field(call, "function"), "arguments")
        for message in messages if field(message, "role") == "assistant"
        for call in field(message, "tool_calls") or []
    }
    for message in messages:
        role = field(message, "role")
        if role == "user":
            for text in text_parts(field(message, "content")):
                turn.observe(text)
        elif role == "tool":
            call_input = arguments.get(field(message, "tool_call_id"))
            for text in text_parts(field(message, "content")):
                turn.urls.observe_tool_message(text, call_input=call_input)


def tool_calls(message: Any) -> list[Call]:
    """The function calls of an assistant message (SDK object or dict), in order."""
    calls = []
    for call in field(message, "tool_calls") or []:
        if field(call, "type", "function") != "function":
            continue
        function = field(call, "function")
        calls.append(Call(id=field(call, "id") or "", name=field(function, "name") or "",
                          input=field(function, "arguments") or "{}"))
    return calls


def call_tools(turn: Turn, message: Any, *, max_workers: int = MAX_CONCURRENT_CALLS) -> list[ToolResult]:
    """Run the message's tool calls (concurrently, bounded); the results in call order."""
    return run_calls(turn, tool_calls(message), max_workers=max_workers)


def tool_message(result: ToolResult) -> dict:
    """The ``tool`` message answering one call: the text the model may see, wrapped when untrusted."""
    return {"role": "tool", "tool_call_id": result.call_id, "content": result.model_text}


def run_tool_calls(turn: Turn, message: Any, *, max_workers: int = MAX_CONCURRENT_CALLS) -> list[dict]:
    """Run the message's tool calls and return the ``tool`` messages to append, in call order."""
    return [tool_message(result) for result in call_tools(turn, message, max_workers=max_workers)]


def assistant_message(message: Any) -> dict:
    """An assistant message (SDK object or dict) as the plain dict to append to ``messages``."""
    out: dict[str, Any] = {"role": "assistant", "content": field(message, "content")}
    calls = field(message, "tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                "id": field(call, "id"),
                "type": "function",
                "function": {
                    "name": field(field(call, "function"), "name"),
                    "arguments": field(field(call, "function"), "arguments") or "{}",
                },
            }
            for call in calls
        ]
    return out


def citations(turn: Turn) -> list[dict]:
    """The reply's sources, ``[{"url", "title"}]``, each URL once."""
    return turn.citations.as_list()


class StreamedMessage:
    """Builds the assistant message from ``stream=True`` chunks (SDK objects or parsed SSE dicts).

    Text arrives in ``delta.content`` pieces; a tool call arrives as pieces under its ``index``: the id
    and name first, the JSON arguments in fragments. ``add`` returns the new text of the chunk, so a
    host can pass it on to its own client as it comes.
    """

    def __init__(self) -> None:
        self.content = ""
        self.finish_reason: str | None = None
        self._calls: dict[int, dict] = {}

    def add(self, chunk: Any) -> str:
        text = ""
        for choice in field(chunk, "choices") or []:
            if field(choice, "index", 0) != 0:
                continue
            delta = field(choice, "delta") or {}
            piece = field(delta, "content")
            if piece:
                text += piece
            for part in field(delta, "tool_calls") or []:
                index = field(part, "index", 0)
                call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                call["id"] = field(part, "id") or call["id"]
                function = field(part, "function")
                call["name"] += field(function, "name") or ""
                call["arguments"] += field(function, "arguments") or ""
            self.finish_reason = field(choice, "finish_reason") or self.finish_reason
        self.content += text
        return text

    def message(self) -> dict:
        """The whole assistant message as a dict: content and ``tool_calls`` (when any)."""
        out: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self._calls:
            out["tool_calls"] = [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self._calls.items())
            ]
        return out
