"""Whether a policy's filesystem section allows one concrete access (spec §8.1).

The reference compares paths by exact string (after the loader's lexical
normalisation) and treats ``/`` as covering everything. There is no prefix or ancestor
reasoning: ``/tmp/cache`` is *not* covered by ``/tmp`` here, because symlinks in the
image could alias either. The action path is compared as given; pass a normalised
absolute path.

Writes come from ``read_write``; reads from ``read_only ∪ read_write``. With
``include_workdir`` the image's working directory is read-write, but it is unknown
without the image: it contributes only when the caller supplies ``workdir``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prover.policy.model import FilesystemAction, Policy


def path_is_covered(path: str, entries: Iterable[str]) -> bool:
    """Some entry is ``/`` or equals ``path`` exactly (two lookups when ``entries`` is a
    set: callers checking many paths pass one)."""
    if isinstance(entries, set | frozenset):
        return "/" in entries or path in entries
    return any(entry == "/" or entry == path for entry in entries)


def writable_paths(policy: Policy, workdir: str | None = None) -> tuple[str, ...]:
    extra = (workdir,) if workdir is not None and policy.filesystem.include_workdir else ()
    return policy.filesystem.read_write + extra


def readable_paths(policy: Policy, workdir: str | None = None) -> tuple[str, ...]:
    return policy.filesystem.read_only + writable_paths(policy, workdir)


def filesystem_allows(policy: Policy, action: FilesystemAction, workdir: str | None = None) -> bool:
    if action.access == "write":
        return path_is_covered(action.path, writable_paths(policy, workdir))
    if action.access == "read":
        return path_is_covered(action.path, readable_paths(policy, workdir))
    raise ValueError(f"unknown filesystem access {action.access!r}")


def resolved_access(
    path: str, entries: Iterable[str], resolve: Callable[[str], str | None]
) -> bool | None:
    """With environment evidence (``resolve`` gives a path's real location, or None where
    the evidence is silent): True when the exact rule or a resolved entry that is an
    ancestor of (or equal to) the resolved ``path`` grants it, False when every entry
    resolves and none does, None otherwise. Landlock grants the hierarchy beneath a
    directory, so the comparison is on real locations."""
    listed = tuple(entries)
    if path_is_covered(path, listed):
        return True
    real = resolve(path)
    if real is None:
        return None
    silent = False
    for entry in listed:
        target = resolve(entry)
        if target is None:
            silent = True
        elif real == target or target == "/" or real.startswith(target + "/"):
            return True
    return None if silent else False
