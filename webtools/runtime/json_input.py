"""Reading JSON that comes from outside: request bodies, the admin's test input, a model's tool arguments,
an engine's answer.

``json.loads`` recurses once per nesting level, so ``[`` repeated 100000 times ends in a
``RecursionError`` (a 500 in a view) instead of an error message. ``loads`` measures the nesting before
parsing and refuses what is deeper than ``MAX_DEPTH``, and refuses ``NaN`` and ``Infinity``, which are not
JSON. ``text_problem`` finds a string that cannot be stored or sent: a NUL (PostgreSQL refuses it in
``jsonb`` and text) or a lone surrogate (``"\\ud800"`` is valid JSON, but no UTF-8 encoder takes it, so
every later page that shows the value fails). ``readable`` repairs such strings in values stored before
they were refused.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

#: The deepest nesting accepted: far more than any settings body, tool input or engine answer needs.
MAX_DEPTH = 64

# A string (to its closing quote, or to the end when it has none) or a bracket, read left to right,
# so the scan is linear whatever the quotes and backslashes.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")

NOT_JSON = "The body is not valid JSON."
TOO_DEEP = "The JSON is nested more than {depth} levels deep."
UNSTORABLE = "Text must not contain NUL characters or unpaired surrogates."


class JSONInputError(ValueError):
    """The text is not JSON this app reads; the message says why, for the user or the model."""


class JSONTooDeep(JSONInputError):
    """The text nests arrays and objects deeper than the limit."""


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text``, brackets inside strings not counted."""
    steps = {"[": 1, "{": 1, "]": -1, "}": -1}
    return max(accumulate(steps.get(m.group(), 0) for m in _TOKEN.finditer(text)), default=0)


def _refuse_constant(name: str) -> Any:
    raise JSONInputError(f"{name} is not JSON.")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``text`` parsed, or ``JSONInputError``: not UTF-8, not JSON, nested deeper than ``max_depth``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise JSONInputError("The body is not UTF-8 text.") from err
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        raise JSONTooDeep(TOO_DEEP.format(depth=max_depth))
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except JSONInputError:
        raise
    except (ValueError, RecursionError) as err:
        # ValueError covers a malformed document and a number too long to convert.
        message = f"Not JSON: {err.msg}." if isinstance(err, json.JSONDecodeError) else NOT_JSON
        raise JSONInputError(message) from err


def _strings(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield path, key
            yield from _strings(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def text_problem(value: Any) -> tuple[tuple, str] | None:
    """``(path, message)`` for the first string in ``value`` (keys included) holding a NUL or a lone
    surrogate; ``path`` is the keys and indexes that lead to it (``()`` for the value itself)."""
    for path, text in _strings(value, ()):
        if _UNSTORABLE.search(text):
            return path, UNSTORABLE
    return None


def readable(value: Any) -> Any:
    """``value`` with every NUL dropped and every lone surrogate replaced by U+FFFD, in strings and keys:
    what a stored value from before these were refused is shown and sent as."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value.replace("\x00", "")) if _UNSTORABLE.search(value) else value
    if isinstance(value, dict):
        return {readable(k): readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(item) for item in value]
    return value
