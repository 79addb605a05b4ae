"""Evidence applied to the boundary check's domains: workdir, identity, paths, binaries.

Each function returns what the reference model cannot say without the image, or None
where the evidence is silent (the caller then keeps today's answer). Every fact used is
recorded on the :class:`~prover.environment.evidence.Evidence`.
"""

from __future__ import annotations

from dataclasses import replace
from weakref import WeakKeyDictionary

from prover.environment.evidence import Evidence
from prover.environment.identity import contains
from prover.policy.fspath import is_beneath
from prover.policy.model import Filesystem, Policy
from prover.results import ProcessCounterexample


def with_workdir(policy: Policy, evidence: Evidence) -> Policy:
    """``include_workdir`` replaced by the image's working directory, read-write."""
    fs = policy.filesystem
    workdir = evidence.workdir()
    if not fs.include_workdir or workdir is None:
        return policy
    evidence.rely(f"the image's working directory is {workdir}")
    read_write = fs.read_write if workdir in fs.read_write else (*fs.read_write, workdir)
    return replace(
        policy,
        filesystem=Filesystem(include_workdir=False, read_only=fs.read_only, read_write=read_write),
    )


def identity_decision(
    field: str, bound: str, cand: str, evidence: Evidence
) -> bool | ProcessCounterexample | None:
    """True when the boundary's identity contains the candidate's, an exceed's
    counterexample (naming both) when it does not, None when the evidence is silent."""
    from prover.environment.identity import driver_sets_identities

    if driver_sets_identities(evidence.env):
        evidence.rely(f"the {evidence.env.driver} driver sets both identities itself")
        return True
    rb = evidence.identity(bound, field)
    rc = evidence.identity(cand, field)
    if rb is None or rc is None:
        return None
    evidence.rely(*rb.facts, *rc.facts)
    if contains(rb, rc):
        return True
    env = evidence.env
    default = env.user if field == "run_as_user" else (env.group or env.user)
    return ProcessCounterexample(
        field=field,  # type: ignore[arg-type]
        boundary=bound or default or "",
        candidate=cand or default or "",
    )


def identity_reason(field: str, bound: str, cand: str, evidence: Evidence) -> str:
    rb = evidence.identity(bound, field)
    rc = evidence.identity(cand, field)
    shown = f"{rb.label} and {rc.label}" if rb and rc else "them"
    return f"process {field}: the image gives {shown}, different non-root identities"


def path_covered(
    path: str, allowed: tuple[str, ...] | list[str], unknown_entry: bool, evidence: Evidence
) -> bool | None:
    """Whether ``path`` resolves beneath a resolved ``allowed`` entry (True), surely not
    (False: every entry resolves, none is an ancestor), or the evidence is silent (None).

    ``unknown_entry`` says the allowed set has an entry the evidence cannot name (an
    unresolved workdir): then only True can be decided.
    """
    resolved = evidence.resolve_path(path)
    if resolved is None:
        return None
    if type(allowed) is tuple and len(allowed) > _INDEX_FROM:
        first, unresolved = _entry_index(allowed, evidence)
        # The first entry (in order) whose target is an ancestor of ``resolved``: what
        # the loop below finds, in a lookup per ancestor rather than a comparison per
        # entry (9,000 paths against 9,000 entries compared 81 million pairs).
        found = min((first[a] for a in _ancestors(resolved) if a in first), default=None)
        if found is not None:
            evidence.rely_on_path(path)
            evidence.rely_on_path(allowed[found])
            return True
        silent = unknown_entry or unresolved
    else:
        silent = unknown_entry
        for entry in allowed:
            target = evidence.resolve_path(entry)
            if target is None:
                silent = True
                continue
            if is_beneath(resolved, target):
                evidence.rely_on_path(path)
                evidence.rely_on_path(entry)
                return True
    if silent:
        return None
    evidence.rely_on_path(path)
    for entry in allowed:
        evidence.rely_on_path(entry)
    return False


#: Entry lists longer than this are indexed once per check (see ``path_covered``).
_INDEX_FROM = 16
_INDEXES: WeakKeyDictionary[Evidence, tuple[tuple[str, ...], dict[str, int], bool]] = (
    WeakKeyDictionary()
)


def _entry_index(allowed: tuple[str, ...], evidence: Evidence) -> tuple[dict[str, int], bool]:
    """Each resolved target of ``allowed`` with the index of its first entry, and whether
    some entry does not resolve; kept for the last tuple indexed for ``evidence``."""
    kept = _INDEXES.get(evidence)
    if kept is not None and kept[0] is allowed:
        return kept[1], kept[2]
    first: dict[str, int] = {}
    unresolved = False
    for index, entry in enumerate(allowed):
        target = evidence.resolve_path(entry)
        if target is None:
            unresolved = True
        else:
            first.setdefault(target, index)
    _INDEXES[evidence] = (allowed, first, unresolved)
    return first, unresolved


def _ancestors(path: str) -> list[str]:
    """``path`` and each of its ancestors up to ``/`` (``path`` canonical, absolute)."""
    result = [path]
    while path != "/":
        path = path.rsplit("/", 1)[0] or "/"
        result.append(path)
    return result


def binary_is_itself(path: str, evidence: Evidence) -> bool:
    """Whether an exact binary path names the executable at that very path (no symlink
    on the way or at its end), so that the runtime's resolved executable path is it."""
    if evidence.resolve_path(path) != path:
        return False
    evidence.rely_on_path(path)
    return True


def resolved_binaries(policy: Policy, evidence: Evidence) -> Policy | None:
    """The policy with each exact binary that the evidence resolves elsewhere replaced by
    its real path, in rules without deny rules; None when nothing changes.

    The runtime matches a process's resolved executable (and ancestors'), so such a
    binary grants either its real path (a runtime that resolves policy paths) or nothing
    (one that compares them literally): the replaced policy allows at least as much,
    and a ``within`` proved for it holds for the original. Deny rules are left alone:
    in the literal reading they would deny nothing, so replacing them could narrow.
    """
    changed = False
    rules = []
    for rule in policy.rules:
        if any(e.deny_rules for e in rule.endpoints):
            rules.append(rule)
            continue
        binaries = []
        for binary in rule.binaries:
            real = None if "*" in binary else evidence.resolve_path(binary)
            if real is not None and real != binary:
                evidence.rely_on_path(binary)
                binaries.append(real)
                changed = True
            else:
                binaries.append(binary)
        rules.append(replace(rule, binaries=tuple(dict.fromkeys(binaries))))
    return replace(policy, rules=tuple(rules)) if changed else None
