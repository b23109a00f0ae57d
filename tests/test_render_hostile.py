"""Hostile pages against the renderer (issue 20): real Chromium, real loopback servers.

Every name resolves to 127.0.0.1 (the test resolver), so one server plays the page's site
(``site.test``) and the denied one (``denied.test``): a denied host is reached only if its path shows up
in the server's log. Each hostile page tries one thing: a redirect, a script navigation or a meta refresh
to a denied host or to a path robots.txt disallows, subrequests to a denied host, a memory hog, a
``while(true){}``, popups, dialogs, a download, a renderer that dies.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import pytest

from tests.processes import cpu_seconds
from tests.servers import LoopbackServer, Reply, redirect
from tests.test_render import SCRIPT_BUILT, _ask, _require_chromium, client  # noqa: F401 - fixtures
from tests.test_web_fetch import make_tool
from webtools.net.proxy import SESSION_USER, GuardingProxy
from webtools.plugins.web_fetch import browser_process, render
from webtools.runtime import ToolError
from webtools.testing import tool_context_for_test

DENIED = "denied.test"


def page(body: str, head: str = "") -> Reply:
    return Reply(200, {"Content-Type": "text/html"}, f"<html><head>{head}</head><body>{body}</body></html>")


@pytest.fixture
def server():
    with LoopbackServer() as s:
        s.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /private\n"))
        s.route("/secret", page("<p>DENIED HOST CONTENT</p>"))
        s.route("/private", page("<p>ROBOTS DISALLOWED CONTENT</p>"))
        yield s


@pytest.fixture(scope="module")
def renderer(client):  # noqa: F811 - the fixture above
    _require_chromium()
    r = render.renderer_for(client, isolation="netns")
    yield r
    render.close_all()


def site(server, path: str) -> str:
    return server.url(path, host="site.test")


def call(client, url, **options):  # noqa: F811
    ctx, _ = tool_context_for_test(fetch=client)
    options = {"render_javascript": "always", "render_isolation": "netns", "deny_domains": DENIED, **options}
    return make_tool(**options).handler({"url": url}, ctx)


def timed_call(client, url, **options):  # noqa: F811
    started = time.monotonic()
    try:
        return call(client, url, **options), time.monotonic() - started
    except ToolError as err:
        return err, time.monotonic() - started


# -- every hop of every main-frame navigation -------------------------------------------------------

#: Three ways a page moves its main frame to ``/go``, which the server then redirects.
HOW = {
    # The server answers the static download with a script-built page, the browser with a redirect.
    "redirect": None,
    "script": page('<div id="root"></div><script>location.href = "/go"</script>'),
    # The refresh comes after the load event: a slow fetch keeps the page busy until it does, so the
    # render does not end, quiet, just before it (8 seconds: on a loaded machine the refresh's
    # navigation has been seen to start more than one second after the load event, and once, in a landing
    # beside three benchmarks, more than three; the navigation cancels the fetch, so a passing run does
    # not wait for it, and the call's 20 s bound it).
    "meta refresh": page('<div id="root"></div><script>addEventListener("load", () => fetch("/slow"))</script>',
                         '<meta http-equiv="refresh" content="0;url=/go">'),
}


def hostile(server, how: str, target: str) -> str:
    """The URL of a page that reaches ``target`` by ``how``: it passes the static download, then in the
    browser its navigation ends in a 302 to ``target``."""
    server.route("/go", redirect(target))
    server.route("/slow", lambda request: time.sleep(8) or Reply(200, {}, b"slow"))
    if how == "redirect":
        answers = iter([Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT)])
        server.route("/start", lambda request: next(answers, redirect(target)))
    else:
        server.route("/start", HOW[how])
    return site(server, "/start")


@pytest.mark.parametrize("how", list(HOW))
def test_a_302_to_a_denied_host_is_refused_on_every_kind_of_navigation(renderer, client, server, how):  # noqa: F811
    url = hostile(server, how, server.url("/secret", host=DENIED))
    with pytest.raises(ToolError, match=f"The address http://{DENIED}:{server.port}/secret is not allowed"):
        call(client, url)
    assert server.hits("/secret") == 0


@pytest.mark.parametrize("how", list(HOW))
def test_a_302_to_a_path_robots_txt_disallows_is_refused_on_every_kind_of_navigation(
    renderer, client, server, how,  # noqa: F811
):
    url = hostile(server, how, site(server, "/private"))
    with pytest.raises(ToolError, match="robots.txt .* does not allow"):
        call(client, url)
    assert server.hits("/private") == 0


def test_a_302_to_a_private_address_is_refused(renderer, client, server):  # noqa: F811
    url = hostile(server, "script", "http://127.0.0.2:9/")
    with pytest.raises(ToolError, match="127.0.0.2"):
        call(client, url)


def test_redirects_past_the_limit_are_refused(renderer, client, server):  # noqa: F811
    server.route("/start", HOW["script"])
    server.route("/go", lambda request: redirect(f"/go?{int(request.query or 0) + 1}"))
    with pytest.raises(ToolError, match="redirected more than 5 times"):
        call(client, site(server, "/start"))
    assert server.hits("/go") == 6


def test_allowed_redirects_and_navigations_still_render(renderer, client, server):  # noqa: F811
    server.route("/start", HOW["script"])
    server.route("/go", redirect("/there"))
    server.route("/there", page('<div id="root"></div><script>document.getElementById("root").innerHTML = '
                                '"<article><p>" + "Arrived after a script navigation and a redirect. ".repeat(9)'
                                ' + "</p></article>"</script>'))
    out = call(client, site(server, "/start"))
    assert out["rendered"] is True
    assert "Arrived after a script navigation and a redirect." in out["content"]
    assert out["url"] == site(server, "/there")


# -- subrequests: the proxy holds them to the render's domain lists ----------------------------------


def subrequests_page(server) -> Reply:
    denied = f"http://{DENIED}:{server.port}"
    return page(f"""<div id="root"></div><iframe src="{denied}/secret?frame"></iframe>
<img src="{denied}/secret?img"><script src="{denied}/secret?script"></script>
<script>
fetch("{denied}/secret?fetch").catch(() => {{}});
const x = new XMLHttpRequest(); x.open("GET", "{denied}/secret?xhr"); x.send();
try {{ new WebSocket("ws://{DENIED}:{server.port}/secret?ws"); }} catch (e) {{}}
document.getElementById("root").innerHTML = "<article><p>" + "The page itself rendered fine. ".repeat(20) +
  "</p></article>";
</script>""")


def test_subrequests_to_a_denied_host_never_reach_it(renderer, client, server):  # noqa: F811
    server.route("/start", subrequests_page(server))
    renderer.proxy.rules.events.clear()
    out = call(client, site(server, "/start"))
    assert "The page itself rendered fine." in out["content"]
    assert server.hits("/secret") == 0
    refused = [e for e in renderer.proxy.rules.events if DENIED in e.target and not e.allowed]
    assert {e.reason for e in refused} >= {f"the address {DENIED} is not allowed: the operator has blocked "
                                           "this domain"}


def test_subrequests_outside_the_allow_list_never_reach_their_host(renderer, client, server):  # noqa: F811
    server.route("/start", subrequests_page(server))
    out = call(client, site(server, "/start"), deny_domains="", allow_domains="site.test")
    assert "The page itself rendered fine." in out["content"]
    assert server.hits("/secret") == 0


def test_the_proxy_holds_a_session_to_its_lists_and_refuses_requests_without_one(client, server):  # noqa: F811
    import base64

    from webtools.net.proxy import ProxyRules
    from webtools.runtime import domains

    rules = ProxyRules(timeout=5, connect_ports=frozenset({server.port}), sessions_only=True)
    with GuardingProxy(client.clone(), rules) as proxy:
        session = proxy.open_session(lambda host: domains.refusal(host, (), (DENIED,)))
        auth = base64.b64encode(f"{SESSION_USER}:{session.token}".encode()).decode()
        for target in (f"{DENIED}:{server.port}", f"sub.{DENIED}:{server.port}"):
            answer = _ask(proxy, f"CONNECT {target} HTTP/1.1\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode())
            assert answer.startswith(b"HTTP/1.1 403 ") and b"blocked this domain" in answer
        answer = _ask(proxy, f"GET {server.url('/secret', host=DENIED)} HTTP/1.1\r\n"
                             f"Proxy-Authorization: Basic {auth}\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 403 ")
        assert _ask(proxy, f"CONNECT site.test:{server.port} HTTP/1.1\r\nProxy-Authorization: Basic {auth}"
                           "\r\n\r\n".encode()).startswith(b"HTTP/1.1 200 ")
        # No token, a wrong one, or the token of a closed session: 407, nothing leaves.
        wrong = base64.b64encode(f"{SESSION_USER}:{session.token}x".encode()).decode()
        proxy.close_session(session)
        for header in ("", f"Proxy-Authorization: Basic {wrong}\r\n", f"Proxy-Authorization: Basic {auth}\r\n"):
            answer = _ask(proxy, f"CONNECT site.test:{server.port} HTTP/1.1\r\n{header}\r\n".encode())
            assert answer.startswith(b"HTTP/1.1 407 ") and b"Proxy-Authenticate: Basic" in answer
    assert server.hits() == 0


# -- no background traffic ---------------------------------------------------------------------------


def _tree(renderer) -> list[int]:
    with open(renderer._pid_file) as f:
        return browser_process.tree_pids(int(f.read()))


def _browser_command_lines(renderer) -> list[list[str]]:
    found = []
    for entry in _tree(renderer):
        if entry:
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    args = f.read().decode(errors="replace").split("\0")
            except OSError:
                continue
            if args and args[0].endswith("/chromium") and not any(a.startswith("--type=") for a in args):
                found.append(args)
    return found


def test_the_browser_runs_with_playwrights_disabled_features_and_ours_merged(renderer):
    lines = _browser_command_lines(renderer)
    assert lines
    for args in lines:
        lists = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--disable-features=")]
        assert len(lists) >= 2  # Playwright's, then ours: Chromium honours only the last
        assert set(lists[0]) <= set(lists[-1]), set(lists[0]) - set(lists[-1])
        assert {"PreconnectToSearch", "NetworkTimeServiceQuerying", "Translate"} <= set(lists[-1])
        assert "--disable-background-networking" in args and "--disable-component-update" in args


@pytest.mark.parametrize("mode", ["netns", "flags"])
def test_from_its_start_a_browser_makes_requests_to_the_pages_host_only(client, server, mode):  # noqa: F811
    _require_chromium()
    server.route("/start", page('<div id="root"></div><script src="/app.js"></script>'))
    server.route("/app.js", Reply(200, {"Content-Type": "text/javascript"},
                                  'document.getElementById("root").textContent = "built";'))
    r = render.Renderer(client.clone(), mode=mode)  # a fresh browser: its start-up traffic counts too
    try:
        rendered = r.render(site(server, "/start"), timeout=10)
        assert "built" in rendered.html
        time.sleep(3.0)  # and what it does after, with the page closed
        events = list(r.proxy.rules.events)
    finally:
        r.close()
    hosts = {e.target.split("://", 1)[-1].split("/", 1)[0] for e in events}
    assert hosts == {f"site.test:{server.port}"}, events
    assert not [e for e in events if e.method == "CONNECT"], events
    # A context's first request is asked for its render's token (407) and sent again with it.
    assert [e.target for e in events if e.allowed] == [site(server, "/app.js")]
    assert all(e.allowed or e.reason == "no render session: not a page's request" for e in events)


# -- memory ------------------------------------------------------------------------------------------

HOG = page("""<p id="m">start</p><script>
const keep = []; for (let i = 0; i < 80; i++) { const a = new Uint8Array(50e6); a.fill(i + 1); keep.push(a); }
document.getElementById("m").textContent = "survived " + keep.length;
</script>""")


def _private_bytes(renderer) -> int:
    """Anonymous and shared-memory PSS of the browser's process tree: what a page's allocations cost
    (the binary's and libraries' file pages are shared and reclaimable, and not charged to the cap)."""
    try:
        with open(renderer._pid_file) as f:
            root = int(f.read())
    except (OSError, ValueError):
        return 0
    return browser_process.tree_pss_bytes(root, ("Pss_Anon", "Pss_Shmem"))


class Sampler:
    def __init__(self, measure):
        self.peak = 0
        self._stop = threading.Event()
        self._measure = measure
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._measure())
            time.sleep(0.01)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


@pytest.mark.parametrize("use_cgroup", [True, False], ids=["cgroup", "sampler"])
def test_a_page_allocating_4_gb_ends_with_a_memory_error_and_the_browser_starts_again(
    client, server, use_cgroup,  # noqa: F811
):
    _require_chromium()
    server.route("/hog", HOG)
    server.route("/fine", page("<p>a fine page</p>"))
    cap_mb = 512
    r = render.Renderer(client.clone(), mode="netns", memory_cap_mb=cap_mb, use_cgroup=use_cgroup)
    try:
        if use_cgroup and r.cgroup is None:
            pytest.skip("this host allows no memory cgroup (it needs root, and cgroup v1 or v2 with the memory "
                        "controller delegated to this process's cgroup); the sampler's variant runs instead")
        sampler = Sampler(lambda: _private_bytes(r))
        with pytest.raises(render.MemoryExceeded, match="The page needed too much memory to render "
                                                        r"\(the limit is 512 MB\)"):
            r.render(server.url("/hog"), timeout=20)
        peak = sampler.stop()
        if use_cgroup:
            assert peak <= cap_mb * 2**20  # the kernel's cap, on the tree's own memory
            assert 0 < r.cgroup.peak() <= cap_mb * 2**20
        else:
            # The sampler's cap is not a hard one: the page passes it by what it allocates before the next
            # sample is taken and read (0.1 s apart, longer on a loaded machine: 1085 MiB was seen). It is
            # stopped long before the 4 GB it asks for.
            assert peak < 2 * 2**30
        assert "a fine page" in r.render(server.url("/fine"), timeout=10).html
        assert r.restarts == 1
    finally:
        r.close()


# -- time --------------------------------------------------------------------------------------------


#: Past the 4 s timeout, for closing the page and answering. What these tests catch is a wait bound by
#: nothing the caller set (the browser's own 30 s, or never); a landing run on a loaded two-core machine
#: took 4.72 s, past the 0.5 s this was.
_SLACK = 1.5


def _browser_cpu(renderer) -> float:
    with open(renderer._pid_file) as f:
        root = int(f.read())
    return sum(cpu_seconds(pid) for pid in browser_process.tree_pids(root))


def test_a_page_that_never_yields_ends_within_the_timeout_and_stops_burning_cpu(renderer, client, server):  # noqa: F811
    server.route("/spin", page('<div id="root"></div><script>while (true) {}</script>'))
    err, took = timed_call(client, site(server, "/spin"), timeout_seconds=4)
    assert isinstance(err, ToolError) and str(err) == "The page took too long to render."
    assert took < 4 + _SLACK
    time.sleep(1.0)
    before = _browser_cpu(renderer)
    time.sleep(1.0)
    assert _browser_cpu(renderer) - before < 0.3  # its renderer was ended with its context


def test_a_page_that_never_yields_after_its_load_event_ends_within_the_timeout(renderer, client, server):  # noqa: F811
    server.route("/spin", page('<div id="root"></div><script>addEventListener("load", () => '
                               'setTimeout(() => { while (true) {} }, 10))</script>'))
    err, took = timed_call(client, site(server, "/spin"), timeout_seconds=4)
    assert isinstance(err, ToolError) and str(err) == "The page took too long to render."
    assert took < 4 + _SLACK


# -- everything else a page can do to the browser ---------------------------------------------------


def test_popups_are_closed_and_the_page_renders(renderer, client, server):  # noqa: F811
    server.route("/start", page('<div id="root"></div><script>for (let i = 0; i < 5; i++) '
                                'window.open("/start?popup" + i); window.open("http://127.0.0.2:9/"); '
                                'document.getElementById("root").textContent = "Opened its popups. ".repeat(30);'
                                '</script>'))
    out = call(client, site(server, "/start"))
    assert "Opened its popups." in out["content"]
    assert server.hits("/start") == 2  # the static download and the render, never a popup


def test_dialogs_are_dismissed_and_the_page_renders(renderer, client, server):  # noqa: F811
    server.route("/start", page('<div id="root"></div><script>for (let i = 0; i < 20; i++) { alert(i); '
                                'confirm(i); prompt(i); } onbeforeunload = (e) => { e.preventDefault(); '
                                'return "stay"; }; document.getElementById("root").textContent = '
                                '"Past its dialogs. ".repeat(30);</script>'))
    assert "Past its dialogs." in call(client, site(server, "/start"))["content"]


def test_a_download_ends_with_a_clear_error(renderer, client, server):  # noqa: F811
    server.route("/start", page('<div id="root"></div><script>location.href = "/file"</script>'))
    server.route("/file", Reply(200, {"Content-Type": "application/octet-stream",
                                      "Content-Disposition": "attachment; filename=x.bin"}, b"\0" * 1000))
    with pytest.raises(ToolError, match="The page started a download"):
        call(client, site(server, "/start"))


def _renderer_pids(renderer) -> list[int]:
    with open(renderer._pid_file) as f:
        root = int(f.read())
    found = []
    for pid in browser_process.tree_pids(root):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"--type=renderer" in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.parametrize("what", ["renderer", "browser"])
def test_a_renderer_or_browser_that_dies_mid_render_ends_with_a_clear_error(
    renderer, client, server, what,  # noqa: F811
):
    server.route("/start", page('<div id="root"></div><script>fetch("/slow")</script>'))
    server.route("/slow", lambda request: time.sleep(3) or Reply(200, {}, b"late"))

    def kill():
        while not server.hits("/slow"):
            time.sleep(0.02)
        if what == "renderer":
            pids = _renderer_pids(renderer)
        else:
            with open(renderer._pid_file) as f:
                pids = browser_process.tree_pids(int(f.read()))
        for pid in pids:
            # A child may already be gone with its parent, killed just before it.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill)
    killer.start()
    message = "The page crashed the browser" if what == "renderer" else "The browser stopped"
    with pytest.raises(ToolError, match=message):
        call(client, site(server, "/start"))
    killer.join()
    server.route("/fine", page("<p>" + "A fine page after the crash. " * 30 + "</p>"))
    assert "A fine page after the crash." in call(client, site(server, "/fine"))["content"]


def test_a_browser_killed_between_renders_gives_a_clear_error_or_a_page_never_an_unexpected_failure(
    renderer, client, server,  # noqa: F811
):
    server.route("/fine", page("<p>" + "A fine page after the kill. " * 30 + "</p>"))
    call(client, site(server, "/fine"))
    with open(renderer._pid_file) as f:
        browser_process.kill_tree(int(f.read()))
    outcomes = []
    for _ in range(2):
        try:
            outcomes.append(call(client, site(server, "/fine"))["content"])
        except ToolError as err:  # the kill not yet seen: the render's own message
            outcomes.append(str(err))
    assert outcomes[0] in ("The browser stopped while rendering the page; it is being started again.",) or \
        "A fine page after the kill." in outcomes[0]
    assert "A fine page after the kill." in outcomes[1]
