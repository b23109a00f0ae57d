"""Reading in worker processes: a hard time limit, cancellation, crashes, parts read so far.

The functions the workers run are defined here at module level: a worker imports them by name.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.processes import alive, cpu_seconds, reading_workers
from webtools.runtime import CancelSignal, Deadline, ReadingTooLong, ToolCancelled, ToolError
from webtools.runtime.workers import GRACE_SECONDS, ReadingFailed, WorkerPool

#: Room for a loaded machine (two cores, several test runs) on top of the grace period.
MARGIN = GRACE_SECONDS + 1.5


def pid_and_answer(value, *, deadline):
    return os.getpid(), value * 2


def refuse(*, deadline):
    raise ToolError("The document is not allowed here.")


def spin_without_checking(*, deadline):
    """Busy CPU work that never looks at its deadline, like one pypdf page."""
    while True:
        pass


def parts_then_spin(count, *, deadline):
    yield os.getpid()
    for number in range(count):
        yield f"part {number}"
    while True:
        pass


def parts_checking_the_deadline(*, deadline):
    number = 0
    while True:
        deadline.check()
        number += 1
        if number % 10_000 == 0:
            yield number


def generator_with_result(*, deadline):
    yield "a"
    yield "b"
    return "finished"


def allocate(megabytes, *, deadline):
    global _held
    _held = bytearray(megabytes * 1024 * 1024)  # kept after the call, as a parser's arenas are
    return os.getpid()


_held = None


def die(*, deadline):
    os._exit(3)


def unpicklable_error(*, deadline):
    class Local(Exception):
        pass

    raise Local("local trouble")


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(max_workers=2)
    yield pool
    pool.shutdown()


def test_a_call_returns_the_functions_value_from_another_process(pool):
    pid, answer = pool.call(pid_and_answer, 21, deadline=Deadline(30))
    assert answer == 42 and pid != os.getpid()


def test_a_worker_serves_call_after_call(pool):
    first, _ = pool.call(pid_and_answer, 1, deadline=Deadline(30))
    second, _ = pool.call(pid_and_answer, 2, deadline=Deadline(30))
    assert first == second


def test_a_tool_error_comes_back_as_itself_and_the_worker_is_kept(pool):
    pid, _ = pool.call(pid_and_answer, 1, deadline=Deadline(30))
    with pytest.raises(ToolError, match="not allowed here"):
        pool.call(refuse, deadline=Deadline(30))
    assert pool.call(pid_and_answer, 1, deadline=Deadline(30))[0] == pid


def test_work_that_never_checks_its_deadline_is_killed_when_the_deadline_passes(pool):
    pool.call(pid_and_answer, 1, deadline=Deadline(30))  # a warm worker: the limit is the work's alone
    items = []
    started = time.monotonic()
    with pytest.raises(ReadingTooLong, match="The page took too long to read."):
        pool.call(parts_then_spin, 0, deadline=Deadline(1), on_item=items.append)
    assert time.monotonic() - started < 1 + MARGIN
    (pid,) = items
    assert not alive(pid)  # killed, not left spinning


def test_parts_yielded_before_the_deadline_reach_the_caller(pool):
    pool.call(pid_and_answer, 1, deadline=Deadline(30))
    items = []
    with pytest.raises(ReadingTooLong):
        pool.call(parts_then_spin, 3, deadline=Deadline(1), on_item=items.append)
    assert items[1:] == ["part 0", "part 1", "part 2"]


def test_a_generator_streams_its_parts_and_returns_its_value(pool):
    items = []
    assert pool.call(generator_with_result, deadline=Deadline(30), on_item=items.append) == "finished"
    assert items == ["a", "b"]


def test_work_that_checks_its_deadline_stops_by_itself_and_keeps_its_worker():
    pool = WorkerPool(max_workers=1, grace=5)  # a long grace: the worker's own check must end it
    try:
        pid, _ = pool.call(pid_and_answer, 1, deadline=Deadline(30))
        started = time.monotonic()
        with pytest.raises(ReadingTooLong):
            pool.call(parts_checking_the_deadline, deadline=Deadline(0.5))
        assert time.monotonic() - started < 0.5 + MARGIN
        assert pool.call(pid_and_answer, 1, deadline=Deadline(30))[0] == pid
    finally:
        pool.shutdown()


def test_cancelling_the_turn_stops_the_work_at_once(pool):
    pool.call(pid_and_answer, 1, deadline=Deadline(30))
    signal = CancelSignal()
    items = []
    threading.Timer(0.5, signal.cancel).start()
    started = time.monotonic()
    with pytest.raises(ToolCancelled):
        pool.call(parts_then_spin, 0, deadline=Deadline(60, signal), on_item=items.append)
    assert time.monotonic() - started < 0.5 + MARGIN
    assert not alive(items[0])


def test_a_worker_that_dies_is_a_clear_tool_error_and_is_replaced(pool):
    with pytest.raises(ReadingFailed, match="stopped unexpectedly"):
        pool.call(die, deadline=Deadline(30))
    assert pool.call(pid_and_answer, 5, deadline=Deadline(30))[1] == 10


def test_an_exception_that_cannot_travel_arrives_as_its_type_and_message(pool):
    with pytest.raises(RuntimeError, match="Local: local trouble"):
        pool.call(unpicklable_error, deadline=Deadline(30))


def test_a_call_waits_for_a_free_worker_only_within_its_deadline():
    pool = WorkerPool(max_workers=1)
    try:
        busy = threading.Thread(
            target=lambda: pytest.raises(ReadingTooLong, pool.call, spin_without_checking, deadline=Deadline(1.5)),
        )
        busy.start()
        time.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(ReadingTooLong):
            pool.call(pid_and_answer, 1, deadline=Deadline(0.5))
        assert time.monotonic() - started < 0.5 + MARGIN
        busy.join()
    finally:
        pool.shutdown()


def test_idle_workers_burn_no_cpu(pool):
    pid, _ = pool.call(pid_and_answer, 1, deadline=Deadline(30))
    assert pid in reading_workers()  # what the web_fetch tests watch after a call gave up
    before = cpu_seconds(pid)
    time.sleep(0.5)
    assert cpu_seconds(pid) - before < 0.05


def test_a_worker_ends_when_its_web_process_is_killed_in_the_middle_of_a_page():
    script = (
        "from tests.test_runtime_workers import parts_then_spin\n"
        "from webtools.runtime import Deadline, workers\n"
        "workers.call(parts_then_spin, 0, deadline=Deadline(60), on_item=lambda pid: print(pid, flush=True))\n"
    )
    web = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[1])
    worker = int(web.stdout.readline())
    assert alive(worker)
    web.kill()
    web.wait()
    web.stdout.close()
    gone_by = time.monotonic() + 5
    while alive(worker) and time.monotonic() < gone_by:
        time.sleep(0.1)
    assert not alive(worker)


def test_a_worker_that_runs_out_of_its_memory_limit_is_a_clear_tool_error():
    pool = WorkerPool(max_workers=1, memory_limit=512 * 1024 * 1024)
    try:
        with pytest.raises(ToolError, match="The document is too large to read."):
            pool.call(allocate, 1024, deadline=Deadline(30))
        assert pool.call(pid_and_answer, 2, deadline=Deadline(30))[1] == 4
    finally:
        pool.shutdown()


def test_a_worker_left_holding_much_memory_is_replaced_not_kept(pool):
    big = pool.call(allocate, 300, deadline=Deadline(30))
    small = pool.call(allocate, 1, deadline=Deadline(30))
    assert small != big and not alive(big)
    assert pool.call(allocate, 1, deadline=Deadline(30)) == small


def test_a_forked_process_starts_its_own_workers_and_leaves_its_parents_alone(pool):
    parent_worker, _ = pool.call(pid_and_answer, 1, deadline=Deadline(30))
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # a pre-forking server's worker process
        try:
            pool.shutdown()  # at exit, before any call of its own
            own, _ = pool.call(pid_and_answer, 1, deadline=Deadline(30))
            pool.shutdown()
            os.write(write, b"%d" % own)
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    own = int(os.read(read, 100))
    os.close(read)
    assert own != parent_worker
    assert alive(parent_worker) and pool.call(pid_and_answer, 1, deadline=Deadline(30))[0] == parent_worker
