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

import json
import posixpath
from collections.abc import Callable, Iterable
from typing import Any

from prover.environment.accounts import GROUP_FIELDS, PASSWD_FIELDS, Unknown, parse_ids, primary_gid
from prover.environment.document import MAX_SYMLINKS, MAX_TARGET_CHARS
from prover.runtime.baseline import ALWAYS_PRESENT, PROXY_READ_ONLY, PROXY_READ_WRITE

SKIPPED = ("/proc", "/sys", "/dev")
Children = Callable[[str], Iterable[tuple[str, bool]]]
Note = Callable[[str], None]
#: The reader takes at most 4 MiB: symlinks, covering paths and names share it.
MAX_SYMLINK_BYTES = 2 * 1024 * 1024
MAX_COVER_BYTES = 1024 * 1024
MAX_NAMES_BYTES = 256 * 1024
MAX_KEY_CHARS = 1024
MAX_PATH_BYTES = 4096
_END = "\x00"  # no path component holds a NUL


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


def _trie(paths: Iterable[str]) -> dict[str, Any]:
    """Paths as nested dicts of components; ``_END`` marks a path itself."""
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for name in path.split("/")[1:] if path != "/" else []:
            node = node.setdefault(name, {})
        node[_END] = True
    return root


def _beneath_any(path: str, trie: dict[str, Any]) -> bool:
    """``path`` at or beneath a path of ``trie`` (one step per component)."""
    node = trie
    if _END in node:
        return True
    for name in path.split("/")[1:]:
        node = node.get(name)
        if node is None:
            return False
        if _END in node:
            return True
    return False


def _size(text: str) -> int:
    """Bytes ``text`` takes in the document (JSON-escaped), with its punctuation."""
    return len(json.dumps(text, ensure_ascii=False).encode()) + 8


def _fit(symlinks: dict[str, str], incomplete: set[str]) -> None:
    """Give up completeness of the directories with most symlinks until the rest fit the
    reader's limits (count and bytes). Linear: counts once, gives up in that order (a
    directory beneath one given up counts until the end, so more may be given up than
    needed, never fewer)."""
    total = len(symlinks)
    size = sum(_size(k) + _size(v) for k, v in symlinks.items())
    if total <= MAX_SYMLINKS and size <= MAX_SYMLINK_BYTES:
        return
    by_parent: dict[str, list[str]] = {}
    for link in symlinks:
        by_parent.setdefault(_parent(link), []).append(link)
    order = sorted(by_parent, key=lambda d: (-len(by_parent[d]), d))
    for directory in order:
        if total <= MAX_SYMLINKS and size <= MAX_SYMLINK_BYTES:
            break
        incomplete.add(directory)
        for link in by_parent[directory]:
            total -= 1
            size -= _size(link) + _size(symlinks.pop(link))


def _cover(incomplete: set[str], children: Children) -> list[str]:
    """The fewest paths covering everything but the incomplete directories, within the
    reader's limits (a path left out is only a claim not made). Linear: each directory
    with something incomplete beneath it is listed once, found through a trie."""
    trie = _trie(incomplete)
    roots: list[str] = []
    size = 0
    pending: list[tuple[str, dict[str, Any]]] = [("/", trie)]
    while pending and len(roots) < MAX_SYMLINKS and size < MAX_COVER_BYTES:
        node, below = pending.pop()
        if _END in below:
            continue
        if not below:
            roots.append(node)
            size += _size(node)
            continue
        for child, is_dir in children(node):
            if not _printable(child):
                continue  # left out: no claim beneath a path the document cannot name
            sub = below.get(child.rsplit("/", 1)[1], {})
            if is_dir:
                pending.append((child, sub))
            elif not sub:
                roots.append(child)
                size += _size(child)
    return sorted(roots[:MAX_SYMLINKS])


def _fits_key(link: str) -> bool:
    """Whether ``link`` can be a key of the document's ``symlinks`` mapping: YAML reads an
    implicit key of at most 1024 characters as written (JSON-escaped, with its quotes)."""
    return len(json.dumps(link, ensure_ascii=False)) <= MAX_KEY_CHARS


def _name(value: str) -> bool:
    """A ``user``/``group`` value the document's reader accepts."""
    return 0 < len(value) <= 256 and ":" not in value and _printable(value)


def _names(table: dict[str, int]) -> dict[str, int]:
    kept: dict[str, int] = {}
    size = 0
    for name, number in table.items():
        if _printable(name) and len(name) <= 256:
            size += _size(name) + 12
            if size > MAX_NAMES_BYTES:
                break
            kept[name] = number
    return kept


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
    note: Note | None = None,
    exists: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """The evidence document (as data, keys in the documented order); ``note`` hears of
    each claim left out for the document's own limits."""
    symlinks = dict(symlinks)
    incomplete = set(incomplete)
    too_long = 0
    for link, target in list(symlinks.items()):
        fits = _fits_key(link) and 0 < len(target) <= MAX_TARGET_CHARS
        if not (fits and _printable(link) and _printable(target)):
            incomplete.add(_parent(link))  # a link it cannot list: no claim there
            del symlinks[link]
            too_long += not fits
    if note is not None and too_long:
        note(
            f"{too_long} symlinks exceed the document's limits ({MAX_KEY_CHARS - 2}-character "
            f"path, {MAX_TARGET_CHARS}-character target): no claim in their directories"
        )
    before = len(symlinks)
    _fit(symlinks, incomplete)
    if note is not None and len(symlinks) < before:
        note(
            f"{before} symlinks exceed the document's limits ({MAX_SYMLINKS} symlinks, "
            f"{MAX_SYMLINK_BYTES} bytes): completeness given up where they are densest"
        )
    trie = _trie(incomplete)
    symlinks = {k: v for k, v in symlinks.items() if not _beneath_any(k, trie)}
    users = _names(parse_ids(passwd, PASSWD_FIELDS))
    groups = _names(parse_ids(group, GROUP_FIELDS))
    data: dict[str, Any] = {"version": 1}
    if workdir is not None and workdir.startswith("/") and _printable(workdir):
        if len(workdir.encode()) < MAX_PATH_BYTES:
            data["workdir"] = posixpath.normpath(workdir).replace("//", "/")
        elif note is not None:
            note(f"a workdir of {len(workdir)} characters is longer than PATH_MAX: left out")
    if user is not None and group_name is None and ":" in user:
        user, _, group_name = user.partition(":")
    if user is not None and not _name(user):
        if note is not None:
            note("the user is not a name the document can hold: user and group left out")
        user = None
    if user is not None:
        data["user"] = user
        if not group_name:
            # The OCI rule: the user's primary group from /etc/passwd, else root's; none
            # when the runtime would fail the lookup (a malformed or ambiguous entry).
            try:
                gid = primary_gid(passwd, user)
            except Unknown:
                pass
            else:
                names = [name for name, n in groups.items() if n == gid]
                group_name = names[0] if names else str(gid if gid is not None else 0)
        if group_name and _name(group_name):
            data["group"] = group_name
    data["users"] = users
    data["groups"] = groups
    data["symlinks"] = dict(sorted(symlinks.items()))
    data["symlinks_complete_beneath"] = _cover(incomplete, children)
    if exists is not None:
        # Only presence is claimed: a path the image lacks may still be a volume's
        # mount point at run time.
        present = {p: True for p in IMAGE_BASELINE if exists(p)}
        if present:
            data["paths_exist"] = present
    if user is not None and "user" in data and user in users:
        try:
            gid = primary_gid(passwd, user)
        except Unknown:
            gid = None
        if gid is not None:
            data["primary_gids"] = {user: gid}
    return data


#: The proxy baseline paths the image decides (``/proc`` and ``/dev/urandom`` are
#: mounted by the container runtime whatever the image has).
IMAGE_BASELINE = tuple(p for p in (*PROXY_READ_ONLY, *PROXY_READ_WRITE) if p not in ALWAYS_PRESENT)
