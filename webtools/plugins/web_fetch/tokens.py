"""A token estimate for the text web_fetch returns, so a part fits the model's budget.

A real tokenizer is model-specific and would be a heavy dependency (``tiktoken`` downloads its tables
at run time), so parts are cut by an estimate instead: an ASCII character counts a quarter of a token
(OpenAI's rule of thumb: a token is about four characters of English text) and any other character a
whole token. CJK text takes about one token a character and most other scripts less, so a non-English
part is rather under its cap than over. See docs/fetch.md.
"""
from __future__ import annotations

#: ASCII characters per token of the estimate.
ASCII_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """The estimated tokens of ``text``: a quarter for each ASCII character, one for any other."""
    ascii_count = len(text.encode("ascii", "ignore"))
    return -(-ascii_count // ASCII_PER_TOKEN) + (len(text) - ascii_count)


def characters_within(text: str, start: int, tokens: int, limit: int) -> int:
    """How many characters of ``text`` from ``start`` fit in ``tokens`` estimated tokens: at most
    ``limit``, and at least one (so paging always moves on)."""
    window = text[start:start + limit]
    budget = tokens * ASCII_PER_TOKEN  # in quarter tokens
    if window.isascii():
        return max(1, min(len(window), budget))
    used = 0
    for index, char in enumerate(window):
        used += 1 if char < "\x80" else ASCII_PER_TOKEN
        if used > budget:
            return max(1, index)
    return len(window)
