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
"""

from __future__ import annotations

from typing import Any

from prover.concrete import method_matches
from prover.explain.models import Violation
from prover.model import Endpoint, HttpRule, Policy

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
        g.value for v in violations for g in v.granted_by if g.path.startswith("filesystem_policy.")
    }
    section = result.get("filesystem_policy")
    if paths and isinstance(section, dict):
        result["filesystem_policy"] = {
            key: [p for p in value if p not in paths] if isinstance(value, list) else value
            for key, value in section.items()
        }
    return result
