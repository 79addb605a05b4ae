"""The binary symlink-ambiguity rules (spec §9.7) → ``unresolved_binary_path``.

An exact binary path in one policy against a glob in the other cannot be compared without
the image: a symlink could make the exact path execute something outside the glob, or a
glob-matched path resolve to the exact one. These rules use the glob crate's matching
(``*`` also crosses ``/``), and treat patterns that crate rejects (``**`` inside a path
component, e.g. ``py**``) as matching — the cautious choice, since they only ever turn a
verdict into ``unsupported``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prover.model import Endpoint, Policy, Rule

UNIVERSAL = "/**"
EXACT_UNDER_GLOB_REASON = "network containment depends on image-specific binary symlink resolution"
DENY_UNDER_GLOB_REASON = (
    "network deny containment depends on image-specific exact binary symlink resolution"
)


@lru_cache(maxsize=4096)
def _crate_regex(pattern: str) -> re.Pattern[str] | None:
    """The glob crate's reading of ``pattern``, or None when the crate would reject it."""
    parts: list[str] = []
    components = pattern.split("/")
    for position, component in enumerate(components):
        if "**" in component and component != "**":
            return None
        if component == "**":
            if position == len(components) - 1:
                parts.append(".*")
            else:
                parts.append("(?:.*/)?")
            continue
        parts.append(".*".join(re.escape(piece) for piece in component.split("*")))
        if position != len(components) - 1:
            parts.append("/")
    return re.compile("".join(parts), re.DOTALL)


def glob_crate_matches(pattern: str, path: str) -> bool:
    regex = _crate_regex(pattern)
    return True if regex is None else regex.fullmatch(path) is not None


def _is_glob(binary: str) -> bool:
    return "*" in binary


def _endpoints_overlap(first: Endpoint, second: Endpoint) -> bool:
    if not set(first.ports) & set(second.ports):
        return False
    return first.host == second.host or "*" in first.host or "*" in second.host


def _rules_overlap(first: Rule, second: Rule) -> bool:
    return any(_endpoints_overlap(a, b) for a in first.endpoints for b in second.endpoints)


def _authority(endpoint: Endpoint) -> tuple[object, ...]:
    """An endpoint's authority with its index dropped and rule lists compared as sets."""
    return (
        endpoint.host,
        frozenset(endpoint.ports),
        endpoint.layer,
        endpoint.path,
        endpoint.allowed_ips,
        frozenset((r.method, r.path, r.query) for r in endpoint.allow_rules),
        frozenset((r.method, r.path, r.query) for r in endpoint.deny_rules),
    )


def _authority_set(rule: Rule) -> frozenset[tuple[object, ...]]:
    return frozenset(_authority(e) for e in rule.endpoints)


def exact_binary_under_glob(candidate: Policy, boundary: Policy) -> str | None:
    """Rule 1 of §9.7, checked before the identity-on solve."""
    for glob_rule in boundary.rules:
        globs = [b for b in glob_rule.binaries if _is_glob(b) and b != UNIVERSAL]
        if not globs:
            continue
        for cand_rule in candidate.rules:
            if not _rules_overlap(glob_rule, cand_rule):
                continue
            cand_authority = _authority_set(cand_rule)
            for exact in (b for b in cand_rule.binaries if not _is_glob(b)):
                if not any(glob_crate_matches(g, exact) for g in globs):
                    continue
                explicitly_listed = any(
                    exact in r.binaries and _authority_set(r) == cand_authority
                    for r in boundary.rules
                )
                if not explicitly_listed:
                    return EXACT_UNDER_GLOB_REASON
    return None


def exact_deny_under_glob(candidate: Policy, boundary: Policy) -> str | None:
    """Rule 2 of §9.7, checked after both network solves."""
    for bound_rule in boundary.rules:
        if not any(e.deny_rules for e in bound_rule.endpoints):
            continue
        for exact in (b for b in bound_rule.binaries if not _is_glob(b)):
            for cand_rule in candidate.rules:
                if not any(e.deny_rules for e in cand_rule.endpoints):
                    continue
                if not _rules_overlap(bound_rule, cand_rule):
                    continue
                globs = [b for b in cand_rule.binaries if _is_glob(b) and b != UNIVERSAL]
                if any(glob_crate_matches(g, exact) for g in globs):
                    return DENY_UNDER_GLOB_REASON
    return None
