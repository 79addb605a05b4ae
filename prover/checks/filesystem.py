"""Filesystem containment (spec §8): path by path, no ancestry, plus the workdir rules."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from prover.policy.model import Filesystem
from prover.results import CheckOutcome, FilesystemCounterexample, ReasonCode

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence


def _covered(path: str, allowed: Collection[str]) -> bool:
    # A set where it is called per path: 9,000 paths against 9,000 entries compared
    # every pair (2.4 s at a 200 ms deadline, issue 24).
    return "/" in allowed or path in allowed


def workdir_problem(candidate: Filesystem, boundary: Filesystem) -> str | None:
    """The ``unresolved_workdir`` reason (spec §8.2), or None."""
    if candidate.include_workdir and not boundary.include_workdir:
        if "/" not in boundary.read_write:
            return "candidate filesystem authority depends on an unresolved image workdir"
    if boundary.include_workdir:
        writes = frozenset(boundary.read_write)
        reads = writes.union(boundary.read_only)
        if any(not _covered(p, writes) for p in candidate.read_write) or any(
            not _covered(p, reads) for p in candidate.read_only
        ):
            return "boundary filesystem authority depends on an unresolved image workdir"
    return None


def check_filesystem(
    candidate: Filesystem,
    boundary: Filesystem,
    evidence: Evidence | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> CheckOutcome | None:
    """An exceed (returned at once), a deferred unsupported outcome, or None.

    The boundary's workdir counts as a symbolic write entry: it makes the boundary's
    write set non-empty, so an uncovered path is unresolved rather than an exceed.
    With ``evidence``, a path that resolves beneath a resolved boundary entry is covered
    (Landlock grants the hierarchy beneath a directory), and one that every boundary
    entry provably does not contain is an exceed. ``checkpoint`` (the budget's) is
    called for each path resolved with evidence: each compares it with every entry.
    """
    writes = tuple(boundary.read_write)  # tuples: evidence lookups index them once
    write_set_empty = not writes and not boundary.include_workdir
    reads = (*boundary.read_only, *writes)
    read_set_empty = not reads and not boundary.include_workdir
    unresolved: CheckOutcome | None = None
    checks = (
        ("write", candidate.read_write, writes, write_set_empty),
        ("read", candidate.read_only, reads, read_set_empty),
    )
    for access, paths, allowed, allowed_empty in checks:
        exact = frozenset(allowed)
        for path in paths:
            if _covered(path, exact):
                continue
            if not allowed_empty and evidence is not None:
                if checkpoint is not None:
                    checkpoint()
                from prover.environment.apply import path_covered

                decided = path_covered(path, allowed, boundary.include_workdir, evidence)
                if decided is True:
                    continue
                if decided is False:
                    if not _replays(path, allowed, evidence):
                        return CheckOutcome.inconclusive(
                            ReasonCode.INVALID_WITNESS,
                            f"filesystem {access} {path} did not replay with the evidence",
                        )
                    allowed_empty = True
            if allowed_empty:
                return CheckOutcome.exceeds(
                    FilesystemCounterexample(access=access, path=path),
                    decided_by="filesystem",
                )
            if unresolved is None:
                unresolved = CheckOutcome.unsupported(
                    ReasonCode.UNRESOLVED_FILESYSTEM_PATH,
                    f"filesystem {access} containment for '{path}' depends on sandbox path "
                    "resolution; environment evidence listing the image's symlinks there "
                    "(symlinks_complete_beneath) settles it",
                )
    return unresolved


def _replays(path: str, allowed: tuple[str, ...], evidence: Evidence) -> bool:
    """The concrete replay of an evidence-based exceed: the candidate's own entry grants
    ``path`` and the boundary's entries surely do not."""
    from prover.concrete.filesystem import resolved_access

    return resolved_access(path, [path], evidence.resolve_path) is True and (
        resolved_access(path, allowed, evidence.resolve_path) is False
    )
