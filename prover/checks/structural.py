"""The structural shortcut (spec §9.8 step 1): a sufficient, syntactic containment test.

It only ever proves containment for one identity mode; when it does not apply, the probes
and Z3 decide. Each comparison below is a plain subset relation on the spec's semantics.
"""

from __future__ import annotations

from prover.model import Endpoint, HttpRule, Policy, QueryMatcher, Rule


def _method_covered(bound: str, cand: str) -> bool:
    b, c = bound.upper(), cand.upper()
    return b == "*" or b == c or (b == "GET" and c == "HEAD")


def _path_covered(bound: str, cand: str) -> bool:
    if bound in ("", "**") or bound == cand:
        return True
    if bound.endswith("/**") and "*" not in bound[:-3]:
        return cand.startswith(bound[:-2])
    return False


def _query_covered(bound: tuple[QueryMatcher, ...], cand: tuple[QueryMatcher, ...]) -> bool:
    cand_by_key = {m.key: m for m in cand}
    for b in bound:
        c = cand_by_key.get(b.key)
        if c is None:
            return False
        if c.value == b.value:
            continue
        if b.value is None and c.value is not None and "." not in c.value:
            continue
        return False
    return True


def _rule_covered(bound: HttpRule, cand: HttpRule) -> bool:
    return (
        _method_covered(bound.method, cand.method)
        and _path_covered(bound.path, cand.path)
        and _query_covered(bound.query, cand.query)
    )


def _endpoint_covered(bound: Endpoint, cand: Endpoint) -> bool:
    """Does ``bound`` allow every action ``cand`` allows, whatever the rest of the policy?

    Equal host patterns and equal ``allowed_ips`` give the two endpoints the same
    destination-address rule. An L4 boundary endpoint allows every layer, so it covers
    an L4 or REST candidate endpoint on those terms (our extension of the reference's
    REST-only shortcut; it keeps ordinary L4 policies out of Z3).
    """
    if bound.host != cand.host or bound.allowed_ips_raw != cand.allowed_ips_raw:
        return False
    if not set(cand.ports) <= set(bound.ports) or bound.explicit_tcp != cand.explicit_tcp:
        return False
    if bound.layer == "l4":
        return True
    if cand.layer != "rest":
        return False
    if bound.access is not None or cand.access is not None:
        return False
    if bound.deny_rules or cand.deny_rules:
        return False
    if bound.path != cand.path:
        return False
    return all(
        any(_rule_covered(b, c) for b in bound.allow_rules) for c in cand.allow_rules if c.method
    )


def _rule_contained(cand: Rule, bound: Rule, identity: bool) -> bool:
    if identity and not set(cand.binaries) <= set(bound.binaries):
        return False
    return all(any(_endpoint_covered(b, c) for b in bound.endpoints) for c in cand.endpoints)


def structurally_contained(candidate: Policy, boundary: Policy, identity: bool) -> bool:
    """True only if every candidate rule sits inside one boundary rule, syntactically."""
    if any(e.deny_rules for r in boundary.rules for e in r.endpoints):
        return False
    return all(
        any(_rule_contained(c, b, identity) for b in boundary.rules) for c in candidate.rules
    )
