"""Collect environment evidence from a root filesystem (an unpacked image, or ``/``).

The walk never follows a symlink, skips ``/proc``, ``/sys`` and ``/dev`` (mounted at run
time) and every mount point (a directory on another device than the root: a volume can
gain symlinks after the image is built), leaves a directory it cannot read out of
``symlinks_complete_beneath`` and stops
at :data:`MAX_ENTRIES` entries (what it did not reach is then left out too). Files of
the image (``/etc/passwd``, ``/etc/group``) are read through the image's own symlinks,
resolved inside the root, never outside it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import Any

from prover.environment.paths import MAX_HOPS
from prover.environment.writer import SKIPPED, document

MAX_ENTRIES = 2_000_000
MAX_FILE_BYTES = 4 * 1024 * 1024
Progress = Callable[[str], None]


class CollectError(Exception):
    """The root cannot be collected (the message says why)."""


def _host(root: str, path: str) -> str:
    """The host path of image path ``path`` (``root`` is "" for the host's own ``/``)."""
    if path == "/":
        return root or "/"
    return root + path


def read_in_root(root: str, path: str, limit: int = MAX_FILE_BYTES) -> str | None:
    """The text of ``path`` inside ``root``, following symlinks inside the root only."""
    host = _resolve_in_root(root, path)
    if host is None:
        return None
    try:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(host, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # the runtime refuses an account file that is not UTF-8


def exists_in_root(root: str, path: str) -> bool:
    """Whether ``path`` exists inside ``root`` (symlinks followed inside the root)."""
    host = _resolve_in_root(root, path)
    return host is not None and os.path.lexists(host)


def _resolve_in_root(root: str, path: str) -> str | None:
    """The host path ``path`` inside ``root`` names, following symlinks inside the root
    only (None when a component is missing or the links loop)."""
    parts = [p for p in path.split("/") if p]
    done: list[str] = []
    hops = 0
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            if done:
                done.pop()
            continue
        host = _host(root, "/" + "/".join([*done, name]))
        try:
            info = os.lstat(host)
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > MAX_HOPS:
                return None
            target = os.readlink(host)
            if target.startswith("/"):
                done = []
            parts = [p for p in target.split("/") if p] + parts
            continue
        done.append(name)
    return _host(root, "/" + "/".join(done))


def _entries(
    root: str, path: str, device: int | None = None, mounts: set[str] | None = None
) -> Iterator[tuple[str, bool, str | None]]:
    """(path, is_dir, symlink target) of each entry of directory ``path``; a directory on
    another device than ``device`` (a mount point) is added to ``mounts`` instead."""
    with os.scandir(_host(root, path)) as listing:
        for entry in listing:
            child = ("" if path == "/" else path) + "/" + entry.name
            if entry.is_symlink():
                yield child, False, os.readlink(entry.path)
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and device is not None and mounts is not None:
                if entry.stat(follow_symlinks=False).st_dev != device:
                    mounts.add(child)
                    continue
            yield child, is_dir, None


def collect_rootfs(
    root: str,
    *,
    workdir: str | None = None,
    user: str | None = None,
    progress: Progress | None = None,
    max_entries: int = MAX_ENTRIES,
) -> dict[str, Any]:
    """The evidence document (data) of the root filesystem at ``root``."""
    root = os.path.abspath(root).rstrip("/") or "/"
    if root == "/":
        root = ""
    if not os.path.isdir(root or "/"):
        raise CollectError(f"'{root or '/'}' is not a directory")
    symlinks: dict[str, str] = {}
    incomplete: set[str] = {p for p in SKIPPED}
    device = os.stat(root or "/").st_dev
    pending = ["/"]
    seen = 0
    next_report = 50_000
    while pending:
        directory = pending.pop()
        if directory in SKIPPED:
            continue
        if seen >= max_entries:
            incomplete.add(directory)
            incomplete.update(pending)
            break
        try:
            for child, is_dir, target in _entries(root, directory, device, incomplete):
                seen += 1
                if target is not None:
                    symlinks[child] = target
                elif is_dir:
                    pending.append(child)
        except OSError:
            incomplete.add(directory)
        if progress is not None and seen >= next_report:
            progress(f"{seen} entries, {len(symlinks)} symlinks")
            next_report += 50_000

    def children(path: str) -> Iterator[tuple[str, bool]]:
        try:
            for child, is_dir, target in _entries(root, path):
                if target is None:
                    yield child, is_dir
        except OSError:
            return

    return document(
        symlinks=symlinks,
        incomplete=incomplete,
        children=children,
        passwd=read_in_root(root, "/etc/passwd"),
        group=read_in_root(root, "/etc/group"),
        workdir=workdir,
        user=user,
        note=progress,
        exists=lambda path: exists_in_root(root, path),
    )
