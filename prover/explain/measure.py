"""Grant units: a simple size of a policy, to compare a fix with deleting outright.

A grant unit is one thing the policy lets the sandbox do, counted coarsely:

* network: for every rule and endpoint, ``binaries × ports × allow entries``, where an
  allow entry is the L4 endpoint itself (1), an ``access`` preset (1) or one REST allow
  rule (1); an entry that the endpoint's own deny rules block entirely (a deny with the
  same or any method, any path and no query) counts 0; a rule without binaries counts as
  one binary (with binary identity off it applies to every process). A narrowing can
  split one entry into several narrower ones (a wildcard host into the boundary's hosts,
  ``access: full`` into explicit rules), so a fix may count more units than before;
* filesystem: 1 per ``read_only`` entry, 2 per ``read_write`` entry (read and write);
* process identity and Landlock are settings, not grants: 0.

It ignores hosts' and paths' breadth on purpose: it answers "how much of what the author
wrote does the fix keep", not "how much access is that".

:func:`inside_units` counts the units the boundary plainly grants as well. It ranks fix
options: greedy fixing by grant units alone takes dropping a legitimate binary, or
deleting a legitimate allow rule, for as good as narrowing the one entry at fault
(each loses a unit), and the later rounds then delete what the first could have kept.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from prover.checks.glob_containment import binary_within
from prover.checks.structural import endpoint_grant_covered
from prover.concrete import method_matches
from prover.concrete.filesystem import path_is_covered, readable_paths
from prover.explain.document import filesystem_key, tick
from prover.explain.models import Violation
from prover.extended.hosts import ANY_HOST, hosts_intersect
from prover.policy.model import Endpoint, HttpRule, Policy, Rule

_ANY_PATH = ("", "**", "/**")


def _fully_denied(rule: HttpRule, denies: tuple[HttpRule, ...]) -> bool:
    for deny in denies:
        if deny.query or deny.path not in _ANY_PATH:
            continue
        if deny.method == "*" or (
            rule.method != "*" and method_matches(deny.method, rule.method.upper())
        ):
            return True
    return False


def endpoint_units(endpoint: Endpoint) -> int:
    if endpoint.layer == "l4":
        entries = 1
    elif endpoint.access is not None:
        denied = all(_fully_denied(rule, endpoint.deny_rules) for rule in endpoint.allow_rules)
        entries = 0 if denied else 1
    else:
        entries = sum(
            1 for rule in endpoint.allow_rules if not _fully_denied(rule, endpoint.deny_rules)
        )
    return len(endpoint.ports) * entries


def grant_units(policy: Policy) -> int:
    network = sum(
        max(1, len(rule.binaries)) * sum(endpoint_units(e) for e in rule.endpoints)
        for rule in policy.rules
    )
    fs = policy.filesystem
    return network + len(fs.read_only) + 2 * len(fs.read_write)


#: Whether a unit (binary or ``None``, one-port one-entry endpoint) is inside the boundary.
InsideCache = dict[tuple[str | None, Endpoint], bool]


def _entries(endpoint: Endpoint) -> list[Endpoint]:
    """One endpoint per port and allow entry, as :func:`endpoint_units` counts them."""
    if endpoint.layer == "l4" or endpoint.access is not None:
        if endpoint.layer != "l4" and not endpoint_units(endpoint):
            return []
        shapes = [endpoint]
    else:
        shapes = [
            replace(endpoint, allow_rules=(rule,))
            for rule in endpoint.allow_rules
            if not _fully_denied(rule, endpoint.deny_rules)
        ]
    return [replace(shape, index=0, ports=(port,)) for shape in shapes for port in endpoint.ports]


def _pattern(host: str) -> str:
    return host.lower() or ANY_HOST


def _unit_inside(binary: str | None, unit: Endpoint, boundary: Policy) -> bool:
    tick()  # the explanation's deadline: a unit against every boundary endpoint
    for rule in boundary.rules:
        if binary is None:
            if rule.binaries:
                continue
        elif not any(binary_within(binary, theirs) for theirs in rule.binaries):
            continue
        if any(
            endpoint_grant_covered(theirs, unit)
            for theirs in rule.endpoints
            # a host that cannot even meet the unit's cannot contain it (cheap, cached)
            if theirs.grants and hosts_intersect(_pattern(unit.host), _pattern(theirs.host))
        ):
            return True
    return False


def _rule_inside(rule: Rule, boundary: Policy, cache: InsideCache) -> int:
    count = 0
    binaries: tuple[str | None, ...] = rule.binaries or (None,)
    for endpoint in rule.endpoints:
        for unit in _entries(endpoint):
            for binary in binaries:
                key = (binary, unit)
                if key not in cache:
                    cache[key] = _unit_inside(binary, unit, boundary)
                count += cache[key]
    return count


def inside_units(policy: Policy, boundary: Policy, cache: InsideCache) -> int:
    """The grant units of ``policy`` that one boundary entry plainly grants: a network
    unit (binary, endpoint, port, allow entry) inside one boundary endpoint of a rule
    whose binaries contain the binary (glob within glob, no Z3), a path the boundary has
    with at least that access. Deny rules, addresses and endpoint overlaps are ignored:
    a measure to rank fix options by, never a verdict (every fix is proved)."""
    network = sum(_rule_inside(rule, boundary, cache) for rule in policy.rules)
    readable = frozenset(readable_paths(boundary))  # sets: paths x entries was quadratic
    writable = frozenset(boundary.filesystem.read_write)
    fs = policy.filesystem
    files = sum(path_is_covered(p, readable) for p in fs.read_only) + sum(
        path_is_covered(p, readable) + path_is_covered(p, writable) for p in fs.read_write
    )
    return network + files


def delete_outright(data: dict[str, Any], violations: list[Violation]) -> dict[str, Any]:
    """``data`` (the original candidate) with every network rule and filesystem entry that
    granted a violation deleted outright: what deleting instead of fixing would leave."""
    result: dict[str, Any] = {key: value for key, value in data.items()}
    rule_keys = {g.rule_key for v in violations for g in v.granted_by if g.rule_key is not None}
    if rule_keys and isinstance(result.get("network_policies"), dict):
        result["network_policies"] = {
            key: rule for key, rule in result["network_policies"].items() if key not in rule_keys
        }
    paths = {
        g.value
        for v in violations
        for g in v.granted_by
        if g.path.startswith(("filesystem_policy.", "filesystem."))
    }
    key = filesystem_key(result)
    section = result.get(key)
    if paths and isinstance(section, dict):
        result[key] = {
            key: [p for p in value if p not in paths] if isinstance(value, list) else value
            for key, value in section.items()
        }
    return result
