"""Two saves of one user's settings at the same moment, against gunicorn worker processes, on SQLite and
on PostgreSQL 15.

    .venv/bin/python bench/concurrent_saves.py [--rounds 15] [--workers 4]

For each database: gunicorn with ``--workers`` processes (one thread each, so the two saves of a round
run in two processes) serving the demo project; each round sends two PUTs of the user's web search
settings released together by a barrier, one with a Brave key, one with a Tavily key (keys are kept per
engine, so both must stay). Rounds on first-time rows use a new user each; rounds on an existing row use
one user. Prints per database and kind: 5xx answers, other errors, and lost keys (a key of a round
missing from the row afterwards). The peer is the same rounds sent one save after the other, which can
neither fail nor lose anything: the figures to match. Servers are stopped by their pids.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.load import PYTHON, ROOT, Services, django_run, free_port, wait_for_port  # noqa: E402

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
    "user_engines": True})
row.set_secrets({"api_key@brave": "bench-operator-key-0123456789"})
row.save()
tokens = []
for n in range(args["users"]):
    user = get_user_model().objects.create_user(f"saver{n}")
    tokens.append([user.pk, Token.objects.create(user=user).key])
print(json.dumps(tokens))
"""

KEYS = """
import json, sys
import django
django.setup()
from webtools.models import UserPluginSettings
print(json.dumps({str(row.user_id): row.get_secrets() for row in UserPluginSettings.objects.all()}))
"""


def brave(round_: int) -> str:
    return f"brave-user-key-{round_:03d}-0123456789"


def tavily(round_: int) -> str:
    return f"tavily-user-key-{round_:03d}-0123456789"


def run_rounds(base: str, env: dict, tokens: list, rounds: int, *, together: bool) -> dict:
    """First-time rows (users 0..rounds-1, one each) and an existing row (the last user)."""
    url = f"{base}/api/plugins/web_search/settings"
    statuses: dict[str, list[int]] = {"first": [], "existing": []}
    lost = {"first": 0, "existing": 0}

    def put(token: str, body: dict, barrier: threading.Barrier | None) -> int:
        if barrier is not None:
            barrier.wait()
        return requests.put(url, json=body, headers={"Authorization": f"Token {token}"}, timeout=60).status_code

    def pair(token: str, round_: int) -> list[int]:
        bodies = [{"engine": "brave", "api_key": brave(round_)}, {"engine": "tavily", "api_key": tavily(round_)}]
        if not together:
            return [put(token, body, None) for body in bodies]
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(lambda body: put(token, body, barrier), bodies))

    existing_pk, existing_token = tokens[-1]
    put(existing_token, {"engine": "brave", "api_key": brave(999)}, None)
    for round_ in range(rounds):
        statuses["first"] += pair(tokens[round_][1], round_)
        statuses["existing"] += pair(existing_token, round_)
        stored = json.loads(django_run(KEYS, env))
        want = {"api_key@brave": brave(round_), "api_key@tavily": tavily(round_)}
        for kind, pk in (("first", tokens[round_][0]), ("existing", existing_pk)):
            held = stored.get(str(pk), {})
            lost[kind] += sum(held.get(name) != value for name, value in want.items())
    return {kind: {"saves": len(codes), "5xx": sum(c >= 500 for c in codes),
                   "other errors": sum(400 <= c < 500 for c in codes), "lost keys": lost[kind]}
            for kind, codes in statuses.items()}


def one_database(name: str, database_env: dict, rounds: int, workers: int, together: bool) -> dict:
    from cryptography.fernet import Fernet

    env = {
        **os.environ, **database_env,
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "SECRET_KEY": "bench-only-secret-key-0123456789abcdefghij",
        "WEBTOOLS_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "WEBTOOLS_LOG_LEVEL": "WARNING",
    }
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    tokens = json.loads(django_run(SETUP, env, json.dumps({"users": rounds + 1})))
    port = free_port()
    gunicorn = subprocess.Popen(
        [PYTHON, "-m", "gunicorn", "project.wsgi:application", "--workers", str(workers), "--threads", "1",
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"], cwd=ROOT, env=env,
    )
    try:
        wait_for_port(port)
        started = time.perf_counter()
        result = run_rounds(f"http://127.0.0.1:{port}", env, tokens, rounds, together=together)
        result["seconds"] = round(time.perf_counter() - started, 1)
        return result
    finally:
        gunicorn.terminate()
        gunicorn.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--workers", type=int, default=4)
    opts = parser.parse_args()
    print(f"gunicorn {opts.workers} workers x 1 thread; {opts.rounds} rounds of two saves of one user's "
          "settings (a Brave key and a Tavily key), on first-time rows and on an existing row")
    for together, label in ((True, "at once"), (False, "peer: one after the other")):
        with tempfile.TemporaryDirectory() as folder:
            sqlite = {"DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3", "CACHE_URL": "locmemcache://"}
            print(f"SQLite, {label}: {json.dumps(one_database('sqlite', sqlite, opts.rounds, opts.workers, together))}")
        services = Services()
        try:
            postgres = services.start()
            print(f"PostgreSQL 15 + Redis, {label}: "
                  f"{json.dumps(one_database('postgres', postgres, opts.rounds, opts.workers, together))}")
        finally:
            services.stop()


if __name__ == "__main__":
    main()
