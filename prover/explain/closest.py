"""The boundary entries that come closest to allowing a violating action, and the exact
dimensions on which each one fails, each dimension decided by the concrete evaluator.

For a network action every boundary (rule, endpoint) is tested on every dimension on its
own: binary (or the identity mode, for a rule without binaries), host, port, layer, the
endpoint's path selector, the method, path and query of its nearest allow rule, the
destination address and, policy-wide, the boundary's deny rules. Entries are ranked by
the number of failing dimensions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prover.concrete import (
    allow_query_matches,
    binary_matches,
    denying_entries,
    endpoint_ip_ok,
    host_matches,
    method_matches,
    path_matches,
)
from prover.concrete.query import action_query
from prover.concrete.witness import network_action
from prover.explain.describe import endpoint_text, http_rule_text, ports_text
from prover.explain.locate import endpoint_location
from prover.explain.models import ClosestRule, Dimension, Mismatch
from prover.policy.model import Endpoint, HttpRule, NetworkAction, Policy, Rule
from prover.policy.paths import render_path
from prover.results import (
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
)

#: How many boundary entries to report per violation.
MAX_CLOSEST = 3
#: How far apart a failing dimension puts a boundary entry (ties of equal count).
_WEIGHT = {"host": 4, "destination_ip": 3, "port": 3, "layer": 2, "identity_mode": 2}


@dataclass(frozen=True)
class Candidate:
    """One boundary endpoint with its failing dimensions (internal form)."""

    rule: Rule
    endpoint: Endpoint
    mismatches: tuple[Mismatch, ...]
    nearest_rule: HttpRule | None = None
    failing: frozenset[str] = field(default_factory=frozenset)


def _m(dimension: Dimension, boundary: str, action: str, detail: str) -> Mismatch:
    return Mismatch(dimension=dimension, boundary=boundary, action=action, detail=detail)


def _binary_mismatch(rule: Rule, action: NetworkAction) -> Mismatch | None:
    if not action.binary_identity_required:
        return None
    names = list(dict.fromkeys(b for b in (action.binary, action.ancestor_binary) if b))
    if not rule.binaries:
        return _m(
            "identity_mode",
            "no binaries",
            "binary identity enforced",
            "the rule lists no binaries, so it grants nothing when binary identity is enforced",
        )
    if any(binary_matches(glob, name) for glob in rule.binaries for name in names):
        return None
    return _m(
        "binary",
        ", ".join(rule.binaries),
        " / ".join(names),
        f"none of the rule's binaries ({', '.join(rule.binaries)}) matches {' or '.join(names)}",
    )


def rule_mismatches(rule: HttpRule, action: NetworkAction) -> list[Mismatch]:
    found: list[Mismatch] = []
    method = action.method or ""
    path = action.path or ""
    if not method_matches(rule.method, method):
        found.append(
            _m("method", rule.method, method, f"the rule allows method {rule.method}, not {method}")
        )
    if not path_matches(rule.path, path):
        found.append(
            _m("path", rule.path, path, f"the rule's path {rule.path} does not match {path}")
        )
    if not allow_query_matches(rule.query, action_query(action)):
        wanted = "&".join(f"{q.key}={'*' if q.value is None else q.value}" for q in rule.query)
        got = "&".join(f"{k}={v}" for k, vs in action.query for v in vs) or "(none)"
        found.append(
            _m("query", wanted, got, f"the rule requires query {wanted}; the request has {got}")
        )
    return found


def _rest_mismatches(
    endpoint: Endpoint, action: NetworkAction
) -> tuple[list[Mismatch], HttpRule | None]:
    found: list[Mismatch] = []
    path = action.path or ""
    if not path_matches(endpoint.path, path):
        found.append(
            _m(
                "path",
                endpoint.path,
                path,
                f"the endpoint's path selector {endpoint.path} does not match {path}",
            )
        )
    best: tuple[list[Mismatch], HttpRule | None] = ([], None)
    for rule in endpoint.allow_rules:
        misses = rule_mismatches(rule, action)
        if best[1] is None or len(misses) < len(best[0]):
            best = (misses, rule)
        if not misses:
            break
    if endpoint.access is not None and best[0]:
        methods = ", ".join(r.method for r in endpoint.allow_rules)
        best = (
            [
                _m(
                    "method",
                    f"access {endpoint.access} ({methods})",
                    action.method or "",
                    f"access {endpoint.access} allows {methods}, not {action.method}",
                )
            ],
            best[1],
        )
    return found + best[0], best[1]


def _endpoint_candidate(
    rule: Rule, endpoint: Endpoint, action: NetworkAction, deny: list[Mismatch]
) -> Candidate:
    found: list[Mismatch] = []
    binary = _binary_mismatch(rule, action)
    if binary:
        found.append(binary)
    if not host_matches(endpoint.host, action.host):
        found.append(
            _m(
                "host",
                endpoint.host,
                action.host,
                f"host pattern {endpoint.host} does not match {action.host}",
            )
        )
    if action.port not in endpoint.ports:
        found.append(
            _m(
                "port",
                ports_text(endpoint.ports),
                str(action.port),
                f"port {action.port} is not among {ports_text(endpoint.ports)}",
            )
        )
    nearest: HttpRule | None = None
    if endpoint.layer == "rest":
        if action.protocol == "l4":
            found.append(
                _m(
                    "layer",
                    "rest",
                    "l4",
                    "the endpoint allows only inspected REST requests, not raw L4 connections",
                )
            )
        else:
            misses, nearest = _rest_mismatches(endpoint, action)
            found.extend(misses)
    if not endpoint_ip_ok(endpoint, action):
        allowed = ", ".join(endpoint.allowed_ips_raw) or (
            "public addresses only (wildcard host)"
            if endpoint.host_is_wildcard
            else "any address except always-blocked ones and control ports"
        )
        found.append(
            _m(
                "destination_ip",
                allowed,
                str(action.destination_ip),
                f"destination address {action.destination_ip} on port {action.port} is "
                f"outside what the endpoint accepts ({allowed})",
            )
        )
    found.extend(deny)
    return Candidate(
        rule=rule,
        endpoint=endpoint,
        mismatches=tuple(found),
        nearest_rule=nearest,
        failing=frozenset(m.dimension for m in found),
    )


def _deny_mismatches(boundary: Policy, action: NetworkAction) -> list[Mismatch]:
    found = []
    for entry in denying_entries(boundary, action):
        rule = next(r for r in boundary.rules if r.key == entry.rule_key)
        deny = rule.endpoints[entry.endpoint_index].deny_rule(entry.deny_rule_index)
        location = (
            *endpoint_location(entry.rule_key, entry.endpoint_index),
            "deny_rules",
            entry.deny_rule_index,
        )
        found.append(
            _m(
                "deny_rule",
                f"{render_path(location)}: {http_rule_text(deny)}",
                f"{action.method} {action.path}",
                f"the boundary's deny rule {render_path(location)} ({http_rule_text(deny)}) "
                "blocks this request policy-wide",
            )
        )
    return found


def _common_labels(first: str, second: str) -> int:
    """How many trailing DNS labels two hosts (or host patterns) share."""
    count = 0
    for a, b in zip(reversed(first.split(".")), reversed(second.lower().split(".")), strict=False):
        if a != b:
            break
        count += 1
    return count


def network_candidates(boundary: Policy, action: NetworkAction) -> list[Candidate]:
    """Every boundary endpoint with its failing dimensions, closest first."""
    deny = _deny_mismatches(boundary, action)
    found = [
        _endpoint_candidate(rule, endpoint, action, deny)
        for rule in boundary.rules
        for endpoint in rule.endpoints
    ]
    order = {id(c): i for i, c in enumerate(found)}
    host = action.host.lower()

    def distance(c: Candidate) -> tuple[int, int, int, int]:
        # Fewest failing dimensions first; among equals, one that reaches the same
        # destination (host, port, layer) before one that differs only in who or what,
        # then the host sharing the most trailing labels with the action's
        # (update.code.visualstudio.com before api.nvidia.com for a.visualstudio.com).
        weight = sum(_WEIGHT.get(m.dimension, 1) for m in c.mismatches)
        return (len(c.mismatches), weight, -_common_labels(host, c.endpoint.host), order[id(c)])

    return sorted(found, key=distance)


def _closest_from(candidate: Candidate) -> ClosestRule:
    location = endpoint_location(candidate.rule.key, candidate.endpoint.index)
    summary = f"rule '{candidate.rule.key}' endpoint {candidate.endpoint.index} " + endpoint_text(
        candidate.endpoint
    )
    if candidate.nearest_rule is not None and candidate.endpoint.access is None:
        summary += f", nearest allow rule {http_rule_text(candidate.nearest_rule)}"
    return ClosestRule(
        path=render_path(location),
        summary=summary,
        rule_key=candidate.rule.key,
        endpoint_index=candidate.endpoint.index,
        fails_on=list(candidate.mismatches),
    )


def _filesystem_closest(
    boundary: Policy, cex: FilesystemCounterexample, section: str
) -> list[ClosestRule]:
    fs = boundary.filesystem
    found: list[ClosestRule] = []
    for name in ("read_only", "read_write"):
        for index, entry in enumerate(getattr(fs, name)):
            if entry != cex.path and entry != "/":
                continue
            location = (section, name, index)
            found.append(
                ClosestRule(
                    path=render_path(location),
                    summary=f"{section}.{name}[{index}] = '{entry}'",
                    fails_on=[
                        _m(
                            "filesystem_access",
                            "read" if name == "read_only" else "read and write",
                            cex.access,
                            f"the boundary lists '{entry}' as {name}, which does not allow "
                            f"{cex.access} access",
                        )
                    ],
                )
            )
    return found


def closest_boundary_rules(
    boundary: Policy, cex: object, filesystem_section: str = "filesystem_policy"
) -> list[ClosestRule]:
    """The boundary entries nearest to allowing the counterexample, closest first
    (``filesystem_section``: the name the boundary gives its filesystem section)."""
    if isinstance(cex, NetworkCounterexample):
        candidates = network_candidates(boundary, network_action(cex))
        return [_closest_from(c) for c in candidates[:MAX_CLOSEST]]
    if isinstance(cex, FilesystemCounterexample):
        return _filesystem_closest(boundary, cex, filesystem_section)
    if isinstance(cex, ProcessCounterexample):
        return [
            ClosestRule(
                path=f"process.{cex.field}",
                summary=f"process.{cex.field} = '{cex.boundary}'",
                fails_on=[
                    _m(
                        "process_field",
                        cex.boundary,
                        cex.candidate,
                        f"the boundary runs the sandbox as '{cex.boundary}'; root is a "
                        "different, more powerful identity",
                    )
                ],
            )
        ]
    if isinstance(cex, LandlockCounterexample):
        return [
            ClosestRule(
                path="landlock.compatibility",
                summary="landlock.compatibility = 'hard_requirement'",
                fails_on=[
                    _m(
                        "landlock",
                        cex.boundary,
                        cex.candidate,
                        "the boundary refuses to start a sandbox without Landlock; best_effort "
                        "starts it anyway",
                    )
                ],
            )
        ]
    raise TypeError(f"unknown counterexample type {type(cex).__name__}")
