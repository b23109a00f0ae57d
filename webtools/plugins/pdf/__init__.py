"""The PDF ingester: text of a PDF with pypdf, for any plugin that asks for ``application/pdf``."""
from __future__ import annotations

import io
import logging

from django.utils.translation import gettext_lazy as _

from webtools.runtime import IngestInput, Plugin, PluginSetup, ToolError

logger = logging.getLogger("webtools.pdf")


class PdfIngester:
    """Extracts the text of every page, pages separated by a blank line."""

    priority = 0
    mime_types = ("application/pdf", "application/x-pdf")

    def ingest(self, file: IngestInput) -> str:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError

        try:
            reader = PdfReader(io.BytesIO(file.data))
            if reader.is_encrypted:
                # An empty user password opens most "encrypted" PDFs; others cannot be read here.
                if not reader.decrypt(""):
                    raise ToolError("The PDF is password protected.")
            pages = [(page.extract_text() or "").strip() for page in reader.pages]
        except ToolError:
            raise
        except (PdfReadError, ValueError, KeyError, TypeError) as err:
            raise ToolError("The PDF could not be read: the file is damaged or not a PDF.") from err
        return "\n\n".join(text for text in pages if text)


class PdfPlugin(Plugin):
    """Registers the pypdf ingester for PDFs."""

    id = "pdf"
    name = _("PDF ingester")

    def setup(self, setup: PluginSetup) -> None:
        setup.register_ingester(PdfIngester())
