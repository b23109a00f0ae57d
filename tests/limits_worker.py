"""A worker process of tests/test_limits.py: reserves from the shared store and prints what it got.

Run as ``python -m tests.limits_worker NAME ATTEMPTS START_AT KIND:LIMIT...`` with DATABASE_URL and
CACHE_URL naming the database and cache the test shares. The n-th kind starts when the wall clock reaches
START_AT + 1.5 n seconds, so that all workers reserve from one counter at the same moment. The store's
clock stands still at START_AT, so that every worker counts in the same minute and day (a run that
crossed a minute boundary would rightly count in two windows). Prints one line per kind: how many
reservations it got.
"""
import os
import sys
import time


def main() -> None:
    name, attempts, start_at, *kinds = sys.argv[1:]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from webtools.runtime.limits import Counter
    from webtools.stores import DjangoStore

    store = DjangoStore(clock=lambda: float(start_at))
    for n, spec in enumerate(kinds):
        kind, limit = spec.split(":")
        counter = Counter(kind, name, ttl=60)
        time.sleep(max(0.0, float(start_at) + 1.5 * n - time.time()))
        print(sum(1 for _ in range(int(attempts)) if store.reserve(counter, int(limit)) is not None), flush=True)


if __name__ == "__main__":
    main()
