"""Anthropic Messages: the turn's tools, running a response's ``tool_use`` blocks, ``tool_result`` blocks.

Works with the ``anthropic`` SDK's objects and with the plain dicts of the HTTP API, and never imports
the SDK. A loop (docs/integrating.md has it whole, run by ``tests/test_doc_loops.py``)::

    anthropic.observe(turn, messages)   # before the model runs: the URLs the user wrote may be fetched
    tools = anthropic.tools(turn)
    for _ in range(MAX_STEPS):          # a model that keeps asking for tools is stopped
        response = client.messages.create(model=..., max_tokens=..., messages=messages, tools=tools)
        messages.append({"role": "assistant", "content": response.content})
        if not anthropic.tool_uses(response):
            break
        messages.append({"role": "user", "content": anthropic.run_tool_uses(turn, response)})
    sources = anthropic.citations(turn)
"""
from __future__ import annotations

from typing import Any

from webtools.runtime import ToolResult, Turn

from .base import MAX_CONCURRENT_CALLS, Call, field, run_calls, text_parts


def tools(turn: Turn) -> list[dict]:
    """The offered tools in the Messages ``tools`` format."""
    return turn.anthropic_tools()


def observe(turn: Turn, messages: Any) -> None:
    """Tell the turn what the conversation holds, so the URLs that someone other than the model wrote
    may be fetched: the text blocks of every ``user`` message, and every ``tool_result`` block that
    holds a successful untrusted result (less the URLs of its own ``tool_use`` input). ``assistant``
    messages, tool inputs and error results (``is_error``) are not counted: a URL the model wrote may
    be one a page dictated (``webtools.runtime.provenance`` has the rule)."""
    messages = list(messages or [])
    inputs = {
        field(block, "id"): field(block, "input")
        for message in messages if field(message, "role") == "assistant"
        for block in _blocks(field(message, "content"))
        if field(block, "type") == "tool_use"
    }
    for message in messages:
        if field(message, "role") != "user":
            continue
        content = field(message, "content")
        for text in text_parts(content):
            turn.observe(text)
        for block in _blocks(content):
            if field(block, "type") == "tool_result":
                call_input = inputs.get(field(block, "tool_use_id"))
                for text in text_parts(field(block, "content")):
                    turn.urls.observe_tool_message(
                        text, is_error=bool(field(block, "is_error")), call_input=call_input
                    )


def _blocks(content: Any) -> list:
    return content if isinstance(content, list) else []


def tool_uses(message: Any) -> list[Call]:
    """The ``tool_use`` blocks of a response (or of its ``content`` list), in order."""
    content = message if isinstance(message, list) else field(message, "content") or []
    if isinstance(content, str):
        return []
    return [
        Call(id=field(block, "id") or "", name=field(block, "name") or "", input=field(block, "input") or {})
        for block in content
        if field(block, "type") == "tool_use"
    ]


def call_tools(turn: Turn, message: Any, *, max_workers: int = MAX_CONCURRENT_CALLS) -> list[ToolResult]:
    """Run the response's tool uses (concurrently, bounded); the results in call order."""
    return run_calls(turn, tool_uses(message), max_workers=max_workers)


def tool_result_block(result: ToolResult) -> dict:
    """The ``tool_result`` block answering one tool use; ``is_error`` set for errors."""
    block: dict[str, Any] = {
        "type": "tool_result", "tool_use_id": result.call_id, "content": result.model_text,
    }
    if result.is_error:
        block["is_error"] = True
    return block


def run_tool_uses(turn: Turn, message: Any, *, max_workers: int = MAX_CONCURRENT_CALLS) -> list[dict]:
    """Run the response's tool uses and return the ``tool_result`` blocks for the next user message."""
    return [tool_result_block(result) for result in call_tools(turn, message, max_workers=max_workers)]


def citations(turn: Turn) -> list[dict]:
    """The reply's sources, ``[{"url", "title"}]``, each URL once."""
    return turn.citations.as_list()
