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

from prover.policy.model import Endpoint, Policy, Rule

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


class _RuleOverlap:
    """Which rules of a policy have an endpoint sharing a port with a given endpoint and
    the same host, or a ``*`` in either host: the reference's overlap test, indexed by
    port so that comparing two large policies is not quadratic."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self._by_port: dict[int, tuple[dict[str, set[int]], set[int], set[int]]] = {}
        for index, rule in enumerate(rules):
            for endpoint in rule.endpoints:
                for port in endpoint.ports:
                    by_host, wildcard, every = self._by_port.setdefault(port, ({}, set(), set()))
                    by_host.setdefault(endpoint.host, set()).add(index)
                    if "*" in endpoint.host:
                        wildcard.add(index)
                    every.add(index)

    def overlapping(self, rule: Rule) -> set[int]:
        """Indexes of the rules with an endpoint overlapping one of ``rule``'s."""
        found: set[int] = set()
        for endpoint in rule.endpoints:
            for port in endpoint.ports:
                entry = self._by_port.get(port)
                if entry is None:
                    continue
                by_host, wildcard, every = entry
                if "*" in endpoint.host:
                    found |= every
                else:
                    found |= by_host.get(endpoint.host, set())
                    found |= wildcard
        return found


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
    """Rule 1 of §9.7, checked before the identity-on solve: a candidate exact binary
    matched by an overlapping boundary glob must be listed, with the same authority, in
    some boundary rule."""
    globbed = [
        (rule, globs)
        for rule in boundary.rules
        if (globs := [b for b in rule.binaries if _is_glob(b) and b != UNIVERSAL])
    ]
    if not globbed:
        return None
    listed = {(b, _authority_set(rule)) for rule in boundary.rules for b in rule.binaries}
    overlap = _RuleOverlap(candidate.rules)
    authorities: dict[int, frozenset[tuple[object, ...]]] = {}
    for glob_rule, globs in globbed:
        for index in overlap.overlapping(glob_rule):
            cand_rule = candidate.rules[index]
            for exact in (b for b in cand_rule.binaries if not _is_glob(b)):
                if not any(glob_crate_matches(g, exact) for g in globs):
                    continue
                if index not in authorities:
                    authorities[index] = _authority_set(cand_rule)
                if (exact, authorities[index]) not in listed:
                    return EXACT_UNDER_GLOB_REASON
    return None


def exact_deny_under_glob(candidate: Policy, boundary: Policy) -> str | None:
    """Rule 2 of §9.7, checked after both network solves: an exact binary of a boundary
    rule with deny rules, matched by a glob of an overlapping candidate rule with deny
    rules."""
    denying = tuple(r for r in candidate.rules if any(e.deny_rules for e in r.endpoints))
    if not denying:
        return None
    overlap = _RuleOverlap(denying)
    for bound_rule in boundary.rules:
        if not any(e.deny_rules for e in bound_rule.endpoints):
            continue
        exacts = [b for b in bound_rule.binaries if not _is_glob(b)]
        if not exacts:
            continue
        for index in overlap.overlapping(bound_rule):
            globs = [b for b in denying[index].binaries if _is_glob(b) and b != UNIVERSAL]
            if any(glob_crate_matches(g, exact) for g in globs for exact in exacts):
                return DENY_UNDER_GLOB_REASON
    return None
