"""What both adapters share: reading SDK objects and dicts alike, and running one step's calls."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from webtools.runtime import ToolResult, Turn
from webtools.runtime.turn import MAX_CONCURRENT_CALLS


@dataclass(frozen=True)
class Call:
    """One tool call as the model asked for it: ``input`` is a dict or the model's JSON text."""

    id: str
    name: str
    input: Any


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` for an SDK object."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def run_calls(
    turn: Turn, calls: Sequence[Call], *, max_workers: int = MAX_CONCURRENT_CALLS
) -> list[ToolResult]:
    """Run one step's ``calls`` with ``Turn.call_many``: at most ``max_workers`` at once, results and
    citations in call order. ``turn.call`` never raises, so one failing call cannot lose the others."""
    return turn.call_many([(c.name, c.input, c.id) for c in calls], max_workers=max_workers)


def text_parts(content: Any) -> Iterable[str]:
    """The text of a message's ``content``: a string, or the ``text`` of its text parts (``type``
    ``text`` in both APIs; the other parts, images and files, hold no text the user typed)."""
    if isinstance(content, str):
        yield content
        return
    for part in content or []:
        if isinstance(part, str):
            yield part
        elif field(part, "type") == "text" and isinstance(field(part, "text"), str):
            yield field(part, "text")
