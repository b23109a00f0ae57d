"""Real, minimal PDFs made in the test (one text object per page), so no binary fixture is needed."""
from __future__ import annotations

import zlib


def make_pdf(pages: list[str]) -> bytes:
    """A valid PDF 1.4 whose pages each show one line of Helvetica text."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font_ref = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 18 Tf 72 720 Td ({escaped}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_ref} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _assemble(objects)


def _assemble(objects: list[bytes]) -> bytes:
    """A PDF 1.4 file of ``objects`` (numbered from 1, the first the catalog), with its xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def make_shared_stream_pdf(stream_bytes: int = 8_000_000, pages: int = 3, *, first_page: str | None = None) -> bytes:
    """The hostile PDF of issue 9: ``pages`` pages that all show one content stream of ``stream_bytes``
    bytes of text operators, compressed to a few kilobytes (8 MB gives a 24 KB file whose text takes
    pypdf about 20 s of CPU a page). With ``first_page``, a normal page comes first."""
    unit = b"BT /F1 12 Tf 72 720 Td (Hostile text run) Tj ET\n"
    shared = zlib.compress(unit * (stream_bytes // len(unit)), 9)
    plain = [first_page] if first_page is not None else []
    count = len(plain) + pages
    # Objects: 1 catalog, 2 page tree, 3.. pages, then the shared stream, the font, the plain stream.
    shared_ref, font_ref, plain_ref = 3 + count, 4 + count, 5 + count
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + i} 0 R" for i in range(count))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    for i in range(count):
        contents = plain_ref if i < len(plain) else shared_ref
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R "
            f"/Resources << /Font << /F1 {font_ref} 0 R >> >> >>".encode()
        )
    objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(shared) + shared + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for text in plain:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 18 Tf 72 720 Td ({escaped}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return _assemble(objects)
