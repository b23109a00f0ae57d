"""The PDF ingester: text of a PDF with pypdf, for any plugin that asks for ``application/pdf``.

pypdf extracts a page's text in one uninterruptible call, and one page can be made to cost a minute
(a small PDF whose pages share an 8 MB compressed content stream). So the pages are read in a
``webtools.runtime.workers`` process, one at a time, each sent back as soon as it is read: when the
call's deadline passes, the worker is killed and the pages read so far are returned with a note.

Imports only the runtime; like any plugin it may also use ``net`` and the base, never another
plugin, a model or the host.
"""
from __future__ import annotations

import io
import logging
from collections.abc import Iterator

from django.utils.translation import gettext_lazy as _

from webtools.exceptions import UNSUPPORTED_CONTENT_TYPE, URL_NOT_ACCESSIBLE
from webtools.runtime import Deadline, IngestInput, Plugin, PluginSetup, ReadingTooLong, ToolError, workers

logger = logging.getLogger("webtools.pdf")


class PdfIngester:
    """Extracts the text of every page, pages separated by a blank line, within the call's limits.

    Reading stops after ``max_pages`` pages, once the text has ``max_characters`` characters, or at the
    deadline; a note at the top of the text says which pages are there. A deadline passing before the
    first page is read is ``ReadingTooLong``.
    """

    priority = 0
    mime_types = ("application/pdf", "application/x-pdf")

    def ingest(self, file: IngestInput) -> str:
        items: list = []
        cut_short = None
        try:
            cut_short = workers.call(
                pdf_pages, file.data, max_pages=file.max_pages, max_characters=file.max_characters,
                deadline=file.deadline or Deadline.never(), on_item=items.append,
            )
        except ReadingTooLong:
            if len(items) < 2:
                raise
            cut_short = "time"
        total, pages = (items[0], items[1:]) if items else (0, [])
        text = "\n\n".join(page for page in pages if page)
        note = _note(cut_short, len(pages), total)
        return f"{note}\n\n{text}" if note else text


def _note(cut_short: str | None, read: int, total: int) -> str:
    if cut_short is None or read >= total:
        return ""
    if cut_short == "time":
        return f"[The PDF took too long to read: only pages 1 to {read} of {total} are here.]"
    if cut_short == "pages":
        return f"[Only the first {read} of the {total} pages were read: the page limit.]"
    return f"[Only the first {read} of the {total} pages were read: their text reached the length limit.]"


def pdf_pages(
    data: bytes, *, max_pages: int | None, max_characters: int | None, deadline: Deadline,
) -> Iterator:
    """Yields the number of pages, then each page's text as it is read (in a worker process).

    Returns why reading stopped early: ``"pages"`` (the page limit), ``"characters"`` (enough text),
    or None when every page was read.
    """
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # An empty user password opens most "encrypted" PDFs; others cannot be read here.
            if not reader.decrypt(""):
                raise ToolError("The PDF is password protected.", URL_NOT_ACCESSIBLE)
        total = len(reader.pages)
        yield total
        kept = 0
        for number in range(total):
            if max_pages is not None and number >= max_pages:
                return "pages"
            if max_characters is not None and kept >= max_characters:
                return "characters"
            deadline.check()
            text = (reader.pages[number].extract_text() or "").strip()
            kept += len(text)
            yield text
    except ToolError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError) as err:
        raise ToolError("The PDF could not be read: the file is damaged or not a PDF.",
                        UNSUPPORTED_CONTENT_TYPE) from err
    return None


class PdfPlugin(Plugin):
    """Registers the pypdf ingester for PDFs."""

    id = "pdf"
    name = _("PDF ingester")

    def setup(self, setup: PluginSetup) -> None:
        setup.register_ingester(PdfIngester())
