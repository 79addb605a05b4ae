"""Which executables a policy binary matches, as the proxy matches them.

Runtime facts (NVIDIA/OpenShell, ``crates/``):

* The proxy identifies a process (and each ancestor) by ``/proc/<pid>/exe``: a canonical
  path, with no symlink anywhere (``openshell-supervisor-network/src/procfs.rs``).
* ``openshell-supervisor-network/src/opa.rs``, ``resolve_binary_in_container``: for an
  exact policy binary, the engine's data gets the path as written plus, where its *last
  component* is a symlink, the end of that chain of links (a relative target joined to
  the directory as written, normalised lexically; at most 40 links). A symlinked
  ancestor directory is not expanded: ``/bin/curl`` with ``/bin -> usr/bin`` stays
  ``/bin/curl``, which no process's executable path can be.
* Globs are matched against the executable path as they are (``glob.match`` in the
  Rego), so they need nothing here.

With environment evidence this gives each exact binary its *effective* paths: those of
the written path and its link chain that are canonical. A binary that matches nothing
is dropped (a rule left without binaries matches no process). Where the evidence is
silent about a path, the binary is kept as written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from prover.policy.model import Policy, Rule

if TYPE_CHECKING:
    from prover.environment.evidence import Evidence

#: ``resolve_binary_in_container``: Linux's SYMLOOP_MAX.
MAX_LINKS = 40


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _lexical(path: str) -> str:
    """``normalize_path`` in opa.rs: ``.`` dropped, ``..`` pops, no trailing slash."""
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            continue
        parts.append(segment)
    return "/" + "/".join(parts)


def link_chain_end(path: str, evidence: Evidence) -> str | None:
    """The path ``resolve_binary_in_container`` adds for ``path`` (None when it adds
    nothing), or ``""`` when the evidence cannot say."""
    current = path
    for _ in range(MAX_LINKS):
        if evidence.resolve_path(current) is None:
            return ""
        directory = evidence.resolve_path(_parent(current))
        if directory is None:
            return ""
        physical = directory.rstrip("/") + "/" + current.rsplit("/", 1)[1]
        target = evidence.env.symlinks.get(physical)
        if target is None:
            break
        evidence.rely_on_path(current)
        current = target if target.startswith("/") else _lexical(_parent(current) + "/" + target)
    return None if current == path else current


def effective_binaries(
    binary: str, evidence: Evidence, *, existing: bool = False
) -> tuple[str, ...] | None:
    """The canonical executable paths an exact ``binary`` matches, or None when the
    evidence cannot say (a glob is matched as it is: None too). ``existing`` also
    leaves out an executable the evidence says the image lacks: no process runs it
    unless the sandbox creates it, so only a lower bound may leave it out."""
    if "*" in binary:
        return None
    end = link_chain_end(binary, evidence)
    if end == "":
        return None
    found = []
    for path in (binary, end):
        if path is not None:
            evidence.rely_on_path(path)  # canonical or not, the links say so
            if evidence.resolve_path(path) == path and not (
                existing and evidence.path_exists(path) is False
            ):
                found.append(path)
    return tuple(dict.fromkeys(found))


def with_effective_binaries(
    policy: Policy, evidence: Evidence, *, existing: bool = False
) -> Policy:
    """``policy`` with each exact binary replaced by the executables it matches
    (``existing``: those the image has, for a lower bound)."""
    rules: list[Rule] = []
    changed = False
    for rule in policy.rules:
        binaries: list[str] = []
        for binary in rule.binaries:
            effective = effective_binaries(binary, evidence, existing=existing)
            if effective is None:
                binaries.append(binary)
                continue
            changed = changed or effective != (binary,)
            binaries.extend(effective)
        rules.append(replace(rule, binaries=tuple(dict.fromkeys(binaries))))
    return replace(policy, rules=tuple(rules)) if changed else policy
