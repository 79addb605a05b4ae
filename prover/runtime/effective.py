"""The effective filesystems of a candidate and a boundary, in each sandbox environment
the evidence leaves open (today: with and without a GPU).

See :mod:`prover.runtime.filesystem` for the runtime facts. One environment is the main
one (the check's pipeline decides it); the others are decided on the filesystem alone,
since the GPU changes nothing else.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from prover.policy.fspath import is_beneath
from prover.policy.model import Filesystem, Policy
from prover.runtime.baseline import GPU_DEVICE_NODE, GPU_READ_ONLY, GPU_READ_WRITE
from prover.runtime.filesystem import (
    UNRESTRICTED,
    EffectiveFilesystem,
    Exists,
    device_nodes,
    effective_filesystem,
)

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence


class FilesystemWorld(NamedTuple):
    """Both policies' effective filesystems in one environment."""

    gpu: bool
    candidate: EffectiveFilesystem
    boundary: EffectiveFilesystem

    @property
    def candidate_upper(self) -> Filesystem:
        """At least what the candidate may get where the boundary has a ruleset: no
        Landlock only where it may be off while the boundary's is on."""
        c, b = self.candidate, self.boundary
        if c.may_be_off and not _off_together(c, b):
            return UNRESTRICTED
        return c.assumed

    @property
    def boundary_upper(self) -> Filesystem:
        """At most what the boundary may grant, with its ruleset read as built: a
        boundary none of whose listed paths exists would run without Landlock, which
        this reading assumes away (declared in :meth:`facts`) so that an exceed can be
        reported; it never makes a ``within``."""
        return self.boundary.assumed

    def facts(self) -> tuple[str, ...]:
        """The runtime facts of both readings, one line each; a fact both sides share
        is said once."""
        where = " (with a GPU)" if self.gpu else ""
        shared = [f for f in self.candidate.facts if f in self.boundary.facts]
        found = [f"runtime: candidate and boundary{where}: {fact}" for fact in shared]
        for side, eff in (("candidate", self.candidate), ("boundary", self.boundary)):
            found += [f"runtime: {side}{where}: {f}" for f in eff.facts if f not in shared]
        if self.boundary.may_be_off:
            found.append(
                f"runtime: boundary{where}: assumed: a path it lists exists in the image "
                "(else, under best_effort, it would run without Landlock)"
            )
        return tuple(found)


def _off_together(candidate: EffectiveFilesystem, boundary: EffectiveFilesystem) -> bool:
    """Whether the boundary has no ruleset whenever the candidate has none: it may be off
    itself and each of its paths lies at or beneath one of the candidate's, so none of
    them exists when none of the candidate's does."""
    return boundary.may_be_off and all(
        any(is_beneath(p, q) for q in candidate.listed()) for p in boundary.listed()
    )


class FilesystemReading(NamedTuple):
    """What the effective filesystems are computed from: both policies, whether each
    runs in proxy mode (has network rules), and the evidence."""

    candidate: Policy
    boundary: Policy
    candidate_proxy: bool
    boundary_proxy: bool
    evidence: Evidence | None

    def worlds(self) -> tuple[FilesystemWorld, ...]:
        """The environments to decide, the main one first: the evidence's GPU fact, or
        both (without a GPU first) when it does not say."""
        gpu = self.evidence.gpu() if self.evidence is not None else None
        if gpu is not None:
            return (self.world(gpu),)
        main = self.world(False)
        if self._gpu_adds_alike(main):
            return (main,)
        return (main, self.world(True))

    def _gpu_adds_alike(self, main: FilesystemWorld) -> bool:
        """Whether a GPU would add the same paths to both sides, so that a pass without
        one is a pass with one: neither policy lists a GPU path (a listed ``/proc`` is
        made read-write on both sides alike) and both have a ruleset either way."""
        gpu_paths = {*GPU_READ_ONLY, *GPU_READ_WRITE} - {"/proc"}
        for policy in (self.candidate, self.boundary):
            listed = (*policy.filesystem.read_only, *policy.filesystem.read_write)
            if any(p in gpu_paths or GPU_DEVICE_NODE.fullmatch(p) for p in listed):
                return False
        return all(
            eff.assumed is not UNRESTRICTED and not eff.may_be_off
            for eff in (main.candidate, main.boundary)
        )

    def world(self, gpu: bool, exists: Exists | None = None) -> FilesystemWorld:
        """Both effective filesystems with or without a GPU; ``exists`` says which paths
        exist (default: the evidence's facts)."""
        nodes = device_nodes(self.candidate.filesystem, self.boundary.filesystem)
        reading = _without_evidence if exists is None and self.evidence is None else None
        exists = exists or self._exists
        pair = [
            reading(
                policy.filesystem,
                policy.filesystem.loose_read_only,
                policy.landlock_compatibility,
                proxy,
                gpu,
                nodes,
            )
            if reading is not None
            else effective_filesystem(
                policy.filesystem,
                compatibility=policy.landlock_compatibility,
                proxy=proxy,
                gpu=gpu,
                exists=exists,
                nodes=nodes,
            )
            for policy, proxy in (
                (self.candidate, self.candidate_proxy),
                (self.boundary, self.boundary_proxy),
            )
        ]
        return FilesystemWorld(gpu, pair[0], pair[1])

    def witness_world(self, gpu: bool, path: str) -> FilesystemWorld:
        """The environment of a filesystem witness at ``path``: the path and each of its
        ancestors exist there (the runtime then adds them wherever it adds baseline paths,
        and a ruleset listing one of them is built)."""

        def exists(q: str) -> bool | None:
            return True if is_beneath(path, q) else self._exists(q)

        return self.world(gpu, exists)

    def _exists(self, path: str) -> bool | None:
        return self.evidence.path_exists(path) if self.evidence is not None else None


def _unknown(path: str) -> bool | None:
    return None


@lru_cache(maxsize=256)
def _without_evidence(
    fs: Filesystem,
    loose: frozenset[str],
    compatibility: str,
    proxy: bool,
    gpu: bool,
    nodes: tuple[str, ...],
) -> EffectiveFilesystem:
    """:func:`effective_filesystem` where nothing says which paths exist: it depends on
    its arguments alone, so a policy checked again reuses it (``loose``, which
    ``Filesystem`` equality leaves out, is part of the key)."""
    return effective_filesystem(
        fs, compatibility=compatibility, proxy=proxy, gpu=gpu, exists=_unknown, nodes=nodes
    )
