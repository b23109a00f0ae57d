"""The browser's process: what it is started with, and its process tree as /proc shows it."""
from __future__ import annotations

import os
import signal
import socket

#: The real binary: Playwright drives it over a pipe; ``/usr/bin/chromium`` is a shell wrapper.
DEFAULT_EXECUTABLE = "/usr/lib/chromium/chromium"

#: Playwright's own ``--disable-features`` list (1.65, ``chromiumSwitches.ts``). Chromium honours only
#: the last ``--disable-features`` of its command line, so ours must carry Playwright's too, or it
#: turns ``PreconnectToSearch`` (www.google.com) and ``NetworkTimeServiceQuerying`` back on; a test
#: checks that the browser's last list holds every feature of Playwright's first one.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin",
    "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch",
    "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
)
DISABLED_FEATURES = PLAYWRIGHT_DISABLED_FEATURES + (
    "Translate", "InterestFeedContentSuggestions", "AutofillServerCommunication",
    "CertificateTransparencyComponentUpdater", "OptimizationGuideModelDownloading", "OptimizationHintsFetching",
    "DialMediaRouteProvider", "SafeBrowsingEnhancedProtection", "UseDnsHttpsSvcb",
)

#: The second wall: flags measured on this Chromium to matter (others that look alike, such as
#: ``--force-webrtc-ip-handling-policy``, are accepted silently and do nothing). The rest switch off
#: the browser's own traffic (background networking, component updates, metrics, safe browsing,
#: domain reliability); what still tries to leave carries no page's proxy token and gets a 407.
BROWSER_FLAGS = (
    "--proxy-bypass-list=<-loopback>",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--safebrowsing-disable-auto-update",
    "--disable-breakpad",
    "--no-pings",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--metrics-recording-only",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tree_pids(root_pid: int) -> list[int]:
    """``root_pid`` and all its descendants, from /proc."""
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
    found, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def tree_pss_bytes(root_pid: int, fields: tuple[str, ...] = ("Pss",)) -> int:
    """Proportional set size of ``root_pid`` and all its descendants, from /proc (0 where unreadable):
    the ``smaps_rollup`` lines named in ``fields`` added up (``("Pss_Anon", "Pss_Shmem")``: what a page's
    allocations cost, without the binary's shared and reclaimable file pages)."""
    prefixes = tuple(f"{name}:" for name in fields)
    total = 0
    for pid in tree_pids(root_pid):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += sum(int(line.split()[1]) * 1024 for line in f if line.startswith(prefixes))
        except OSError:
            continue
    return total


def kill_tree(root_pid: int) -> None:
    """SIGKILL ``root_pid`` and all its descendants at once."""
    for pid in tree_pids(root_pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
