"""Turn what a collector saw into an environment document.

A collector (:mod:`prover.environment.collect` for a root filesystem,
:mod:`prover.environment.image` for an image archive) reports the symlinks it found, the
directories it could not read completely (and those it skipped: ``/proc``, ``/sys``,
``/dev``, mounted at run time), a way to list a directory, and ``/etc/passwd`` and
``/etc/group``. :func:`document` then claims completeness only where the collector
looked at everything: the smallest set of paths that covers the tree except the
incomplete directories, and it keeps the document within the reader's limits by giving
up completeness of the directories with most symlinks first.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from prover.environment.document import MAX_ID, MAX_NAMES, MAX_SYMLINKS
from prover.environment.paths import is_beneath

SKIPPED = ("/proc", "/sys", "/dev")
Children = Callable[[str], Iterable[tuple[str, bool]]]


def parse_ids(text: str | None) -> dict[str, int]:
    """``name -> id`` from passwd/group lines (``name:x:id:...``); bad lines are skipped."""
    found: dict[str, int] = {}
    for line in (text or "").splitlines():
        fields = line.split(":")
        if len(fields) < 3 or not fields[0] or fields[0].startswith(("#", "+", "-")):
            continue
        if fields[2].isascii() and fields[2].isdigit() and int(fields[2]) <= MAX_ID:
            found.setdefault(fields[0], int(fields[2]))
        if len(found) >= MAX_NAMES:
            break
    return found


def primary_gid(passwd: str | None, user: str) -> int | None:
    for line in (passwd or "").splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and (fields[0] == user or fields[2] == user):
            return int(fields[3]) if fields[3].isascii() and fields[3].isdigit() else None
    return None


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _printable(text: str) -> bool:
    """Text a document can carry: valid UTF-8 (no escaped bytes) and no control
    characters."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 32 or ord(c) == 127 for c in text)


def _fit(symlinks: dict[str, str], incomplete: set[str]) -> None:
    """Give up completeness of the directories with most symlinks until they fit."""
    while len(symlinks) > MAX_SYMLINKS:
        counts = Counter(_parent(link) for link in symlinks)
        worst = counts.most_common(1)[0][0]
        incomplete.add(worst)
        for link in [k for k in symlinks if is_beneath(k, worst)]:
            del symlinks[link]


def _cover(incomplete: set[str], children: Children) -> list[str]:
    """The fewest paths covering everything but the incomplete directories."""
    roots: list[str] = []
    pending = ["/"]
    while pending and len(roots) <= MAX_SYMLINKS:
        node = pending.pop()
        if node in incomplete:
            continue
        if not any(is_beneath(i, node) for i in incomplete):
            roots.append(node)
            continue
        for child, is_dir in children(node):
            if not _printable(child):
                continue  # left out: no claim beneath a path the document cannot name
            if is_dir:
                pending.append(child)
            else:
                roots.append(child)
    return sorted(roots[:MAX_SYMLINKS])


def document(
    *,
    symlinks: dict[str, str],
    incomplete: set[str],
    children: Children,
    passwd: str | None,
    group: str | None,
    workdir: str | None,
    user: str | None,
    group_name: str | None = None,
) -> dict[str, Any]:
    """The evidence document (as data, keys in the documented order)."""
    symlinks = dict(symlinks)
    incomplete = set(incomplete)
    for link, target in list(symlinks.items()):
        if not (_printable(link) and _printable(target)):
            incomplete.add(_parent(link))  # a link it cannot list: no claim there
            del symlinks[link]
    _fit(symlinks, incomplete)
    symlinks = {k: v for k, v in symlinks.items() if not any(is_beneath(k, i) for i in incomplete)}
    users = {k: v for k, v in parse_ids(passwd).items() if _printable(k) and len(k) <= 256}
    groups = {k: v for k, v in parse_ids(group).items() if _printable(k) and len(k) <= 256}
    data: dict[str, Any] = {"version": 1}
    if workdir is not None and workdir.startswith("/") and _printable(workdir):
        data["workdir"] = posixpath.normpath(workdir).replace("//", "/")
    if user is not None:
        if group_name is None and ":" in user:
            user, _, group_name = user.partition(":")
        data["user"] = user
        if not group_name:
            # The OCI rule: the user's primary group from /etc/passwd, else root's.
            gid = primary_gid(passwd, user)
            names = [name for name, number in groups.items() if number == gid]
            group_name = names[0] if names else str(gid if gid is not None else 0)
        data["group"] = group_name
    data["users"] = users
    data["groups"] = groups
    data["symlinks"] = dict(sorted(symlinks.items()))
    data["symlinks_complete_beneath"] = _cover(incomplete, children)
    return data
