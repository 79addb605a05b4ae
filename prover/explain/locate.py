"""Which candidate entries grant a violating action, found with the concrete evaluator.

A network action is granted by every (rule, endpoint, allow rule) whose allow part
matches it (``prover.concrete.granting_entries``); the fix must take the action away from
all of them. A filesystem access is granted by every entry equal to the path, or ``/``.
Process and Landlock violations are single settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prover.concrete import binary_matches, granting_entries
from prover.concrete.filesystem import path_is_covered
from prover.concrete.glob import host_matches
from prover.concrete.witness import network_action
from prover.explain.describe import endpoint_text, http_rule_text
from prover.explain.document import Loaded, filesystem_key, get_at
from prover.explain.models import GrantRef
from prover.policy.model import NetworkAction, Rule
from prover.policy.paths import Location, render_path
from prover.results import (
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
)


@dataclass(frozen=True)
class Grant:
    """A granting entry with its location in the document."""

    location: Location
    ref: GrantRef
    rule_key: str | None = None
    endpoint_index: int | None = None
    allow_rule_index: int | None = None
    fs_list: str | None = None
    fs_index: int | None = None
    binary_location: Location | None = None


def endpoint_location(rule_key: str, index: int) -> Location:
    return ("network_policies", rule_key, "endpoints", index)


def rule_by_key(doc: Loaded, key: str) -> Rule:
    return next(rule for rule in doc.policy.rules if rule.key == key)


def matched_binary(rule: Rule, action: NetworkAction) -> tuple[int, str] | None:
    """The first rule binary that matches the action's binary or ancestor (identity on)."""
    if not action.binary_identity_required:
        return None
    names = [b for b in (action.binary, action.ancestor_binary) if b is not None]
    for index, glob in enumerate(rule.binaries):
        if any(binary_matches(glob, name) for name in names):
            return index, glob
    return None


def network_grants(doc: Loaded, action: NetworkAction) -> list[Grant]:
    grants: list[Grant] = []
    for entry in granting_entries(doc.policy, action):
        rule = rule_by_key(doc, entry.rule_key)
        endpoint = rule.endpoints[entry.endpoint_index]
        base = endpoint_location(entry.rule_key, entry.endpoint_index)
        written = get_at(doc.data, base)
        if entry.allow_rule_index is not None and "rules" in written:
            location: Location = (*base, "rules", entry.allow_rule_index)
            what = f"allow rule {http_rule_text(endpoint.allow_rule(entry.allow_rule_index))}"
        elif endpoint.layer == "rest" and "access" in written:
            location = (*base, "access")
            what = f"access preset {endpoint.access}"
        elif endpoint.layer == "rest":  # read as REST without rules or preset written
            location = base
            what = "REST endpoint"
        else:
            location = (*base, "host") if "host" in written else base
            what = "L4 endpoint (any request, any protocol)"
        binary = matched_binary(rule, action)
        binary_location = (
            ("network_policies", rule.key, "binaries", binary[0], "path") if binary else None
        )
        summary = (
            f"rule '{rule.key}' endpoint {entry.endpoint_index} ({endpoint_text(endpoint)}): {what}"
        )
        if binary:
            summary += f", for binary {binary[1]}"
        grants.append(
            Grant(
                location=location,
                rule_key=entry.rule_key,
                endpoint_index=entry.endpoint_index,
                allow_rule_index=entry.allow_rule_index,
                binary_location=binary_location,
                ref=GrantRef(
                    path=render_path(location),
                    summary=summary,
                    rule_key=entry.rule_key,
                    endpoint_index=entry.endpoint_index,
                    allow_rule_index=entry.allow_rule_index,
                    binary=binary[1] if binary else None,
                    binary_path=render_path(binary_location) if binary_location else None,
                    value=get_at(doc.data, location),
                ),
            )
        )
    return grants


def filesystem_grants(doc: Loaded, cex: FilesystemCounterexample) -> list[Grant]:
    lists = ("read_write",) if cex.access == "write" else ("read_only", "read_write")
    grants: list[Grant] = []
    fs = doc.policy.filesystem
    key = filesystem_key(doc.data)
    for name in lists:
        for index, entry in enumerate(getattr(fs, name)):
            if not path_is_covered(cex.path, (entry,)):
                continue
            location: Location = (key, name, index)
            grants.append(
                Grant(
                    location=location,
                    fs_list=name,
                    fs_index=index,
                    ref=GrantRef(
                        path=render_path(location),
                        summary=f"{key}.{name}[{index}] = '{entry}'",
                        value=get_at(doc.data, location),
                    ),
                )
            )
    return grants


def setting_grant(location: Location, value: str, summary: str) -> Grant:
    return Grant(
        location=location, ref=GrantRef(path=render_path(location), summary=summary, value=value)
    )


def _written_ports(endpoint: dict[str, Any]) -> list[Any]:
    ports = endpoint.get("ports")
    return list(ports) if isinstance(ports, list) and ports else [endpoint.get("port")]


def reaching_rules(doc: Loaded, action: NetworkAction) -> list[Grant]:
    """The rules as written whose binaries include the action's and one of whose
    endpoints names its host and port, whatever the endpoint's protocol: the granting
    rules of an action through an endpoint the prover reads as opaque (its traffic is not
    modelled, so no allow rule of the model grants it)."""
    names = [b for b in (action.binary, action.ancestor_binary) if b is not None]
    rules = doc.data.get("network_policies")
    found: list[Grant] = []
    if not names or not isinstance(rules, dict):
        return found
    for key, rule in rules.items():
        if not isinstance(rule, dict):
            continue
        binaries = [b.get("path") for b in rule.get("binaries") or [] if isinstance(b, dict)]
        if not any(isinstance(p, str) and binary_matches(p, n) for p in binaries for n in names):
            continue
        for endpoint in rule.get("endpoints") or []:
            if not isinstance(endpoint, dict) or action.port not in _written_ports(endpoint):
                continue
            host = endpoint.get("host")
            if host is None or (isinstance(host, str) and host_matches(host, action.host)):
                location: Location = ("network_policies", key)
                found.append(
                    Grant(
                        location=location,
                        rule_key=key,
                        ref=GrantRef(
                            path=render_path(location),
                            summary=f"rule '{key}' (through an endpoint whose traffic the "
                            "prover does not model)",
                            rule_key=key,
                        ),
                    )
                )
                break
    return found


def locate_grants(doc: Loaded, cex: object) -> list[Grant]:
    """Every candidate entry that grants the counterexample's action (for an action
    through an opaque endpoint, the rules that reach its host and port)."""
    if isinstance(cex, NetworkCounterexample):
        action = network_action(cex)
        return network_grants(doc, action) or reaching_rules(doc, action)
    if isinstance(cex, FilesystemCounterexample):
        return filesystem_grants(doc, cex)
    if isinstance(cex, ProcessCounterexample):
        return [
            setting_grant(
                ("process", cex.field),
                cex.candidate,
                f"process.{cex.field} = '{cex.candidate}'"
                + ("" if cex.candidate == "root" else " (root)"),
            )
        ]
    if isinstance(cex, LandlockCounterexample):
        section = doc.data.get("landlock")
        written = section.get("compatibility") if isinstance(section, dict) else None
        summary = (
            f"landlock.compatibility = '{written}'"
            if written
            else "landlock.compatibility not set (best_effort by default)"
        )
        return [setting_grant(("landlock", "compatibility"), cex.candidate, summary)]
    raise TypeError(f"unknown counterexample type {type(cex).__name__}")
