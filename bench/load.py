"""Load: the settings API and web_search calls against gunicorn workers on PostgreSQL and Redis.

    .venv/bin/python bench/load.py [--workers 4] [--users 20] [--quota 25] [--calls 40] [--threads 24]

Starts PostgreSQL 15 (initdb/pg_ctl, as the ``postgres`` user when run as root) and Redis on free ports
in a temporary folder, a stub engine (a loopback server answering every search with the recorded Brave
answer of tests/fixtures after 20 ms), and gunicorn with ``--workers`` processes of 4 threads serving the
demo project (bench/load_settings.py). Each of ``--users`` users, with a daily quota of ``--quota``
searches on the operator's key, makes ``--calls`` search calls, as many settings reads and a few writes,
all shuffled over ``--threads`` client threads. Prints requests per second, p50/p99 per kind, errors,
lost writes (engine requests missing from the usage table, daily counts differing from the calls that
got results), whether every user got exactly their quota (none past it by even one call), and the
number of queries of one settings read. Every server is stopped by its pid at the end. Never run as a
test; the peer is the same server's settings read alone, without tool calls.
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
BRAVE = (ROOT / "tests" / "fixtures" / "search" / "brave.json").read_bytes()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, seconds: float = 30) -> None:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"Nothing listens on port {port}.")


class Services:
    """PostgreSQL and Redis in a temporary folder, each stopped by its pid."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="webtools-load-"))
        self.pids: list[int] = []
        self.procs: list[subprocess.Popen] = []

    def _as_postgres(self, *args: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *args], check=True, stdout=subprocess.DEVNULL)

    def start(self) -> dict:
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        pg_port, redis_port = free_port(), free_port()
        self._as_postgres("initdb", f"--pgdata={self.dir / 'pg'}", "--auth=trust", "--username=postgres",
                          "--no-sync")
        self._as_postgres("pg_ctl", f"--pgdata={self.dir / 'pg'}", f"--log={self.dir / 'pg.log'}", "--wait",
                          "start", "-o", f"-p {pg_port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                          "-c fsync=off -c max_connections=300")
        self.pids.append(int((self.dir / "pg" / "postmaster.pid").read_text().split()[0]))
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no"], stdout=subprocess.DEVNULL)
        self.procs.append(redis)
        wait_for_port(redis_port)
        return {
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{pg_port}/postgres",
            "CACHE_URL": f"redis://127.0.0.1:{redis_port}/0",
        }

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait(10)
        for pid in self.pids:
            try:
                os.kill(pid, 2)  # SIGINT: PostgreSQL's fast shutdown
            except ProcessLookupError:
                continue
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
        shutil.rmtree(self.dir, ignore_errors=True)


class StubEngine(http.server.ThreadingHTTPServer):
    """Answers every request with the recorded Brave answer after ``delay`` seconds; counts requests."""

    daemon_threads = True

    def __init__(self, delay: float = 0.02) -> None:
        self.hits = 0
        self.lock = threading.Lock()
        self.delay = delay
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - the base class's name
                with server.lock:
                    server.hits += 1
                time.sleep(server.delay)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(BRAVE)))
                self.end_headers()
                self.wfile.write(BRAVE)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


SETUP = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from webtools.host import get_plugin
from webtools.models import PluginOptions
args = json.loads(sys.argv[1])
plugin = get_plugin("web_search")
row = PluginOptions(plugin="web_search", values={**plugin.default_options(), "engine": "brave",
    "enabled_by_default": True, "user_daily_searches": args["quota"], "user_searches_per_minute": 0,
    "max_uses": 0, "engine_concurrency": 8})
row.set_secrets({"api_key": "bench-key-0123456789abcdef"})
row.save()
tokens = {}
for n in range(args["users"]):
    user = get_user_model().objects.create_user(f"load{n}", password="pw-load-123")
    tokens[str(user.pk)] = Token.objects.create(user=user).key
print(json.dumps(tokens))
"""

VERIFY = """
import json
import django
django.setup()
from django.db import connection
from django.db.models import Sum
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.contrib.auth import get_user_model
from webtools.models import DailyCount, Usage
daily = {row.name.rsplit(":", 1)[1]: row.count for row in DailyCount.objects.all()}
usage = Usage.objects.filter(tool="web_search").aggregate(total=Sum("requests"))["total"] or 0
client = Client()
client.force_login(get_user_model().objects.get(username="load0"))
client.get("/api/plugins/settings")
with CaptureQueriesContext(connection) as queries:
    assert client.get("/api/plugins/settings").status_code == 200
print(json.dumps({"daily": daily, "usage": usage, "settings_queries": len(queries)}))
"""


def django_run(code: str, env: dict, *args: str) -> str:
    return subprocess.run([PYTHON, "-c", code, *args], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True).stdout


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--quota", type=int, default=25)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--threads", type=int, default=24)
    opts = parser.parse_args()

    services, engine, gunicorn = Services(), StubEngine(), None
    try:
        from cryptography.fernet import Fernet

        env = {
            **os.environ, **services.start(),
            "DJANGO_SETTINGS_MODULE": "bench.load_settings",
            "SECRET_KEY": "bench-only-secret-key-0123456789abcdefghij",
            "WEBTOOLS_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
            "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
            "BENCH_ENGINE_URL": f"http://127.0.0.1:{engine.server_address[1]}/res/v1/web/search",
            "WEBTOOLS_LOG_LEVEL": "WARNING",
        }
        subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        tokens = json.loads(django_run(SETUP, env, json.dumps({"users": opts.users, "quota": opts.quota})))
        port = free_port()
        gunicorn = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "project.wsgi:application", "--workers", str(opts.workers), "--threads", "4",
             "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
            cwd=ROOT, env=env,
        )
        wait_for_port(port)
        base = f"http://127.0.0.1:{port}"

        tasks = []
        for pk, token in tokens.items():
            tasks += [("search", pk, token)] * opts.calls + [("read", pk, token)] * opts.calls
            tasks += [("write", pk, token)] * 5
        random.Random(12).shuffle(tasks)
        local = threading.local()
        timings: dict[str, list[float]] = {"search": [], "read": [], "write": []}
        got: dict[str, int] = {pk: 0 for pk in tokens}
        refused: dict[str, int] = {pk: 0 for pk in tokens}
        errors: list[str] = []
        lock = threading.Lock()

        def run(task):
            kind, pk, token = task
            session = getattr(local, "session", None) or requests.Session()
            local.session = session
            headers = {"Authorization": f"Token {token}"}
            started = time.perf_counter()
            if kind == "search":
                r = session.post(f"{base}/bench/call", json={"tool": "web_search", "input": {"query": "django"}},
                                 headers=headers, timeout=60)
            elif kind == "read":
                r = session.get(f"{base}/api/plugins/settings", headers=headers, timeout=60)
            else:
                r = session.put(f"{base}/api/plugins/web_search/tools/web_search",
                                json={"enabled": random.random() < 0.5}, headers=headers, timeout=60)
            elapsed = time.perf_counter() - started
            with lock:
                timings[kind].append(elapsed)
                if r.status_code != 200:
                    errors.append(f"{kind} HTTP {r.status_code}")
                elif kind == "search":
                    body = r.json()
                    if not body["is_error"]:
                        got[pk] += 1
                    elif body["output"]["error"].startswith("Today's limit"):
                        refused[pk] += 1
                    else:
                        errors.append(f"search: {body['output']['error'][:80]}")

        started = time.perf_counter()
        with ThreadPoolExecutor(opts.threads) as pool:
            list(pool.map(run, tasks))
        wall = time.perf_counter() - started

        # The peer: the same settings reads alone, on the same server.
        read_only = [("read", pk, token) for pk, token in tokens.items()] * opts.calls
        timings_mixed_read = timings["read"]
        timings["read"] = []
        alone_started = time.perf_counter()
        with ThreadPoolExecutor(opts.threads) as pool:
            list(pool.map(run, read_only))
        alone_wall = time.perf_counter() - alone_started
        alone = timings["read"]
        timings["read"] = timings_mixed_read

        checked = json.loads(django_run(VERIFY, env))
        expected = min(opts.calls, opts.quota)
        past = {pk: n for pk, n in got.items() if n > opts.quota}
        short = {pk: n for pk, n in got.items() if n < expected}
        lost = abs(checked["usage"] - engine.hits) + sum(
            abs(checked["daily"].get(pk, 0) - got[pk]) for pk in tokens
        )
        print(f"gunicorn {opts.workers} workers x 4 threads, PostgreSQL + Redis, {opts.threads} client threads, "
              f"{opts.users} users, quota {opts.quota}/day, {opts.calls} searches each")
        print(f"requests: {len(tasks)} in {wall:.1f} s = {len(tasks) / wall:.0f} req/s; errors: {len(errors)}"
              + (f" (first: {errors[0]})" if errors else ""))
        for kind, values in timings.items():
            print(f"  {kind:6} n={len(values):5}  p50 {percentile(values, 0.5):7.1f} ms  "
                  f"p99 {percentile(values, 0.99):7.1f} ms")
        print(f"  peer: settings reads alone n={len(alone)}: {len(alone) / alone_wall:.0f} req/s, "
              f"p50 {percentile(alone, 0.5):.1f} ms, p99 {percentile(alone, 0.99):.1f} ms")
        print(f"engine requests {engine.hits}, usage recorded {checked['usage']}; lost writes: {lost}")
        print(f"quota: every user got {expected} searches: {not past and not short}; past quota: {len(past)} "
              f"users; refused past quota: {sum(refused.values())}")
        print(f"queries of one settings read: {checked['settings_queries']}")
        print(f"median of all: {statistics.median([v for vs in timings.values() for v in vs]) * 1000:.1f} ms")
    finally:
        if gunicorn is not None:
            gunicorn.terminate()
            gunicorn.wait(30)
        engine.shutdown()
        services.stop()


if __name__ == "__main__":
    main()
