"""Reading a response: the body on demand, under a byte limit counted after decompression.

Owns ``Response`` (status, headers, the redirect's ``next`` URL read against the one requested, and
``read`` with its limit, which asks the decoders for no more than the limit still allows, so a gzip or
brotli bomb costs memory near the limit) and ``ACCEPTED_CODINGS``, the codings the client asks for.
May import ``deadline``, ``errors`` and ``urls`` of ``webtools.net``; the client imports this.
"""
from __future__ import annotations

import http.client
import inspect
import json as jsonlib
from typing import Any

import requests
import urllib3
from urllib3.exceptions import DecodeError
from urllib3.util.request import ACCEPT_ENCODING

from .deadline import _CHUNK, _Deadline
from .errors import BodyTooLarge, ConnectionFailed, InvalidURL, NetError
from .urls import URL, read_url

# Only codings urllib3 decodes with an output limit, so a bomb stops at the byte limit. Its decoders
# take ``max_length`` since urllib3 2.6 (CVE-2025-66471); older ones expand a whole network read at
# once, so with them nothing but identity is asked for. zstd is left out even when urllib3 could
# decode it: one less decoder to trust.
_LIMITED_DECODERS = "max_length" in inspect.signature(urllib3.response.ContentDecoder.decompress).parameters
ACCEPTED_CODINGS = (
    ", ".join(c for c in ("gzip", "deflate", "br") if c in ACCEPT_ENCODING.split(","))
    if _LIMITED_DECODERS else "identity"
)


class Response:
    """One HTTP response whose body is read on demand under a byte limit. Use as a context manager.

    ``url`` is the canonical URL string that was requested and ``canonical`` its reading
    (``webtools.net.urls``). For a redirect, ``next`` is the Location read against it, or None and
    ``next_error`` says why it cannot be read; ``next_url`` is ``str(next)``.
    """

    def __init__(self, resp: requests.Response, url: URL, deadline: _Deadline, session: requests.Session):
        self._resp = resp
        self._raw = resp.raw
        self._deadline = deadline
        self._eof = False
        self._closed = False
        self.status_code: int = resp.status_code
        self.headers = resp.headers
        self.canonical = url
        self.url = str(url)
        self.content: bytes | None = None
        self.truncated = False
        self.is_redirect: bool = resp.is_redirect
        self.next: URL | None = None
        self.next_error: InvalidURL | None = None
        self.next_url: str | None = None
        if self.is_redirect:
            try:
                self.next = read_url(session.get_redirect_target(resp) or "", base=url)
            except InvalidURL as err:
                self.next_error = InvalidURL(
                    f"{url.display()} redirects to an address that cannot be followed: {err}"
                )
            else:
                self.next_url = str(self.next)

    def __repr__(self) -> str:
        return f"<Response {self.status_code} {self.canonical.display()}>"

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for param in self.headers.get("Content-Type", "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                return value.strip().strip("\"'") or None
        return None

    def read(self, max_bytes: int, on_too_large: str = "error") -> bytes:
        """The decompressed body, at most ``max_bytes`` of it.

        ``on_too_large="error"`` raises ``BodyTooLarge`` past the limit; ``"truncate"`` keeps the first
        ``max_bytes`` and sets ``truncated``. Decompression is asked for at most what the limit still
        allows, so a gzip or brotli bomb costs memory near the limit, not near its expanded size.
        """
        if self.content is not None:
            return self.content
        if on_too_large not in ("error", "truncate"):
            raise ValueError('on_too_large must be "error" or "truncate"')
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        if self._closed:
            raise ConnectionFailed(
                f"The response from {self.canonical.display()} was closed before it was read."
            )
        coding = self.headers.get("Content-Encoding", "").strip().lower()
        length = self.headers.get("Content-Length", "")
        declared_too_large = length.isdigit() and int(length) > max_bytes
        if on_too_large == "error" and coding in ("", "identity") and declared_too_large:
            self.close()  # refused on its declared size, before a byte of the body is read
            raise self._too_large(max_bytes)
        buf = bytearray()
        try:
            while True:
                self._deadline.check()
                chunk = self._raw.read1(min(_CHUNK, max_bytes + 1 - len(buf)), decode_content=True)
                if not chunk:
                    self._eof = True
                    break
                buf += chunk
                if len(buf) > max_bytes:
                    if on_too_large == "error":
                        raise self._too_large(max_bytes)
                    del buf[max_bytes:]
                    self.truncated = True
                    break
        except NetError:
            self.close()
            raise
        except DecodeError as err:
            self.close()
            raise NetError(
                f"The response from {self.canonical.display()} could not be decoded "
                f"(Content-Encoding: {coding})."
            ) from err
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as err:
            self.close()
            if self._deadline.expired():
                raise self._deadline.timeout_error() from err
            raise ConnectionFailed(
                f"The connection to {self.canonical.display()} broke while the response was read."
            ) from err
        self.content = bytes(buf)
        del buf
        if not self._eof:
            self.close()
        return self.content

    def _too_large(self, max_bytes: int) -> BodyTooLarge:
        return BodyTooLarge(f"The response from {self.canonical.display()} is larger than {max_bytes} bytes.")

    def text(self) -> str:
        """The read body as text: the Content-Type charset, else UTF-8, undecodable bytes replaced."""
        if self.content is None:
            raise ValueError("read() the response before asking for its text")
        try:
            return self.content.decode(self.charset or "utf-8", errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        try:
            return jsonlib.loads(self.text())
        except ValueError as err:
            raise NetError(f"The response from {self.canonical.display()} is not valid JSON.") from err

    def close(self) -> None:
        """Give the connection back for reuse if the body was read to its end, else close it: a
        half-read connection must not be reused."""
        if self._closed:
            return
        self._closed = True
        if self._eof:
            self._raw.release_conn()
        else:
            self._resp.close()
