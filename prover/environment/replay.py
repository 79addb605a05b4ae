"""Concrete replay of a counterexample decided with environment evidence.

Plain code, no Z3 and none of the checks' own functions: a filesystem witness replays
when the candidate's entries grant the path and the boundary's entries provably do not
(paths compared by their real locations through the evidence), a process witness when
the two identities resolve to different numbers and the boundary's is not root. Network
witnesses are replayed as without evidence.
"""

from __future__ import annotations

from dataclasses import replace

from prover.concrete.filesystem import resolved_access
from prover.concrete.witness import replays
from prover.environment.document import Environment
from prover.environment.identity import resolve_identity
from prover.environment.paths import PathResolver
from prover.policy.model import Filesystem, Policy
from prover.results import FilesystemCounterexample, ProcessCounterexample


def _with_workdir(policy: Policy, workdir: str | None) -> Policy:
    fs = policy.filesystem
    if not fs.include_workdir or workdir is None:
        return policy
    return replace(policy, filesystem=Filesystem(False, fs.read_only, (*fs.read_write, workdir)))


def replays_with_environment(
    candidate: Policy, boundary: Policy, cex: object, env: Environment
) -> bool:
    """Whether the counterexample is real in the image the evidence describes."""
    if isinstance(cex, FilesystemCounterexample):
        cand, bound = _with_workdir(candidate, env.workdir), _with_workdir(boundary, env.workdir)
        if bound.filesystem.include_workdir:
            return False  # the boundary names a directory the evidence does not
        resolve = PathResolver(env.symlinks, env.complete_beneath).resolve

        def real(path: str) -> str | None:
            return resolve(path)[0]

        def entries(policy: Policy) -> tuple[str, ...]:
            fs = policy.filesystem
            return fs.read_write if cex.access == "write" else (*fs.read_only, *fs.read_write)

        return resolved_access(cex.path, entries(cand), real) is True and (
            resolved_access(cex.path, entries(bound), real) is False
        )
    if isinstance(cex, ProcessCounterexample):
        b = resolve_identity(getattr(boundary, cex.field), cex.field, env)
        c = resolve_identity(getattr(candidate, cex.field), cex.field, env)
        if b is None or c is None:
            return replays(candidate, boundary, cex)
        return b.number != 0 and b.number != c.number
    return replays(candidate, boundary, cex)
