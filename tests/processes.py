"""What child processes are doing, read from Linux's /proc: for tests that a reading worker was stopped."""
from __future__ import annotations

import os
import time


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used; 0 once it is gone."""
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reading_workers() -> list[int]:
    """This process's live children that are reading workers (not, say, a browser of another test)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is None or fields[1] != me or fields[0] == "Z":
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    if b"webtools.runtime.workers" in cmdline.read():
                        found.append(int(entry))
            except FileNotFoundError:
                continue
    return found


def assert_nothing_keeps_reading() -> None:
    """No reading worker of this process is still using the CPU: the reading it gave up on was stopped."""
    before = {pid: cpu_seconds(pid) for pid in reading_workers()}
    time.sleep(0.5)
    busy = {pid: cpu_seconds(pid) - seconds for pid, seconds in before.items()}
    assert all(used < 0.1 for used in busy.values()), busy
