"""Intersections of REST matchers, hosts and paths, for narrowing a candidate entry into a
boundary entry.

Each function returns a matcher that allows only what *both* inputs allow, or ``None``
when it cannot name one exactly (the caller then does not narrow on that dimension).
Containment tests here are sufficient, never guesses: when in doubt they answer "no",
and every fix built from them is re-proved by the boundary check anyway.
"""

from __future__ import annotations

from typing import Any

from prover.concrete import host_matches, path_matches
from prover.concrete.query import wildcard_value_matches
from prover.policy.model import HttpRule, QueryMatcher

_ANY_PATH = ("", "**", "/**")


def host_contains(outer: str, inner: str) -> bool:
    """Every host ``inner`` matches is matched by ``outer`` (lower-cased patterns)."""
    if outer == inner:
        return True
    if "*" not in inner:
        return host_matches(outer, inner)
    if outer.startswith("**.") and inner.endswith(outer[2:]):
        return True
    return False


def path_contains(outer: str, inner: str) -> bool:
    """Every path ``inner`` matches is matched by ``outer`` (``""`` is any path)."""
    if outer in _ANY_PATH or outer == inner:
        return True
    if inner in _ANY_PATH:
        return False
    if "*" not in inner:
        return path_matches(outer, inner)
    if outer.endswith("/**"):
        prefix = outer[:-3]
        return "*" not in prefix and inner.startswith(prefix + "/")
    return False


def intersect_path(candidate: str, boundary: str) -> str | None:
    if path_contains(candidate, boundary):
        return boundary
    if path_contains(boundary, candidate):
        return candidate
    return None


def intersect_method(candidate: str, boundary: str) -> str | None:
    c, b = candidate.upper(), boundary.upper()
    if c == "*":
        return boundary
    if b == "*" or c == b:
        return candidate
    if {c, b} == {"GET", "HEAD"}:
        return "HEAD"
    return None


def _value(first: str | None, second: str | None) -> tuple[bool, str | None]:
    if first is None:
        if second is None or wildcard_value_matches(second):
            return True, second
        return False, None
    if second is None:
        return wildcard_value_matches(first), first
    return first == second, first


def intersect_query(
    candidate: tuple[QueryMatcher, ...], boundary: tuple[QueryMatcher, ...]
) -> tuple[QueryMatcher, ...] | None:
    """Allow matchers are conjunctions per key, so the intersection is their union, with
    the keys both constrain intersected value by value."""
    merged: dict[str, str | None] = {m.key: m.value for m in candidate}
    for matcher in boundary:
        if matcher.key not in merged:
            merged[matcher.key] = matcher.value
            continue
        ok, value = _value(merged[matcher.key], matcher.value)
        if not ok:
            return None
        merged[matcher.key] = value
    return tuple(QueryMatcher(key, value) for key, value in merged.items())


def intersect_rule(candidate: HttpRule, boundary: HttpRule) -> HttpRule | None:
    method = intersect_method(candidate.method, boundary.method)
    path = intersect_path(candidate.path, boundary.path)
    query = intersect_query(candidate.query, boundary.query)
    if method is None or path is None or query is None:
        return None
    return HttpRule(method=method, path=path, query=query)


def intersect_rules(
    candidate: tuple[HttpRule, ...], boundary: tuple[HttpRule, ...]
) -> list[HttpRule]:
    """Every non-empty pairwise intersection, without duplicates, in candidate order."""
    found: list[HttpRule] = []
    for first in candidate:
        for second in boundary:
            rule = intersect_rule(first, second)
            if rule is not None and rule not in found:
                found.append(rule)
    return found


def authored_matcher(rule: HttpRule) -> dict[str, Any]:
    """The authored form of a matcher (inside ``allow:`` or as a deny rule)."""
    matcher: dict[str, Any] = {"method": rule.method}
    # Always a path: without one OpenShell's engine allows nothing by an allow rule and
    # never fires a deny rule (``opa.rs`` ``proto_to_opa_data_json``, ``sandbox-policy.rego``
    # ``path_matches``); ``/**`` is every request path in both readings.
    matcher["path"] = "/**" if rule.path in ("", "**") else rule.path
    if rule.query:
        matcher["query"] = {m.key: "*" if m.value is None else m.value for m in rule.query}
    return matcher


def authored_allow(rule: HttpRule) -> dict[str, Any]:
    return {"allow": authored_matcher(rule)}
