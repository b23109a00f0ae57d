"""The browser's launcher: what Playwright starts in place of Chromium (``python -m`` this module).

In ``netns`` mode it already runs inside a new, empty network namespace (``unshare --net`` starts it):
it brings up that namespace's loopback, listens there on ``--bridge-port`` and bridges every connection
to the guarding proxy's Unix socket, which is the namespace's only way out. The browser, whose proxy is
that bridge, has no route anywhere else: not to the host's loopback, not to link-local addresses, and no
UDP at all, whatever its flags say (WebRTC's STUN and TURN included).

In both modes it drops root (Chromium's own sandbox stays on) and starts the browser with the pipe
transport's descriptors 3 and 4, then lives exactly as long as the browser does.
"""
from __future__ import annotations

import argparse
import fcntl
import os
import pwd
import signal
import socket
import struct
import subprocess
import sys
import threading

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def loopback_up() -> None:
    """``ip link set lo up`` without iproute2: a fresh namespace's loopback starts down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _bridge_one(conn: socket.socket, unix_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(unix_path)
    except OSError:
        conn.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, conn), daemon=True)
    back.start()
    _pump(conn, upstream)
    back.join()
    conn.close()
    upstream.close()


def serve_bridge(listener: socket.socket, unix_path: str) -> None:
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_bridge_one, args=(conn, unix_path), daemon=True).start()


def _user_data_dir(argv: list[str]) -> str | None:
    for arg in argv:
        if arg.startswith("--user-data-dir="):
            return arg.split("=", 1)[1]
    return None


def _chown_tree(path: str, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="browser_sandbox")
    parser.add_argument("--mode", choices=("netns", "flags"), required=True)
    parser.add_argument("--proxy-socket")
    parser.add_argument("--bridge-port", type=int)
    parser.add_argument("--user", default="nobody")
    parser.add_argument("--pid-file")
    parser.add_argument("browser", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    browser = [a for a in args.browser if a != "--"]
    if args.pid_file:
        with open(args.pid_file, "w") as f:
            f.write(str(os.getpid()))
    if args.mode == "netns":
        loopback_up()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", args.bridge_port))
        listener.listen(128)
        threading.Thread(target=serve_bridge, args=(listener, args.proxy_socket), daemon=True).start()
    env = dict(os.environ)
    kwargs: dict = {}
    if os.geteuid() == 0:
        user = pwd.getpwnam(args.user)
        home = _user_data_dir(browser)
        if home:
            _chown_tree(home, user.pw_uid, user.pw_gid)
            env["HOME"] = home
        kwargs = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    process = subprocess.Popen(browser, pass_fds=(3, 4), env=env, **kwargs)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: process.send_signal(signum))
    return process.wait()


if __name__ == "__main__":
    sys.exit(main())
