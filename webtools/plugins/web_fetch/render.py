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
by the process as a warm pool with a cap on concurrent renders and on its memory.
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

from webtools.net import HttpClient
from webtools.net.proxy import GuardingProxy, ProxyRules

logger = logging.getLogger("webtools.render")

#: The real binary: Playwright drives it over a pipe; ``/usr/bin/chromium`` is a shell wrapper.
DEFAULT_EXECUTABLE = "/usr/lib/chromium/chromium"
MODES = ("netns", "flags")
#: After the load event: how long the page may keep fetching what it builds itself from, and how long
#: without a request in flight counts as done.
SETTLE_SECONDS = 3.0
QUIET_SECONDS = 0.15

#: The second wall: flags measured on this Chromium to matter (others that look alike, such as
#: ``--force-webrtc-ip-handling-policy``, are accepted silently and do nothing).
BROWSER_FLAGS = (
    "--proxy-bypass-list=<-loopback>",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--metrics-recording-only",
    "--disable-features=Translate,OptimizationHints,MediaRouter,InterestFeedContentSuggestions",
)


class RendererUnavailable(Exception):
    """The renderer cannot start on this host as configured (no browser, no namespaces, no Playwright)."""


class NavigationRefused(Exception):
    """The page tried to navigate its main frame somewhere the operator's rules do not allow."""


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
                     "(pip install 'webtools[render]').")
    if isolation == "netns" and not namespaces_available():
        found.append("JavaScript rendering is on with network-namespace isolation, which this host does not "
                     "allow (it needs root on Linux and unshare). The renderer refuses to start; choose the "
                     "flags-only isolation explicitly to render with one wall instead of two.")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tree_pss_bytes(root_pid: int) -> int:
    """Proportional set size of ``root_pid`` and all its descendants, from /proc (0 where unreadable)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return total


class Renderer:
    """A warm headless Chromium behind the guarding proxy, shared by the process.

    ``render(url, ...)`` is thread-safe and blocking: it returns the rendered DOM as HTML. Renders run
    concurrently up to ``max_concurrent``; when the browser's processes grow past ``memory_cap_mb``
    it is restarted between renders.
    """

    def __init__(self, client: HttpClient, *, mode: str = "netns", executable: str = DEFAULT_EXECUTABLE,
                 max_concurrent: int = 2, memory_cap_mb: int = 1024, user: str = "nobody",
                 proxy_rules: ProxyRules | None = None):
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
            raise RendererUnavailable("Playwright is not installed (pip install webtools[render]).") from err
        self.client = client
        self.mode = mode
        self.executable = executable
        self.max_concurrent = max_concurrent
        self.memory_cap = memory_cap_mb * 1024 * 1024
        self.user = user
        self._dir = tempfile.mkdtemp(prefix="webtools-render-")
        os.chmod(self._dir, stat.S_IRWXU | stat.S_IXGRP | stat.S_IXOTH)
        self.proxy = GuardingProxy(
            client, proxy_rules, unix_path=os.path.join(self._dir, "proxy.sock") if mode == "netns" else None,
        ).start()
        self._pid_file = os.path.join(self._dir, "launcher.pid")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="webtools-render", daemon=True)
        self._thread.start()
        self._playwright = None
        self._browser = None
        self._semaphore: asyncio.Semaphore | None = None
        self._in_flight = 0
        self.closed = False
        self._run(self._start(), timeout=60)

    # -- life cycle -------------------------------------------------------------------------------

    def _launcher_script(self) -> str:
        """The executable Playwright starts: our launcher, inside ``unshare --net`` in netns mode."""
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(__import__("webtools").__file__)))
        command = [sys.executable, "-m", "webtools.plugins.web_fetch.browser_sandbox", "--mode", self.mode,
                   "--user", self.user, "--pid-file", self._pid_file]
        if self.mode == "netns":
            self._bridge_port = _free_port()
            command = ["unshare", "--net", "--", *command, "--proxy-socket", self.proxy.address,
                       "--bridge-port", str(self._bridge_port)]
        path = os.path.join(self._dir, "chromium")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
            f.write(f"export PYTHONPATH={shlex.quote(package_root)}${{PYTHONPATH:+:$PYTHONPATH}}\n")
            f.write(f'exec {shlex.join(command)} -- {shlex.quote(self.executable)} "$@"\n')
        os.chmod(path, stat.S_IRWXU)
        return path

    def _proxy_server(self) -> str:
        if self.mode == "netns":
            return f"http://127.0.0.1:{self._bridge_port}"
        return f"http://{self.proxy.address}"

    async def _start(self) -> None:
        from playwright.async_api import async_playwright

        self._semaphore = asyncio.Semaphore(self.max_concurrent)
        self._playwright = await async_playwright().start()
        await self._launch()

    async def _launch(self) -> None:
        executable = self._launcher_script()
        self._browser = await self._playwright.chromium.launch(
            executable_path=executable, headless=True, chromium_sandbox=True,
            args=[f"--proxy-server={self._proxy_server()}", *BROWSER_FLAGS],
        )

    def _run(self, coroutine, timeout: float):
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout)

    def memory_bytes(self) -> int:
        """The browser's processes' proportional set size."""
        try:
            with open(self._pid_file) as f:
                return _tree_pss_bytes(int(f.read().strip() or 0))
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True

        async def stop():
            if self._browser is not None:
                await self._browser.close()
            if self._playwright is not None:
                await self._playwright.stop()

        try:
            self._run(stop(), timeout=20)
        except Exception:  # closing must not raise at shutdown
            logger.exception("closing the renderer failed")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self.proxy.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- rendering --------------------------------------------------------------------------------

    def render(self, url: str, *, timeout: float, user_agent: str | None = None,
               check_navigation: Callable[[str], None] | None = None, cancel=None) -> Rendered:
        """The DOM of ``url`` after its scripts ran, as HTML; blocks at most about ``timeout`` seconds.

        ``check_navigation(url)`` is called (in a worker thread) for every navigation of the main
        frame, redirects included, and refuses it by raising.
        """
        if self.closed:
            raise RendererUnavailable("The renderer is closed.")
        future = asyncio.run_coroutine_threadsafe(
            self._render(url, timeout, user_agent, check_navigation), self._loop
        )
        end = time.monotonic() + timeout + 5
        while True:
            try:
                return future.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if (cancel is not None and cancel.is_set()) or time.monotonic() > end:
                    future.cancel()
                    raise TimeoutError("The page took too long to render.") from None

    @staticmethod
    async def _settle(page, pending: set, until: float) -> None:
        """After the load event, wait until no request of the page has been in flight for a moment
        (what scripts fetch to build the page), but not past ``until``."""
        quiet_since = time.monotonic()
        while (now := time.monotonic()) < until:
            if pending:
                quiet_since = now
            elif now - quiet_since >= QUIET_SECONDS:
                return
            await page.wait_for_timeout(50)

    async def _render(self, url: str, timeout: float, user_agent: str | None,
                      check_navigation: Callable[[str], None] | None) -> Rendered:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        assert self._semaphore is not None
        async with self._semaphore:
            start = time.monotonic()
            self._in_flight += 1
            context = await self._browser.new_context(
                service_workers="block", user_agent=user_agent, accept_downloads=False,
            )
            refused: list[str] = []
            try:
                page = await context.new_page()

                async def route(route):
                    request = route.request
                    scheme = request.url.split(":", 1)[0].lower()
                    if scheme not in ("http", "https"):
                        await route.abort("blockedbyclient")
                        return
                    if check_navigation is not None and request.is_navigation_request() \
                            and request.frame.parent_frame is None:
                        try:
                            await asyncio.get_running_loop().run_in_executor(None, check_navigation, request.url)
                        except Exception as err:
                            refused.append(str(err))
                            await route.abort("blockedbyclient")
                            return
                    await route.continue_()

                await context.route("**/*", route)
                pending: set = set()
                page.on("request", lambda request: pending.add(request))
                page.on("requestfinished", lambda request: pending.discard(request))
                page.on("requestfailed", lambda request: pending.discard(request))
                response = None
                try:
                    response = await page.goto(url, wait_until="load", timeout=timeout * 1000)
                except PlaywrightTimeout:
                    pass  # render what arrived
                except PlaywrightError as err:
                    if refused:
                        raise NavigationRefused(refused[0]) from err
                    raise
                if not refused:
                    await self._settle(page, pending, min(start + timeout, time.monotonic() + SETTLE_SECONDS))
                if refused:
                    raise NavigationRefused(refused[0])
                html = await page.content()
                return Rendered(page.url, html, response.status if response is not None else None)
            finally:
                await context.close()
                self._in_flight -= 1
                if self._in_flight == 0 and self.memory_bytes() > self.memory_cap:
                    logger.info("restarting the renderer's browser: over its memory cap")
                    await self._browser.close()
                    await self._launch()


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
