"""Masking secrets out of text that leaves the process: errors, logs, an engine's explanation."""
from __future__ import annotations

from collections.abc import Iterable

MASK = "[redacted]"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``[redacted]``, longest first.

    Secrets shorter than 4 characters are not masked: they would mangle ordinary words and are not
    keys anyone issues.
    """
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
