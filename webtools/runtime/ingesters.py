"""File ingesters: turn a file of some MIME type into text, for any plugin that needs it.

A plugin depends on a type, not on another plugin: web fetch asks ``accepts("application/pdf")``
and whichever ingester has the highest priority for that type (pypdf, or an OCR plugin) does the work.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .budget import Deadline


@dataclass(frozen=True)
class IngestInput:
    """A file to extract text from, and the limits of the call that asks.

    ``deadline`` is the call's reading budget: an ingester checks it, and runs work it cannot interrupt
    (one PDF page's text) in ``webtools.runtime.workers``. ``max_pages`` caps the pages read of a paged
    document; ``max_characters`` is how much text the caller will keep, so reading may stop once it has
    that much. None means no limit. An ingester that stops early says so in the text it returns.
    """

    data: bytes
    mime_type: str
    name: str = ""
    deadline: Deadline | None = None
    max_pages: int | None = None
    max_characters: int | None = None


class Ingester(Protocol):
    """What ``Ingesters.register`` takes: a priority, the MIME types, and ``ingest``."""

    priority: int
    mime_types: Iterable[str]

    def ingest(self, file: IngestInput) -> str: ...


def _base_type(mime_type: str) -> str:
    return mime_type.split(";", 1)[0].strip().lower()


class Ingesters:
    """The registered ingesters; the highest priority one that accepts a type handles it."""

    def __init__(self) -> None:
        self._ingesters: list[Ingester] = []

    def register(self, ingester: Ingester) -> None:
        self._ingesters.append(ingester)
        # Stable sort: among equal priorities, the first registered wins.
        self._ingesters.sort(key=lambda item: -item.priority)

    def _for(self, mime_type: str) -> Ingester | None:
        base = _base_type(mime_type)
        for ingester in self._ingesters:
            if base in {_base_type(t) for t in ingester.mime_types}:
                return ingester
        return None

    def accepts(self, mime_type: str) -> bool:
        """Whether any registered ingester accepts the MIME type."""
        return self._for(mime_type) is not None

    def ingest(self, file: IngestInput) -> str | None:
        """The text of ``file`` from the ingester attachments would use, or None when none accepts it."""
        ingester = self._for(file.mime_type)
        return None if ingester is None else ingester.ingest(file)
