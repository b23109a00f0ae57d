"""Rendering pages that need JavaScript, in a headless Chromium whose every packet passes the guard.

Two walls, so that neither a flag name nor a namespace alone holds everything:

1. **The network namespace** (``mode="netns"``, the recommended one): the browser is started inside a
   new, empty network namespace (``unshare --net``) whose only way out is a bridge to the guarding
   proxy's Unix socket (``browser_sandbox``). It cannot reach the host's loopback, link-local addresses
   or anything else directly, and it has no UDP at all (WebRTC's STUN and TURN, mDNS). Without the
   bridge, a page fails closed.
2. **The proxy and the flags**: every HTTP, HTTPS and WebSocket request goes to the guarding proxy
   (``webtools.net.proxy``), which applies the guarded client's address rules; ``--proxy-bypass-list=
   <-loopback>`` sends loopback through it too, and ``--webrtc-ip-handling-policy=
   disable_non_proxied_udp`` keeps WebRTC off UDP. In ``mode="flags"`` (for hosts without namespaces,
   chosen explicitly by the operator) this is the only wall.

Each render gets a fresh browser context with service workers blocked; the browser talks to Playwright
over a pipe (never a debugging port), runs as an unprivileged user with its sandbox on, and is shared
by the process as a warm pool with a cap on concurrent renders and on its memory. Within a render:

- **The main frame** is never fetched by the browser: every navigation of it (the first URL, a script's
  ``location = ...``, a meta refresh, a form) is answered by the renderer with what the guarded client
  fetched, one hop at a time, each hop checked first by the caller's ``check_navigation`` (the static
  fetch's ``check_hop``: domain lists, robots.txt) and a redirect taken as a new, checked navigation,
  at most ``MAX_REDIRECTS`` in a row. The browser never follows a redirect of the main frame itself.
- **Every other request** goes through the proxy in a session of this render (the context's proxy
  credentials carry its token), where the operator's domain lists apply; a request without a live
  session's token (the browser's own traffic) is refused, and the browser's own proxy is a dead port.
- **Memory**: the browser's process tree lives in a memory cgroup capped at ``memory_cap_mb``
  (``memory_cap``), or, where the host allows none, under V8's heap limit and a sampler that ends the
  browser when the tree passes the cap; either way the render ends in ``MemoryExceeded`` and the
  browser starts again.
- **Time**: ``render`` returns or raises within its timeout plus ``GRACE_SECONDS``; a cancelled render's
  context is closed, which ends its renderer process even in the middle of ``while(true){}``.
- **Failures**: popups are closed, dialogs dismissed, downloads refused; a crash, a closed browser, a
  download or anything else the browser raises ends in ``RenderFailed`` with a message for the model.
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import re
import shlex
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from webtools.exceptions import ToolCancelled, ToolError
from webtools.net import HttpClient
from webtools.net.proxy import SESSION_USER, GuardingProxy, ProxyRules

from .browser_process import BROWSER_FLAGS, DEFAULT_EXECUTABLE, free_port, kill_tree, tree_pss_bytes
from .memory_cap import MemoryCap
from .navigation import READ_SECONDS, MainFrame, NavigationRefused, RenderFailed

__all__ = [
    "BROWSER_FLAGS", "DEFAULT_EXECUTABLE", "MODES", "MemoryExceeded", "NavigationRefused", "RenderFailed",
    "Rendered", "Renderer", "RendererUnavailable", "close_all", "needs_javascript", "problems", "renderer_for",
]

logger = logging.getLogger("webtools.render")

MODES = ("netns", "flags")
#: After the load event: how long the page may keep fetching what it builds itself from.
SETTLE_SECONDS = 3.0
#: How long past its timeout a render may take before the caller stops waiting (and the render is
#: cancelled: its context closed, its renderer process ended).
GRACE_SECONDS = 0.3


class RendererUnavailable(Exception):
    """The renderer cannot start on this host as configured (no browser, no namespaces, no Playwright)."""


class MemoryExceeded(RenderFailed):
    """The page needed more memory than the renderer's cap."""

    def __init__(self, cap_mb: int):
        super().__init__(f"The page needed too much memory to render (the limit is {cap_mb} MB).")


@dataclass(frozen=True)
class Rendered:
    url: str
    html: str
    status: int | None


def namespaces_available() -> bool:
    """Whether this process may create a network namespace (root with ``unshare`` on the PATH)."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None and sys.platform.startswith("linux")


def problems(isolation: str, executable: str = DEFAULT_EXECUTABLE) -> list[str]:
    """Why the renderer could not start here with this isolation; empty when it can."""
    found = []
    if not os.access(executable, os.X_OK):
        found.append(f"JavaScript rendering is on, but there is no browser at {executable} "
                     "(apt-get install chromium). Pages are read without rendering.")
    try:
        import playwright  # noqa: F401
    except ImportError:
        found.append("JavaScript rendering is on, but Playwright is not installed "
                     "(pip install 'django-webtools[render]').")
    if isolation == "netns" and not namespaces_available():
        found.append("JavaScript rendering is on with network-namespace isolation, which this host does not "
                     "allow (it needs root on Linux and unshare). The renderer refuses to start; choose the "
                     "flags-only isolation explicitly to render with one wall instead of two.")
    return found


class Renderer:
    """A warm headless Chromium behind the guarding proxy, shared by the process.

    ``render(url, ...)`` is thread-safe and blocking: it returns the rendered DOM as HTML. Renders run
    concurrently up to ``max_concurrent``. The browser's process tree is held to ``memory_cap_mb`` by a
    memory cgroup where the host allows one (``memory_cap``), else by V8's heap limit and a sampler that
    ends the browser as soon as the tree passes the cap; either way the render ends in
    ``MemoryExceeded`` and the browser is started again.
    """

    def __init__(self, client: HttpClient, *, mode: str = "netns", executable: str = DEFAULT_EXECUTABLE,
                 max_concurrent: int = 2, memory_cap_mb: int = 1024, user: str = "nobody",
                 proxy_rules: ProxyRules | None = None, use_cgroup: bool = True):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if mode == "netns" and not namespaces_available():
            raise RendererUnavailable(
                "The JavaScript renderer needs a network namespace (run as root on Linux with unshare), "
                "or the operator's explicit choice of the flags-only mode."
            )
        if not os.access(executable, os.X_OK):
            raise RendererUnavailable(f"No browser at {executable} (install Debian's chromium).")
        try:
            import playwright.async_api  # noqa: F401
        except ImportError as err:
            raise RendererUnavailable("Playwright is not installed (pip install 'django-webtools[render]').") from err
        self.client = client
        self.mode = mode
        self.executable = executable
        self.max_concurrent = max_concurrent
        self.memory_cap_mb = memory_cap_mb
        self.memory_cap = memory_cap_mb * 1024 * 1024
        self.user = user
        self.cgroup = MemoryCap.create(self.memory_cap) if use_cgroup else None
        self._sampler_kills = 0
        self._dir = tempfile.mkdtemp(prefix="webtools-render-")
        os.chmod(self._dir, stat.S_IRWXU | stat.S_IXGRP | stat.S_IXOTH)
        rules = proxy_rules or ProxyRules()
        rules.sessions_only = True  # the browser's own traffic belongs to no render: refused
        self.proxy = GuardingProxy(
            client, rules, unix_path=os.path.join(self._dir, "proxy.sock") if mode == "netns" else None,
        ).start()
        self._pid_file = os.path.join(self._dir, "launcher.pid")
        # Bound and never listening: nothing else can take the port, and a connection to it is refused.
        self._blackhole = socket.socket()
        self._blackhole.bind(("127.0.0.1", 0))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="webtools-render", daemon=True)
        self._thread.start()
        self._playwright = None
        self._browser = None
        self._semaphore: asyncio.Semaphore | None = None
        self._launching: asyncio.Lock | None = None
        self._restart = False
        self._in_flight = 0
        self.restarts = 0
        self.closed = False
        self._run(self._start(), timeout=60)

    # -- life cycle -------------------------------------------------------------------------------

    def _launcher_script(self) -> str:
        """The executable Playwright starts: our launcher, inside ``unshare --net`` in netns mode."""
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(__import__("webtools").__file__)))
        command = [sys.executable, "-m", "webtools.plugins.web_fetch.browser_sandbox", "--mode", self.mode,
                   "--user", self.user, "--pid-file", self._pid_file]
        if self.mode == "netns":
            self._bridge_port = free_port()
            command = ["unshare", "--net", "--", *command, "--proxy-socket", self.proxy.address,
                       "--bridge-port", str(self._bridge_port)]
        path = os.path.join(self._dir, "chromium")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
            if self.cgroup is not None:
                # Into the memory cgroup before anything else runs: every byte of the tree is counted.
                f.write(f"echo $$ > {shlex.quote(os.path.join(self.cgroup.path, 'cgroup.procs'))} || exit 1\n")
            f.write(f"export PYTHONPATH={shlex.quote(package_root)}${{PYTHONPATH:+:$PYTHONPATH}}\n")
            f.write(f'exec {shlex.join(command)} -- {shlex.quote(self.executable)} "$@"\n')
        os.chmod(path, stat.S_IRWXU)
        return path

    def _proxy_server(self) -> str:
        if self.mode == "netns":
            return f"http://127.0.0.1:{self._bridge_port}"
        return f"http://{self.proxy.address}"

    def browser_flags(self) -> list[str]:
        """What the browser is started with, after Playwright's own switches.

        Pages get the guarding proxy as their context's proxy, with their render's token. The browser's
        own proxy, for everything that belongs to no page (component updates, account checks, whatever
        a flag missed), is a loopback port where nothing listens: that traffic fails in the browser and
        never reaches the proxy, let alone the network (a fixed proxy list has no direct fallback)."""
        flags = [f"--proxy-server=http://127.0.0.1:{self._blackhole.getsockname()[1]}", *BROWSER_FLAGS]
        if self.cgroup is None:
            # No kernel cap: V8's heap limit stops a script's allocations early; the sampler does the rest.
            flags.append(f"--js-flags=--max-old-space-size={max(64, self.memory_cap_mb // 2)}")
        return flags

    async def _start(self) -> None:
        from playwright.async_api import async_playwright

        self._semaphore = asyncio.Semaphore(self.max_concurrent)
        self._launching = asyncio.Lock()
        self._playwright = await async_playwright().start()
        await self._launch()

    async def _launch(self) -> None:
        executable = self._launcher_script()
        self._browser = await self._playwright.chromium.launch(
            executable_path=executable, headless=True, chromium_sandbox=True, args=self.browser_flags(),
        )

    def _kill_browser(self) -> None:
        """End every process of the browser at once (SIGKILL): a page that must not run a moment longer."""
        try:
            with open(self._pid_file) as f:
                root = int(f.read().strip() or 0)
        except (OSError, ValueError):
            return
        if root <= 0:
            return
        kill_tree(root)

    async def _ready(self) -> None:
        """A browser to render with: started again when it died, or when a restart is due and no render
        is using it."""
        async with self._launching:
            dead = self._browser is None or not self._browser.is_connected()
            if not dead and not (self._restart and self._in_flight == 0):
                return
            self._restart = False
            self.restarts += 1
            logger.info("restarting the renderer's browser")
            if self._browser is not None:
                try:
                    await asyncio.wait_for(self._browser.close(), 5)
                except Exception:  # a dead or stuck browser: end its processes
                    self._kill_browser()
            try:
                await self._launch()
            except Exception as err:  # the next render tries again
                self._browser = None
                logger.warning("the renderer's browser did not start: %s", err)
                raise RendererUnavailable("The browser could not be started.") from None

    def _run(self, coroutine, timeout: float):
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout)

    def memory_bytes(self) -> int:
        """The browser's processes' proportional set size."""
        try:
            with open(self._pid_file) as f:
                return tree_pss_bytes(int(f.read().strip() or 0))
        except (OSError, ValueError):
            return 0

    def _memory_events(self) -> int:
        """How many times a page has been stopped for passing the memory cap so far."""
        return self._sampler_kills + (self.cgroup.oom_kills() if self.cgroup is not None else 0)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True

        async def stop():
            if self._browser is not None:
                try:
                    await asyncio.wait_for(self._browser.close(), 10)
                except Exception:
                    self._kill_browser()
            if self._playwright is not None:
                await self._playwright.stop()

        try:
            self._run(stop(), timeout=20)
        except Exception:  # closing must not raise at shutdown
            logger.exception("closing the renderer failed")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self.proxy.close()
        self._blackhole.close()
        if self.cgroup is not None:
            self.cgroup.remove()
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- rendering --------------------------------------------------------------------------------

    def render(self, url: str, *, timeout: float, user_agent: str | None = None,
               check_navigation: Callable[[str], None] | None = None,
               refuse_host: Callable[[str], str | None] | None = None, cancel=None) -> Rendered:
        """The DOM of ``url`` after its scripts ran, as HTML; returns or raises within ``timeout`` plus
        ``GRACE_SECONDS``.

        Every hop of every navigation of the main frame (the first URL, each redirect, a script's
        ``location = ...``, a meta refresh) is fetched by the renderer itself through the guarded client,
        hop by hop: ``check_navigation(url)`` is called (in a worker thread) before each and refuses it by
        raising, and at most ``MAX_REDIRECTS`` redirects are followed in a row. Every other request of
        the page goes through the guarding proxy under a session of this render, where
        ``refuse_host(host)`` (the operator's domain lists) is applied.

        Raises ``NavigationRefused``, ``MemoryExceeded`` or ``RenderFailed`` (messages for the model), or
        ``TimeoutError``.
        """
        if self.closed:
            raise RendererUnavailable("The renderer is closed.")
        deadline = time.monotonic() + timeout
        future = asyncio.run_coroutine_threadsafe(
            self._render(url, deadline, user_agent, check_navigation, refuse_host), self._loop
        )
        while True:
            try:
                return future.result(timeout=0.05)
            except concurrent.futures.TimeoutError:
                if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline + GRACE_SECONDS:
                    future.cancel()
                    raise TimeoutError("The page took too long to render.") from None

    async def _sample(self) -> None:
        """Without a memory cgroup: end the browser as soon as its process tree passes the cap."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0.1)
            if await loop.run_in_executor(None, self.memory_bytes) > self.memory_cap:
                logger.info("the renderer's browser passed its memory cap: ending it")
                self._sampler_kills += 1
                self._restart = True
                self._kill_browser()
                return

    def _failure(self, state: MainFrame, err: BaseException | None, memory_before: int) -> BaseException:
        """The one error a failed render ends with, whatever the browser or the page did."""
        if self._memory_events() > memory_before:
            self._restart = True
            return MemoryExceeded(self.memory_cap_mb)
        if state.refused:
            first = state.refused[0]
            if isinstance(first, NavigationRefused):
                return first
            if isinstance(first, (ToolError, ToolCancelled)):
                return first  # the tool's own refusal (domain lists, robots.txt) or its deadline
            return NavigationRefused(str(first))
        if state.hop_error is not None:
            return RenderFailed(str(state.hop_error))
        if state.crashed:
            self._restart = True
            return RenderFailed("The page crashed the browser while rendering.")
        if state.download:
            return RenderFailed("The page started a download instead of showing a page; the renderer does "
                                "not download files.")
        text = str(err or "")
        if "Download is starting" in text:
            return RenderFailed("The page started a download instead of showing a page; the renderer does "
                                "not download files.")
        if self._browser is None or not self._browser.is_connected() or "closed" in text.lower():
            self._restart = True
            return RenderFailed("The browser stopped while rendering the page; it is being started again.")
        logger.info("rendering failed: %s", text.splitlines()[0][:300] if text else type(err).__name__)
        return RenderFailed("The browser could not render the page.")

    async def _render(self, url: str, deadline: float, user_agent: str | None,
                      check_navigation: Callable[[str], None] | None,
                      refuse_host: Callable[[str], str | None] | None) -> Rendered:
        from playwright.async_api import Error as PlaywrightError

        assert self._semaphore is not None
        async with self._semaphore:
            await self._ready()
            self._in_flight += 1
            memory_before = self._memory_events()
            session = self.proxy.open_session(refuse_host)
            context = sampler = None
            try:
                try:
                    context = await self._browser.new_context(
                        service_workers="block", user_agent=user_agent, accept_downloads=False,
                        proxy={"server": self._proxy_server(), "username": SESSION_USER, "password": session.token},
                    )
                    page = await context.new_page()
                except PlaywrightError:  # the browser died since the last render
                    self._restart = True
                    raise RenderFailed("The browser stopped while rendering the page; it is being started "
                                       "again.") from None
                state = MainFrame(page, self.proxy.client, deadline=deadline, max_bytes=self.proxy.rules.max_bytes,
                                  check_navigation=check_navigation)
                if self.cgroup is None:
                    sampler = asyncio.ensure_future(self._sample())

                def on_page(other) -> None:  # window.open and target=_blank: never rendered
                    if other is not page:
                        asyncio.ensure_future(_quietly(other.close()))

                def on_crash(_page) -> None:
                    state.crashed = True

                def on_download(download) -> None:
                    state.download = True
                    asyncio.ensure_future(_quietly(download.cancel()))

                context.on("page", on_page)
                page.on("crash", on_crash)
                page.on("download", on_download)

                async def route(route):
                    try:
                        request = route.request
                        scheme = request.url.split(":", 1)[0].lower()
                        if scheme not in ("http", "https"):
                            await route.abort("blockedbyclient")
                            return
                        navigation = request.is_navigation_request()
                        try:
                            frame = request.frame
                        except PlaywrightError:
                            # A popup's navigation, a worker's request: no frame of this page to judge by.
                            frame = None
                        if navigation and (frame is None or frame.page is not page):
                            await route.abort("blockedbyclient")
                        elif navigation and frame.parent_frame is None:
                            await state.serve(route)
                        else:
                            await route.continue_()  # the proxy holds it to this render's session
                    except Exception as err:  # a closed page or context: nothing left to answer
                        logger.debug("route handler: %s", err)
                        await _quietly(route.abort("failed"))

                await context.route("**/*", route)
                pending: set = set()
                page.on("request", lambda request: pending.add(request))
                page.on("requestfinished", lambda request: pending.discard(request))
                page.on("requestfailed", lambda request: pending.discard(request))
                try:
                    response = await state.navigate(url)
                    settle_until = min(deadline - READ_SECONDS, time.monotonic() + SETTLE_SECONDS)
                    while True:
                        await state.settle(pending, settle_until)
                        if state.refused:
                            raise NavigationRefused(str(state.refused[0]))
                        if state.redirect is None:
                            break
                        response = await state.navigate(state.redirect)  # a script's navigation
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError("The page took too long to render.")
                    try:
                        html = await asyncio.wait_for(page.content(), left)
                    except asyncio.TimeoutError:
                        raise TimeoutError("The page took too long to render.") from None
                    if state.refused or state.crashed or self._memory_events() > memory_before:
                        raise RenderFailed("")
                    return Rendered(page.url, html, response.status if response is not None else None)
                except (PlaywrightError, RenderFailed) as err:
                    raise self._failure(state, err, memory_before) from None
            finally:
                if sampler is not None:
                    sampler.cancel()
                self.proxy.close_session(session)
                if context is not None:
                    try:
                        await asyncio.wait_for(context.close(), 5)
                    except Exception:  # the browser is gone or stuck: start it again
                        self._restart = True
                self._in_flight -= 1
                if self._in_flight == 0 and not self._restart and self.memory_bytes() > self.memory_cap:
                    logger.info("restarting the renderer's browser: over its memory cap")
                    self._restart = True
                if self._restart and self._in_flight == 0:
                    asyncio.ensure_future(_quietly(self._ready()))  # now, not at the next render's expense


async def _quietly(awaitable) -> None:
    try:
        await awaitable
    except Exception:
        pass


#: How little static text counts as "too little" for ``auto``: a script-built page's shell has a title,
#: a "loading..." and perhaps a footer.
AUTO_MAX_STATIC_CHARACTERS = 400

_SCRIPT_BUILT = re.compile(
    r"""<(?:div|main|section|body)\b[^>]*\bid\s*=\s*["']?(?:root|app|__next|__nuxt|___gatsby|svelte|"""
    r"""main-app|application|react-root|vue-app|ember-app)\b[^>]*>\s*(?:<noscript\b.*?</noscript>\s*)?"""
    r"""</(?:div|main|section|body)>"""
    r"""|__NEXT_DATA__|window\.__NUXT__|<app-root\b[^>]*>\s*</app-root>|data-reactroot|ng-version=""",
    re.IGNORECASE | re.DOTALL,
)
_JS_NOTICE = re.compile(
    r"(?:enable|turn on|activate)\s+javascript|javascript\s+(?:is\s+)?(?:required|disabled|must be enabled)"
    r"|requires\s+javascript|you need to enable javascript|^\s*loading\s*(?:\.\.\.|…)?\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def needs_javascript(html: str, static_text: str) -> bool:
    """Whether ``auto`` should render: too little static text on a page with a script-built page's marks
    (an empty root element, ``__NEXT_DATA__``, an "enable JavaScript" notice, a lone "loading...")."""
    if len(static_text.strip()) > AUTO_MAX_STATIC_CHARACTERS:
        return False
    if "<script" not in html.lower():
        return False
    return bool(_SCRIPT_BUILT.search(html) or _JS_NOTICE.search(html) or _JS_NOTICE.search(static_text))


_renderers: dict[tuple, Renderer] = {}
_renderers_lock = threading.Lock()


def renderer_for(client: HttpClient, *, isolation: str = "netns", max_concurrent: int = 2,
                 memory_cap_mb: int = 1024, executable: str = DEFAULT_EXECUTABLE) -> Renderer:
    """The process's warm renderer for this address policy and these options, started on first use and
    closed at exit. Its proxy uses a clone of ``client`` (same policy, resolver and outbound proxy)."""
    key = (client.policy, client.resolver, client.proxy, isolation, max_concurrent, memory_cap_mb, executable)
    with _renderers_lock:
        renderer = _renderers.get(key)
        if renderer is None or renderer.closed:
            renderer = Renderer(client.clone(), mode=isolation, executable=executable,
                                max_concurrent=max_concurrent, memory_cap_mb=memory_cap_mb)
            _renderers[key] = renderer
        return renderer


@atexit.register
def close_all() -> None:
    """Close every renderer of the process (at exit; tests call it too)."""
    with _renderers_lock:
        renderers = list(_renderers.values())
        _renderers.clear()
    for renderer in renderers:
        renderer.close()
