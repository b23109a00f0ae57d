"""The limits' stores: exact counts under threads and processes, windows, slots and cool-downs.

Both stores obey one contract (``runtime.limits.LimitStore``): ``MemoryStore`` in one process, and the
shell's ``DjangoStore`` over the real database and the configured cache (SQLite and the local-memory
cache in the first CI pass, PostgreSQL and Redis in the second). The process tests always share a real
database and a real Redis between worker processes: the configured ones when they are shared, else a
SQLite file and a redis-server started (and stopped by its pid) for the test; without redis-server they
skip, and fail in CI (``tests/services.py``).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from tests.services import program
from webtools.exceptions import ToolError
from webtools.runtime.limits import (
    CONCURRENT, DAY, MINUTE, WINDOW, AnswerUses, Busy, Counter, MemoryStore, Usage, WindowUses, slot, take,
)
from webtools.stores import DjangoStore

ROOT = Path(__file__).resolve().parent.parent


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "django"])
def store_and_clock(request):
    clock = Clock()
    if request.param == "memory":
        return MemoryStore(clock=clock), clock
    request.getfixturevalue("db")
    return DjangoStore(clock=clock), clock


@pytest.mark.parametrize("kind", [MINUTE, DAY, CONCURRENT, WINDOW])
def test_reserve_grants_up_to_the_limit_and_no_more(store_and_clock, kind):
    store, _ = store_and_clock
    counter = Counter(kind, "t:user:1")
    tokens = [store.reserve(counter, 3) for _ in range(5)]
    assert [t is not None for t in tokens] == [True, True, True, False, False]
    assert store.count(counter) == 3


@pytest.mark.parametrize("kind", [MINUTE, DAY, CONCURRENT, WINDOW])
def test_release_gives_one_back(store_and_clock, kind):
    store, _ = store_and_clock
    counter = Counter(kind, "t:user:1")
    first = store.reserve(counter, 2)
    store.reserve(counter, 2)
    assert store.reserve(counter, 2) is None
    store.release(counter, first)
    assert store.count(counter) == 1
    assert store.reserve(counter, 2) is not None


def test_counters_of_different_names_are_apart(store_and_clock):
    store, _ = store_and_clock
    assert store.reserve(Counter(MINUTE, "t:user:1"), 1) is not None
    assert store.reserve(Counter(MINUTE, "t:user:2"), 1) is not None
    assert store.reserve(Counter(MINUTE, "t:user:1"), 1) is None


def test_a_minute_window_starts_fresh_the_next_minute(store_and_clock):
    store, clock = store_and_clock
    counter = Counter(MINUTE, "t:user:1")
    clock.now = 1_800_000_000.0 - (1_800_000_000.0 % 60)
    assert store.reserve(counter, 1) is not None
    clock.now += 59
    assert store.reserve(counter, 1) is None
    clock.now += 1
    assert store.reserve(counter, 1) is not None


def test_a_window_lasts_its_seconds_and_windows_of_other_lengths_are_apart(store_and_clock):
    store, clock = store_and_clock
    clock.now = 600 * 3_000_000  # the start of a ten-minute window
    ten = Counter(WINDOW, "t:uses:user:1", ttl=600)
    assert store.reserve(ten, 1) is not None
    assert store.reserve(Counter(WINDOW, "t:uses:user:1", ttl=60), 1) is not None
    clock.now += 599
    assert store.reserve(ten, 1) is None and store.count(ten) == 1
    clock.now += 1
    assert store.count(ten) == 0 and store.reserve(ten, 1) is not None


def test_window_uses_count_a_users_calls_across_turns_and_give_back_what_was_not_sent(store_and_clock):
    store, clock = store_and_clock
    clock.now = 600 * 3_000_000
    first, second = WindowUses(store, "7", 600), WindowUses(store, "7", 600)  # two sessions of user 7
    assert first.take("web_fetch", 2) is not None
    unsent = second.take("web_fetch", 2)
    assert unsent is not None and first.take("web_fetch", 2) is None
    unsent.release()
    assert second.take("web_fetch", 2) is not None
    assert WindowUses(store, "8", 600).take("web_fetch", 2) is not None  # another user counts apart
    assert second.take("web_search", 0) is not None  # no limit: always granted
    clock.now += 600
    assert first.take("web_fetch", 2) is not None


def test_answer_uses_count_one_turn_and_give_back():
    uses = AnswerUses()
    taken = [uses.take("web_fetch", 2) for _ in range(3)]
    assert [t is not None for t in taken] == [True, True, False]
    taken[0].release()
    taken[0].release()  # idempotent
    assert uses.take("web_fetch", 2) is not None and uses.take("web_fetch", 2) is None
    assert all(uses.take("web_search", 0) is not None for _ in range(5))


def test_a_day_ends_at_midnight_utc(store_and_clock):
    store, clock = store_and_clock
    counter = Counter(DAY, "t:user:1")
    clock.now = 1_800_000_000.0 - (1_800_000_000.0 % 86400) + 86399  # 23:59:59 UTC
    assert store.reserve(counter, 1) is not None
    assert store.reserve(counter, 1) is None
    clock.now += 1
    assert store.reserve(counter, 1) is not None


def test_a_slot_never_given_back_expires_after_its_ttl():
    clock = Clock()
    store = MemoryStore(clock=clock)
    counter = Counter(CONCURRENT, "engine:brave", ttl=30)
    assert store.reserve(counter, 1) is not None
    assert store.reserve(counter, 1) is None
    clock.now += 31
    assert store.reserve(counter, 1) is not None


@pytest.mark.django_db
def test_a_slot_in_the_cache_expires_after_its_ttl():
    store = DjangoStore()
    counter = Counter(CONCURRENT, "engine:brave", ttl=1)
    assert store.reserve(counter, 1) is not None
    assert store.reserve(counter, 1) is None
    time.sleep(1.2)
    assert store.reserve(counter, 1) is not None


def test_cool_down_lasts_its_seconds(store_and_clock):
    store, clock = store_and_clock
    assert not store.cooling("brave:operator")
    store.cool_down("brave:operator", 30)
    assert store.cooling("brave:operator")
    assert not store.cooling("brave:user:1")
    if isinstance(store, MemoryStore):
        clock.now += 31
        assert not store.cooling("brave:operator")


@pytest.mark.django_db
def test_usage_is_recorded_per_user_tool_engine_day_and_key(django_user_model):
    from webtools.models import Usage as UsageRow

    user = django_user_model.objects.create_user("ann")
    store = DjangoStore()
    for _ in range(3):
        store.record(Usage(str(user.pk), "web_search", "brave", True))
    store.record(Usage(str(user.pk), "web_search", "brave", False))
    store.record(Usage(str(user.pk), "web_fetch"))
    rows = {(r.tool, r.engine, r.operator_key): r.requests for r in UsageRow.objects.filter(user=user)}
    assert rows == {("web_search", "brave", True): 3, ("web_search", "brave", False): 1, ("web_fetch", "", True): 1}


def test_take_with_limit_zero_counts_nothing():
    store = MemoryStore()
    for _ in range(100):
        take(store, Counter(MINUTE, "x"), 0, "never")
    assert store.count(Counter(MINUTE, "x")) == 0


def test_take_past_the_limit_raises_the_message():
    store = MemoryStore()
    take(store, Counter(MINUTE, "x"), 1, "Too many.")
    with pytest.raises(ToolError, match="Too many."):
        take(store, Counter(MINUTE, "x"), 1, "Too many.")


def test_slot_waits_in_line_then_gives_up():
    store = MemoryStore()
    counter = Counter(CONCURRENT, "engine:x")
    with slot(store, counter, 1, "busy"):
        started = time.monotonic()
        with pytest.raises(Busy, match="busy"):
            with slot(store, counter, 1, "busy", wait=0.3):
                pass
        assert 0.25 <= time.monotonic() - started < 2
    with slot(store, counter, 1, "busy"):
        assert store.count(counter) == 1
    assert store.count(counter) == 0


def test_slot_is_taken_by_a_waiter_when_freed():
    store = MemoryStore()
    counter = Counter(CONCURRENT, "engine:x")
    entered = threading.Event()

    def hold():
        with slot(store, counter, 1, "busy"):
            entered.set()
            time.sleep(0.3)

    worker = threading.Thread(target=hold)
    worker.start()
    entered.wait(5)
    with slot(store, counter, 1, "busy", wait=5):
        assert store.count(counter) == 1
    worker.join()


# -- many at once -------------------------------------------------------------------------------------


def _hammer(store, counter, limit, threads=8, attempts=25) -> int:
    granted = []
    barrier = threading.Barrier(threads)

    def work():
        barrier.wait()
        got = sum(1 for _ in range(attempts) if store.reserve(counter, limit) is not None)
        granted.append(got)
        if hasattr(store, "cache"):
            connection.close()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(granted)


@pytest.mark.parametrize("kind", [MINUTE, DAY, CONCURRENT])
def test_threads_at_once_never_pass_the_limit_memory(kind):
    store = MemoryStore()
    assert _hammer(store, Counter(kind, "t:user:1"), 37) == 37


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", [MINUTE, DAY, CONCURRENT])
def test_threads_at_once_never_pass_the_limit_django(kind):
    store = DjangoStore()
    counter = Counter(kind, "t:user:1")
    limit = 37 if kind != CONCURRENT else 20
    assert _hammer(store, counter, limit) == limit
    assert store.count(counter) == limit


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def shared_services():
    """DATABASE_URL and CACHE_URL that worker processes can share with this test."""
    env = dict(os.environ)
    db = connection.settings_dict
    redis_pid = None
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = (
            f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
        )
    else:
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"  # the test database: a file (tests/settings.py)
    backend = django_settings.CACHES["default"]["BACKEND"]
    if backend.endswith("RedisCache"):
        env["CACHE_URL"] = os.environ["CACHE_URL"]
    else:
        server = program("redis-server", "apt-get install redis-server")
        port = _free_port()
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        redis_pid = proc
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        env["CACHE_URL"] = f"redis://127.0.0.1:{port}/0"
    yield env
    if redis_pid is not None:
        redis_pid.terminate()
        redis_pid.wait(10)


@pytest.mark.django_db(transaction=True)
def test_processes_at_once_never_pass_the_limit(shared_services):
    """Four worker processes reserve from the same counters at the same moment: together they get
    exactly the limit of each kind."""
    limits = {MINUTE: 45, DAY: 45, CONCURRENT: 10}
    start_at = time.time() + 6
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.limits_worker", "p:user:1", "20", str(start_at),
             *(f"{kind}:{limit}" for kind, limit in limits.items())],
            cwd=ROOT, env=shared_services, stdout=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]
    outputs = [[int(line) for line in p.communicate(timeout=120)[0].split()] for p in workers]
    assert all(p.returncode == 0 for p in workers)
    for index, (kind, limit) in enumerate(limits.items()):
        got = [output[index] for output in outputs]
        assert sum(got) == limit, (kind, got)


def test_a_per_process_cache_in_production_is_a_warning(settings):
    from webtools.checks import check_limits_cache

    settings.DEBUG = False
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    [warning] = check_limits_cache()
    assert warning.id == "webtools.W020" and "per-minute limits" in warning.msg
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://x"}}
    assert check_limits_cache() == []
    settings.DEBUG = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert check_limits_cache() == []


def test_stores_read_the_module_clock_unless_given_one(monkeypatch):
    from webtools.runtime import limits

    clock = Clock(1_800_000_059.0)
    monkeypatch.setattr(limits, "wall_clock", clock)
    store = MemoryStore()
    counter = Counter(MINUTE, "t:user:1")
    assert store.reserve(counter, 1) is not None
    assert store.reserve(counter, 1) is None
    clock.now += 1  # the next minute
    assert store.reserve(counter, 1) is not None


def test_every_test_starts_early_in_a_minute():
    from webtools.runtime import limits

    # conftest's clock: without it a test started in a minute's last seconds could see its window change.
    assert limits.wall_clock() % 60 < 5
