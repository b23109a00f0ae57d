"""Focused reading: the passages of a page's Markdown that answer a query, within a token budget.

``focus(text, query, tokens=..., max_characters=...)`` cuts the text into passages (its paragraphs, list
and table blocks and fenced code, long ones split at line and sentence ends), ranks them by BM25 (the
``bm25s`` library, Lucene's variant) against the query, each passage indexed with the headings above it,
and keeps the best that fit the budget. The result holds them in page order, each preceded by its
headings, the text between them replaced by ``[… N characters skipped …]``, and says which character
ranges of ``text`` it holds, so that the tool's ``offset`` reads on from any of them.

It knows nothing of HTTP or paging: the tool decides when to focus (a query, the first part, a page
longer than the part). Words are Unicode ``\\w+`` runs, lowercased, stop words dropped and stemmed by
the Snowball stemmer of the page's language (``PyStemmer``; English when the page does not say or the
language has none). Ranking is local and cheap beside extraction: see ``bench/focus.py``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .tokens import estimate_tokens

__all__ = ["Focused", "focus", "passages"]

#: A passage is at most this many characters: longer blocks are split at line, then sentence, ends.
MAX_PASSAGE = 1_200
#: ... and at most this share of the budget, so that a part holds several passages.
PASSAGE_SHARE = 3
#: Candidates tried in score order before giving up on filling the rest of the budget.
MAX_CANDIDATES = 300

_HEADING = re.compile(r" {0,3}(#{1,6})\s+\S")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LINK_URL = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*\)")
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")

#: Page languages (their primary subtag) with a Snowball stemmer and a stop word list of ``bm25s``.
_LANGUAGES = {
    "en": ("english", "STOPWORDS_EN"), "de": ("german", "STOPWORDS_GERMAN"),
    "fr": ("french", "STOPWORDS_FRENCH"), "es": ("spanish", "STOPWORDS_SPANISH"),
    "pt": ("portuguese", "STOPWORDS_PORTUGUESE"), "it": ("italian", "STOPWORDS_ITALIAN"),
    "nl": ("dutch", "STOPWORDS_DUTCH"), "ru": ("russian", "STOPWORDS_RUSSIAN"),
    "sv": ("swedish", "STOPWORDS_SWEDISH"), "no": ("norwegian", "STOPWORDS_NORWEGIAN"),
    "nb": ("norwegian", "STOPWORDS_NORWEGIAN"), "da": ("danish", "STOPWORDS_DANISH"),
}


@dataclass(frozen=True)
class Focused:
    """The chosen passages: ``content`` as the model reads it, ``ranges`` the ``[start, end)`` character
    ranges of the page's text it holds, in page order."""

    content: str
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Passage:
    """``text[start:end]``, with the ``[start, end)`` ranges of the headings above it, outermost first."""

    start: int
    end: int
    headings: tuple[tuple[int, int], ...]


def focus(text: str, query: str, *, tokens: int, max_characters: int, language: str | None = None) -> Focused | None:
    """The passages of ``text`` most relevant to ``query`` that fit in ``tokens`` estimated tokens and
    ``max_characters`` characters, in page order; None when no passage shares a word with the query."""
    budget = min(tokens * 4, max_characters)
    found = passages(text, max(100, min(MAX_PASSAGE, budget // PASSAGE_SHARE)))
    if not found:
        return None
    scores = _scores(text, found, query, language)
    if scores is None:
        return None
    ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
    chosen: list[Passage] = []
    best: Focused | None = None
    for index in ranked[:MAX_CANDIDATES]:
        trial = _render(text, [*chosen, found[index]])
        if estimate_tokens(trial.content) <= tokens and len(trial.content) <= max_characters:
            chosen.append(found[index])
            best = trial
    return best


def passages(text: str, limit: int = MAX_PASSAGE) -> list[Passage]:
    """The passages of a Markdown text: its blocks (paragraphs, lists, tables; a fenced code block whole,
    blank lines and all) other than headings, each at most ``limit`` characters, with its headings."""
    found: list[Passage] = []
    headings: list[tuple[int, tuple[int, int]]] = []  # (level, range), the open sections
    block_start: int | None = None
    fence: str | None = None
    position = 0

    def close(end: int) -> None:
        nonlocal block_start
        if block_start is not None:
            path = tuple(span for _, span in headings)
            found.extend(Passage(s, e, path) for s, e in _split(text, block_start, end, limit))
        block_start = None

    for line in text.splitlines(keepends=True):
        start, position = position, position + len(line)
        end = start + len(line.rstrip())
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if (opened := _FENCE.match(line)) is not None:
            fence = opened.group(1)  # closed by as many of its character or more (CommonMark)
            if block_start is None:
                block_start = start
            continue
        if not line.strip():
            close(start)
            continue
        heading = _HEADING.match(line)
        if heading is not None:
            close(start)
            level = len(heading.group(1))
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, (start + len(line) - len(line.lstrip()), end)))
            continue
        if block_start is None:
            block_start = start + len(line) - len(line.lstrip())
    close(len(text))
    return found


def _split(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """``[start, end)`` of ``text`` (whitespace at the end dropped) in pieces of at most ``limit``
    characters, cut after a line break, else after a sentence's end, else after a space."""
    while end > start and text[end - 1].isspace():
        end -= 1
    pieces = []
    while end - start > limit:
        window = text[start:start + limit]
        cut = window.rfind("\n", limit // 3)
        if cut == -1:
            ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() > limit // 3]
            cut = ends[-1] - 1 if ends else window.rfind(" ", limit // 3)
        if cut <= 0:
            cut = limit - 1
        pieces.append((start, start + cut + 1))
        start += cut + 1
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    # A piece's end without its trailing whitespace, so ranges meet only where text does.
    return [(s, s + len(text[s:e].rstrip())) for s, e in pieces if text[s:e].strip()]


def _scores(text: str, found: list[Passage], query: str, language: str | None):
    """The BM25 score of each passage (its headings' words included) for the query; None when the query
    has no word any passage has."""
    import bm25s

    words = _analyzer(language)
    documents = words([
        " ".join([*(text[s:e] for s, e in passage.headings), text[passage.start:passage.end]]) for passage in found
    ])
    wanted = words([query])[0]
    vocabulary = {word for document in documents for word in document}
    wanted = [word for word in wanted if word in vocabulary]
    if not wanted:
        return None
    index = bm25s.BM25()
    index.index(documents, show_progress=False)
    return index.get_scores(wanted).tolist()


def _analyzer(language: str | None):
    """The function from texts to their words as ranked: lowercased, stop words dropped, stemmed."""
    import Stemmer
    from bm25s import stopwords

    code = (language or "en").split("-")[0].lower()
    stemmer_name, stop_name = _LANGUAGES.get(code, _LANGUAGES["en"])
    stop = frozenset(getattr(stopwords, stop_name))

    def words(texts: list[str]) -> list[list[str]]:
        found = [[word for word in _WORD.findall(_LINK_URL.sub("]", text).lower()) if word not in stop]
                 for text in texts]
        # Each distinct word stemmed once (a Stemmer is not thread-safe, so each call has its own).
        distinct = list({word for words in found for word in words})
        stems = dict(zip(distinct, Stemmer.Stemmer(stemmer_name).stemWords(distinct)))
        return [[stems[word] for word in words] for words in found]

    return words


def _render(text: str, chosen: list[Passage]) -> Focused:
    """The chosen passages and their headings in page order, the text between them marked as skipped."""
    spans = sorted({span for passage in chosen for span in (*passage.headings, (passage.start, passage.end))})
    ranges: list[tuple[int, int]] = []
    for start, end in spans:
        if ranges and (start <= ranges[-1][1] or not text[ranges[-1][1]:start].strip()):
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start, end))
    parts = []
    position = 0
    for start, end in ranges:
        if start > position:
            parts.append(_skipped(start - position))
        parts.append(text[start:end])
        position = end
    if position < len(text):
        parts.append(_skipped(len(text) - position))
    return Focused("\n\n".join(parts), tuple(ranges))


def _skipped(count: int) -> str:
    return f"[… {count:,} characters skipped …]"
