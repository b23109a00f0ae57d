"""Masking secrets out of text that leaves the process: errors, logs, tool output.

An engine or model server that rejects a key often echoes it back, and not always verbatim: in
capitals, cut short (``ADMINKEY-9d8...5b4c``), inside a base64 ``Authorization`` value, spaced out,
or as HTML entities and percent escapes. So a copy is looked for in a normalised reading of the text:

1. escapes are decoded (``&#65;``, ``&#x41;``, ``&amp;``, ``%41``, ``\\u0041``, ``\\x41``) and
   compatibility forms folded (full-width ``Ａ`` is ``A``), each decoded character remembering where it
   came from; the text is also read with its escapes as they stand, since ``%41`` may be part of a key,
   and with only its HTML character references decoded, since an HTML page escapes a key's ``<`` as
   ``&lt;`` and leaves its ``%01`` (or ``\\u0041``) as it is; and with its references decoded first and
   then the other escapes of what they give (``%0&#49;`` is ``%01``, a URL in an HTML attribute);
2. only letters and digits are kept, in lower case, so spacing, separators and case do not matter;
3. every run of ``PARTIAL`` characters that also occurs in a normalised form of a secret marks its
   source text for masking. The forms of a secret are the secret itself and the characters of its
   base64 encodings (standard and URL-safe, at each of the three byte offsets it can start at inside a
   longer encoded value, padding never counted) that depend on the secret alone, and its hex digits.

A run shorter than ``PARTIAL`` is not masked: four or five characters of a key say little about it,
and masking every short run would mangle ordinary words. A secret whose normalised form is shorter than
``PARTIAL`` is masked only whole.
"""
from __future__ import annotations

import base64
import html
import logging
import re
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

MASK = "[redacted]"
#: The shortest run of a secret's characters (letters and digits) that is masked on its own.
PARTIAL = 8
#: How much of a text ``excerpt`` masks; it cuts only after masking, so a cut never shows a part of a
#: key longer than ``PARTIAL`` would.
EXCERPT_SOURCE_CHARACTERS = 10_000
#: Secrets shorter than this are not masked: they would mangle ordinary words and no one issues them.
MIN_SECRET = 4

#: Sampling for the quick test: runs of ``_SAMPLE`` characters taken every ``_STRIDE`` characters of a
#: form; any shared run of ``PARTIAL`` characters contains one (``_SAMPLE + _STRIDE - 1 <= PARTIAL``).
_SAMPLE = 6
_STRIDE = 3

# An escape. Each starts with a character that is not a letter or digit, so escapes are found alike
# whether the letters and digits around them are read one by one or not at all.
# HTML character references, decoded by ``html.unescape`` as browsers read them: numeric ones with or
# without ``;``, named ones by the longest known name in the case the HTML standard lists (``&lt;`` and
# ``&LT;`` are both ``<``), legacy names (``&lt``) without ``;``.
_REFERENCE = r"&(?P<ref>\#[0-9]+;?|\#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]{0,31};?)"
_PERCENT = r"%(?P<pct>[0-9A-Fa-f]{2})"
_BACKSLASH = r"\\[uU](?P<uni>[0-9a-fA-F]{4})|\\[xX](?P<byte>[0-9a-fA-F]{2})"
_ESCAPE = "|".join((_REFERENCE, _PERCENT, _BACKSLASH))
_CHARACTERS = r"(?P<alnum>[A-Za-z0-9]+)|(?P<other>[^\x00-\x7f])"
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


class _FoldTable(dict):
    """``str.translate`` table: a character to its letters and digits in lower case (full-width ``Ａ``
    is ``a``), or to nothing. Filled as characters are met, so known ones are looked up in C."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        if not char.isascii():
            char = unicodedata.normalize("NFKC", char)
        folded = _NOT_ALNUM.sub("", char.lower()) or None
        if len(self) < 200_000:
            self[code] = folded
        return folded


_FOLD = _FoldTable()


def _unescape(match: re.Match) -> str:
    kind = match.lastgroup
    if kind == "ref":
        return html.unescape(match.group())
    return chr(int(match.group(kind), 16))


class _Reading:
    """One way of reading a text's escapes: which are decoded (``escapes``; none when ``None``), and
    the tokens of the positional reading (escapes, runs of letters and digits, non-ASCII characters)."""

    def __init__(self, escape: str | None) -> None:
        self.escapes = re.compile(escape) if escape else None
        self.tokens = re.compile("|".join(filter(None, (escape, _CHARACTERS))))

    def quick(self, text: str) -> str:
        """The normalised reading of ``text`` without positions."""
        return (self.escapes.sub(_unescape, text) if self.escapes else text).translate(_FOLD)


_EVERY_ESCAPE = _Reading(_ESCAPE)
#: The readings of a text whose HTML character references were decoded first (``_references_decoded``).
_AFTER_REFERENCES = (_Reading(_PERCENT), _Reading(f"{_PERCENT}|{_BACKSLASH}"))
_REFERENCES_ONLY = _Reading(_REFERENCE)
_AS_IT_STANDS = _Reading(None)


def _readings(text: str) -> Iterator[_Reading]:
    """The readings of ``text`` (module docstring) that may differ: every escape decoded; escapes as
    they stand (``%41`` may be a key's own characters, or ``%00`` then ``41``); and, when the text has
    both HTML references and other escapes, only the references decoded (an HTML-escaped key holding
    ``%01``: ``000000&lt;%01`` is ``000000<%01``)."""
    yield _EVERY_ESCAPE
    yield _AS_IT_STANDS
    if "&" in text and ("%" in text or "\\" in text):
        yield _REFERENCES_ONLY


def _view(text: str, reading: _Reading) -> tuple[str, list[int], list[int]]:
    """A normalised reading of ``text``, with the start and end in ``text`` of each character's source."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for match in reading.tokens.finditer(text):
        start, end = match.span()
        if match.lastgroup == "alnum":
            chars.append(match.group().lower())
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
            continue
        decoded = (match.group() if match.lastgroup == "other" else _unescape(match)).translate(_FOLD)
        if decoded:
            chars.append(decoded)
            starts.extend([start] * len(decoded))
            ends.extend([end] * len(decoded))
    return "".join(chars), starts, ends


def _references_decoded(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with its HTML character references decoded, with the start and end in ``text`` of each
    character's source: the first of two decodings, for an escape written inside a reference's result
    (``%0&#49;`` is ``%01``, an attribute's URL escaped for HTML)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for match in _REFERENCES_ONLY.escapes.finditer(text):
        start, end = match.span()
        out.append(text[position:start])
        starts.extend(range(position, start))
        ends.extend(range(position + 1, start + 1))
        decoded = html.unescape(match.group())
        out.append(decoded)
        starts.extend([start] * len(decoded))
        ends.extend([end] * len(decoded))
        position = end
    out.append(text[position:])
    starts.extend(range(position, len(text)))
    ends.extend(range(position + 1, len(text) + 1))
    return "".join(out), starts, ends


def _base64_cores(raw: bytes) -> set[str]:
    """The base64 characters (standard and URL-safe) that depend only on ``raw``, whatever precedes or
    follows it inside a longer encoded value."""
    cores = set()
    n = len(raw)
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        # Character j carries bits [6j, 6j + 6); keep those inside the secret's bits.
        first = -(-8 * offset // 6)
        last = 8 * (offset + n) // 6
        core = encoded[first:last]
        cores.add(core)
        cores.add(core.translate(str.maketrans("+/", "-_")))
    return cores


def _forms(secret: str) -> set[str]:
    """The normalised forms of ``secret`` that are looked for."""
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret.translate(_FOLD), raw.hex()}
    forms.update(core.translate(_FOLD) for core in _base64_cores(raw))
    return {form for form in forms if form}


class Redactor:
    """Masks every form of some secrets; build one per set of secrets and call it on many texts."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted(
            {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET}, key=len, reverse=True
        )
        #: The runs whose every occurrence is masked, and a sample of them for the quick test.
        self.runs: set[str] = set()
        self.samples: set[str] = set()
        for secret in self.secrets:
            for form in _forms(secret):
                if len(form) <= PARTIAL:
                    self.runs.add(form)
                    self.samples.add(form)
                    continue
                self.runs.update(form[i:i + PARTIAL] for i in range(len(form) - PARTIAL + 1))
                self.samples.update(form[i:i + _SAMPLE] for i in range(0, len(form) - _SAMPLE + 1, _STRIDE))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __call__(self, text: str) -> str:
        if not self.secrets or not text:
            return text
        # Verbatim copies first, so a secret with too few letters and digits to find is still masked.
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        spans = []
        for reading in _readings(text):
            quick = reading.quick(text)
            if not any(sample in quick for sample in self.samples):
                continue
            view, starts, ends = _view(text, reading)
            self._find(view, starts, ends, spans)
        if "&" in text and ("%" in text or "\\" in text):
            # Two decodings, one after the other: the references, then the other escapes of what they give
            # (percent escapes alone, as a URL in an HTML attribute is read, or with the backslash ones).
            decoded = _REFERENCES_ONLY.escapes.sub(_unescape, text)
            found = [reading for reading in _AFTER_REFERENCES
                     if any(sample in reading.quick(decoded) for sample in self.samples)]
            if found:  # where each character came from, read only then
                inner, sources, source_ends = _references_decoded(text)
                for reading in found:
                    view, starts, ends = _view(inner, reading)
                    self._find(view, [sources[i] for i in starts], [source_ends[i - 1] for i in ends], spans)
        if not spans:
            return text
        out = []
        position = 0
        for start, end in _merged(spans):
            out.append(text[position:start])
            out.append(MASK)
            position = end
        out.append(text[position:])
        return "".join(out)

    def _find(self, view: str, starts: list[int], ends: list[int], spans: list[tuple[int, int]]) -> None:
        """Add to ``spans`` the source (``starts``/``ends`` of each character of ``view``) of every run."""
        for run in self.runs:
            i = view.find(run)
            while i >= 0:
                spans.append((starts[i], ends[i + len(run) - 1]))
                i = view.find(run, i + 1)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans joined, in order."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@lru_cache(maxsize=64)
def _redactor(secrets: frozenset[str]) -> Redactor:
    return Redactor(secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every copy of each secret replaced by ``[redacted]``: verbatim, in any case, in
    part (``PARTIAL`` characters or more), base64-encoded, spaced out or escaped (module docstring).

    Secrets shorter than 4 characters are not masked.
    """
    return _redactor(frozenset(s for s in secrets if isinstance(s, str)))(text)


def excerpt(text: str, secrets: Iterable[str], limit: int = 300) -> str:
    """The start of ``text`` for a log record: masked first, then whitespace collapsed and cut to
    ``limit`` characters (an ellipsis marking the cut)."""
    masked = " ".join(redact(text[:EXCERPT_SOURCE_CHARACTERS], secrets).split())
    return masked if len(masked) <= limit else masked[: limit - 1] + "…"


def redact_data(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (JSON-like data: dicts, lists, strings) with every string, keys included, masked."""
    redactor = secrets if isinstance(secrets, Redactor) else _redactor(frozenset(secrets))
    if not redactor:
        return value
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {redact_data(k, redactor): redact_data(v, redactor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(item, redactor) for item in value]
    return value


class _MaskingFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        return True


@contextmanager
def masked_in_logs(secrets: Iterable[str], *loggers: str) -> Iterator[None]:
    """Mask ``secrets`` in what the named loggers write while the block runs.

    For libraries that log what they send: urllib3 logs every request line, query string included, at
    DEBUG, which for the few APIs that take a key only in the URL (SerpApi) would put the key in the log.
    """
    secrets = tuple(s for s in secrets if s)
    if not secrets:
        yield
        return
    masking = _MaskingFilter(secrets)
    targets = [logging.getLogger(name) for name in loggers]
    for target in targets:
        target.addFilter(masking)
    try:
        yield
    finally:
        for target in targets:
            target.removeFilter(masking)
