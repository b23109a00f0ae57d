"""File ingesters: turn a file of some MIME type into text, for any plugin that needs it.

A plugin depends on a type, not on another plugin: web fetch asks ``accepts("application/pdf")``
and whichever ingester has the highest priority for that type (pypdf, or an OCR plugin) does the work.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class IngestInput:
    """A file to extract text from."""

    data: bytes
    mime_type: str
    name: str = ""


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
