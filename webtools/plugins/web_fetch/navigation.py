"""A rendered page's main frame, fetched hop by hop through the guarded client, each hop checked.

Playwright calls a route handler once per navigation, not once per redirect hop: a browser left to
fetch its main frame follows a 302 to a denied host, or to a path robots.txt disallows, unchecked. So
the browser never fetches its main frame. ``MainFrame.serve`` answers every navigation request of it
(the first URL, a script's ``location = ...``, a meta refresh, a form) with what the guarded client
got for that one URL, after ``check_navigation(url)`` (the static fetch's ``check_hop``: domain lists,
robots.txt), and a redirect is not handed to the browser: it is aborted and taken as a new navigation
to its target (``MainFrame.navigate``), checked the same way, at most ``MAX_REDIRECTS`` in a row.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webtools.exceptions import URL_NOT_ACCESSIBLE, URL_NOT_ALLOWED
from webtools.net import HttpClient, InvalidURL, NetError
from webtools.net.proxy import HOP_BY_HOP, RESPONSE_DROPPED
from webtools.net.urls import display_url

#: Redirects followed in one navigation of the main frame, as the static fetch follows.
MAX_REDIRECTS = 5
#: Of a render's time, what is kept at the end to read the DOM out of the browser.
READ_SECONDS = 0.3
#: After the load event, how long without a request in flight counts as done.
QUIET_SECONDS = 0.15


class RenderFailed(Exception):
    """The page could not be rendered; the message is written for the model, ``code`` is its error code."""

    code = URL_NOT_ACCESSIBLE


class NavigationRefused(RenderFailed):
    """The page tried to navigate its main frame somewhere the operator's rules do not allow."""

    code = URL_NOT_ALLOWED


@dataclass
class _Hop:
    """What the guarded client got for one hop of a main-frame navigation."""

    redirect: str | None = None
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


class MainFrame:
    """One render's main frame, and what its event handlers saw happen to the page."""

    def __init__(self, page, client: HttpClient, *, deadline: float, max_bytes: int,
                 check_navigation: Callable[[str], None] | None):
        self.page = page
        self.client = client
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.check_navigation = check_navigation
        #: Why a navigation was refused: the caller's errors (a ToolError), or ``NavigationRefused``.
        self.refused: list[BaseException] = []
        #: The target of a redirect that ``navigate`` has still to take.
        self.redirect: str | None = None
        self.chain = 0
        self.hop_error: NetError | None = None
        self.crashed = False
        self.download = False

    def stopped(self) -> bool:
        """Whether the render has to end in an error."""
        return bool(self.refused or self.hop_error or self.crashed or self.download)

    def interrupted(self) -> bool:
        return self.redirect is not None or self.stopped()

    def _left(self) -> float:
        return self.deadline - READ_SECONDS - time.monotonic()

    # -- serving the browser's requests -----------------------------------------------------------

    def _fetch_hop(self, method: str, url: str, headers: dict, body: bytes | None, timeout: float) -> _Hop:
        """One hop, through the guarded client; a redirect is not followed."""
        with self.client.open(method, url, headers=headers, data=body or None, timeout=timeout,
                              redirects="return") as response:
            if response.is_redirect:
                if response.next is None:
                    raise response.next_error or InvalidURL("The redirect cannot be followed.")
                return _Hop(redirect=str(response.next))
            data = response.read(self.max_bytes, on_too_large="truncate")
            kept = [(name, value) for name, value in response.headers.items() if name.lower() not in RESPONSE_DROPPED]
            return _Hop(status=response.status_code, headers=kept, body=data)

    async def serve(self, route) -> None:
        """Answer a navigation request of the main frame with what the guarded client fetched for it,
        after ``check_navigation``; a redirect is aborted and noted for ``navigate``."""
        request = route.request
        loop = asyncio.get_running_loop()
        if self.check_navigation is not None:
            try:
                await loop.run_in_executor(None, self.check_navigation, request.url)
            except Exception as err:  # the caller's refusal (domain lists, robots.txt) or its deadline
                self.refused.append(err)
                await route.abort("blockedbyclient")
                return
        left = self._left()
        if left <= 0.05:
            await route.abort("timedout")
            return
        headers = {name: value for name, value in (await request.all_headers()).items()
                   if not name.startswith(":") and name.lower() not in HOP_BY_HOP}
        try:
            hop = await loop.run_in_executor(None, self._fetch_hop, request.method, request.url, headers,
                                             request.post_data_buffer, left)
        except NetError as err:
            self.hop_error = err
            await route.abort("failed")
            return
        if hop.redirect is not None:
            self.redirect = hop.redirect
            await route.abort("aborted")
            return
        self.chain = 0
        await route.fulfill(status=hop.status, headers=dict(hop.headers), body=hop.body)

    # -- driving the page -------------------------------------------------------------------------

    async def until(self, awaitable) -> Any:
        """``awaitable``'s result, or None as soon as the main frame was redirected or the render has to
        end (the browser's wait for a load event would see neither)."""
        task = asyncio.ensure_future(awaitable)
        try:
            while not task.done():
                if self.interrupted():
                    return None
                await asyncio.wait({task}, timeout=0.05)
            return task.result()
        finally:
            if not task.done():
                task.cancel()

    async def navigate(self, target: str) -> Any:
        """Navigate the main frame to ``target``, following redirects as new, checked navigations; the
        response, or None when the page was still loading at the deadline (what arrived is read).
        Raises ``RenderFailed`` (or the browser's error) when the render has to end."""
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        first = target
        while True:
            self.redirect = None
            left = self._left()
            if left <= 0:
                return None
            response = None
            try:
                response = await self.until(self.page.goto(target, wait_until="load", timeout=left * 1000))
            except PlaywrightTimeout:
                pass  # render what arrived
            except PlaywrightError as err:
                if self.redirect is None:
                    if self.stopped() or "interrupted by another navigation" not in str(err):
                        raise
                    # A script navigated on before the load event: that navigation is served and
                    # checked too; wait for its load, its redirect or its refusal.
                    try:
                        await self.until(self.page.wait_for_load_state("load", timeout=left * 1000))
                    except PlaywrightTimeout:
                        pass
            if self.redirect is None:
                if self.stopped():
                    raise RenderFailed("")
                return response
            self.chain += 1
            if self.chain > MAX_REDIRECTS:
                self.refused.append(NavigationRefused(f"{_shown(first)} redirected more than {MAX_REDIRECTS} times."))
                raise self.refused[-1]
            target = self.redirect

    async def settle(self, pending: set, until: float) -> None:
        """After the load event, wait until no request of the page has been in flight for a moment
        (what scripts fetch to build the page), but not past ``until``; return early when the main frame
        was redirected or refused."""
        quiet_since = time.monotonic()
        while (now := time.monotonic()) < until:
            if self.interrupted():
                return
            if pending:
                quiet_since = now
            elif now - quiet_since >= QUIET_SECONDS:
                return
            await asyncio.sleep(0.05)


def _shown(url: str) -> str:
    try:
        return display_url(url)
    except NetError:
        return "The page"
