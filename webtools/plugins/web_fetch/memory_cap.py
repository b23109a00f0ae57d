"""A hard memory cap for the browser's process tree: a memory cgroup that the kernel enforces.

The renderer makes a child of its own process's memory cgroup and its launcher moves itself there
before it starts the browser, so every process the browser ever forks is counted: the kernel refuses the
tree more than the cap, reclaims what it can and then kills the largest process (a page's renderer),
which the renderer reports as a page that needed too much memory.

Both cgroup versions are supported: v2 (``memory.max``, when the process's own cgroup delegates the
memory controller to its children, as a systemd unit with ``Delegate=yes`` does) and v1
(``memory.limit_in_bytes``, a hybrid host's ``/sys/fs/cgroup/memory``). Where neither can be written
(not root, a read-only cgroup file system, no memory controller) ``MemoryCap.create`` returns None and
the renderer falls back to V8's heap limit and a sampler (``render.py``).
"""
from __future__ import annotations

import itertools
import logging
import os
import time

logger = logging.getLogger("webtools.render")

_names = itertools.count(1)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount root, mount point, file system type, super options) of each mount, from mountinfo."""
    found = []
    for line in _read("/proc/self/mountinfo").splitlines():
        fields = line.split()
        try:
            dash = fields.index("-")
        except ValueError:
            continue
        found.append((fields[3], fields[4], fields[dash + 1], fields[dash + 3] if len(fields) > dash + 3 else ""))
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path by controller: ``""`` is the v2 (unified) one."""
    own = {}
    for line in _read("/proc/self/cgroup").splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            own[""] = path
        for controller in controllers.split(","):
            if controller:
                own[controller] = path
    return own


def _under(mount_root: str, mount_point: str, path: str) -> str:
    if mount_root != "/" and path.startswith(mount_root):
        path = path[len(mount_root):]
    return os.path.join(mount_point, path.lstrip("/"))


class MemoryCap:
    """One cgroup holding the browser's processes, with ``limit`` bytes of memory at most."""

    def __init__(self, path: str, version: int, limit: int):
        self.path = path
        self.version = version
        self.limit = limit

    @classmethod
    def create(cls, limit: int) -> MemoryCap | None:
        """A new child of this process's memory cgroup capped at ``limit`` bytes, or None (and why,
        logged) where the host does not allow one."""
        name = f"webtools-render-{os.getpid()}-{next(_names)}"
        try:
            own, mounts = _own_cgroups(), _mounts()
        except OSError as err:
            logger.info("no memory cgroup for the browser: %s", err)
            return None
        why = "no writable memory cgroup (v2 with the memory controller delegated, or v1)"
        for root, point, kind, options in mounts:
            if kind == "cgroup2" and "" in own:
                base = _under(root, point, own[""])
                try:
                    if "memory" not in _read(os.path.join(base, "cgroup.subtree_control")).split():
                        continue
                    path = os.path.join(base, name)
                    os.mkdir(path)
                except OSError as err:
                    why = f"cgroup v2: {err}"
                    continue
                try:
                    _write(os.path.join(path, "memory.max"), str(limit))
                    if os.path.exists(os.path.join(path, "memory.swap.max")):
                        _write(os.path.join(path, "memory.swap.max"), "0")
                except OSError as err:
                    why = f"cgroup v2: {err}"
                    _remove(path)
                    continue
                return cls(path, 2, limit)
            if kind == "cgroup" and "memory" in options.split(",") and "memory" in own:
                path = os.path.join(_under(root, point, own["memory"]), name)
                try:
                    os.mkdir(path)
                except OSError as err:
                    why = f"cgroup v1: {err}"
                    continue
                try:
                    _write(os.path.join(path, "memory.limit_in_bytes"), str(limit))
                    swap = os.path.join(path, "memory.memsw.limit_in_bytes")
                    if os.path.exists(swap):
                        _write(swap, str(limit))  # memory plus swap: no escape into swap either
                except OSError as err:
                    why = f"cgroup v1: {err}"
                    _remove(path)
                    continue
                return cls(path, 1, limit)
        logger.info("no memory cgroup for the browser: %s", why)
        return None

    def _file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def usage(self) -> int:
        """Bytes the processes in the cgroup use now (what the kernel holds against the cap)."""
        return int(_read(self._file("memory.current" if self.version == 2 else "memory.usage_in_bytes")))

    def peak(self) -> int:
        """The most bytes the cgroup has used (since ``reset_peak``); 0 where the kernel does not say."""
        try:
            return int(_read(self._file("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes")))
        except (OSError, ValueError):
            return 0

    def reset_peak(self) -> None:
        try:
            _write(self._file("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"), "0")
        except OSError:
            pass

    def oom_kills(self) -> int:
        """How many processes the kernel has killed in this cgroup for passing the cap."""
        try:
            text = _read(self._file("memory.events" if self.version == 2 else "memory.oom_control"))
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def remove(self) -> None:
        """Remove the cgroup once the browser's processes have left it (they end with the browser)."""
        _remove(self.path)


def _remove(path: str) -> None:
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)  # processes still dying
    logger.warning("could not remove the browser's memory cgroup %s", path)
