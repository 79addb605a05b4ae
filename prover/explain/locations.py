"""Finding the fields an ``unsupported`` reason points at, in the policies as written.

Reasons name a rule key at most; these helpers walk the plain policy data to name the
exact field paths (``network_policies.g.endpoints[0].protocol``), so a rewrite hint can
say where to change what. They only look; nothing here decides a result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prover.concrete import binary_matches
from prover.explain.document import filesystem_key
from prover.policy.paths import Location, render_path
from prover.policy.shape import host_pattern_supported, literal_problem

Data = dict[str, Any]

OUTSIDE_MODEL_FIELDS = (
    "allow_encoded_slash",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "allow_uninspected_credentials",
    "persisted_queries",
    "graphql_persisted_queries",
    "graphql_max_body_bytes",
    "credential_signing",
    "signing_service",
    "signing_region",
    "credential_binding",
    "json_rpc",
    "mcp",
)
REST_ONLY_FIELDS = ("enforcement", "access", "path", "rules", "deny_rules")
UNMODELLED_MATCHER_FIELDS = (
    "command",
    "operation_type",
    "operation_name",
    "fields",
    "tool",
    "params",
)
GLOB_META = frozenset("?[]{}\\")


def rules(data: Data, key: str | None = None) -> Iterator[tuple[str, Data]]:
    policies = data.get("network_policies")
    if not isinstance(policies, dict):
        return
    for rule_key, rule in policies.items():
        if (key is None or rule_key == key) and isinstance(rule, dict):
            yield rule_key, rule


def endpoints(data: Data, key: str | None = None) -> Iterator[tuple[Location, Data]]:
    for rule_key, rule in rules(data, key):
        for index, endpoint in enumerate(rule.get("endpoints") or []):
            if isinstance(endpoint, dict):
                yield ("network_policies", rule_key, "endpoints", index), endpoint


def _protocol(endpoint: Data) -> str:
    value = endpoint.get("protocol")
    return value.lower() if isinstance(value, str) else ""


def _ports(endpoint: Data) -> set[int]:
    ports = endpoint.get("ports") or []
    if ports:
        return {p for p in ports if isinstance(p, int)}
    port = endpoint.get("port")
    return {port} if isinstance(port, int) and port else set()


def _host(endpoint: Data) -> str:
    host = endpoint.get("host")
    return host.lower() if isinstance(host, str) else ""


def strings(node: Any, location: Location) -> Iterator[tuple[Location, str]]:
    if isinstance(node, str):
        yield location, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from strings(value, (*location, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from strings(value, (*location, index))


def _matcher_problem(matcher: Any) -> bool:
    if not isinstance(matcher, dict) or not isinstance(matcher.get("method"), str):
        return True
    if not matcher["method"] or any(f in matcher for f in UNMODELLED_MATCHER_FIELDS):
        return True
    path = matcher.get("path", "")
    if not isinstance(path, str) or (path and not path.startswith("/")) or set(path) & GLOB_META:
        return True
    for value in (matcher.get("query") or {}).values():
        if not isinstance(value, str) or set(value) & GLOB_META:
            return True
        if ("*" in value and value != "*") or literal_problem(value):
            return True
    return False


def _overlap(first: Data, second: Data) -> bool:
    if not _ports(first) & _ports(second):
        return False
    a, b = _host(first), _host(second)
    return a == b or "*" in a or "*" in b


def _rule_locations(data: Data, key: str | None, detail: str) -> list[Location]:
    found: list[Location] = []
    for location, endpoint in endpoints(data, key):
        protocol = _protocol(endpoint)
        if "uses protocol" in detail and protocol not in ("", "tcp", "rest"):
            found.append((*location, "protocol"))
        elif "without enforced inspection" in detail and protocol == "rest":
            if endpoint.get("enforcement") != "enforce":
                found.append((*location, "enforcement"))
        elif "no unambiguous host and port" in detail:
            if (
                not _host(endpoint)
                or not _ports(endpoint)
                or (endpoint.get("port") and endpoint.get("ports"))
            ):
                found.append(location)
        elif "endpoint host" in detail or "IP-literal" in detail:
            host = endpoint.get("host")
            if isinstance(host, str) and (
                not host_pattern_supported(host) or literal_problem(host)
            ):
                found.append((*location, "host"))
        elif "allowed_ips entry" in detail:
            for index, entry in enumerate(endpoint.get("allowed_ips") or []):
                if f"'{entry}'" in detail:
                    found.append((*location, "allowed_ips", index))
        elif "outside the initial model" in detail:
            found.extend((*location, f) for f in OUTSIDE_MODEL_FIELDS if f in endpoint)
            tls = endpoint.get("tls")
            if tls not in (None, "", "terminate", "passthrough"):
                found.append((*location, "tls"))
        elif "mixes REST controls" in detail and protocol in ("", "tcp"):
            found.extend((*location, f) for f in REST_ONLY_FIELDS if f in endpoint)
        elif "REST allow shape" in detail and protocol == "rest":
            found.append(location)
        elif "unsupported REST" in detail and protocol == "rest":
            kind = "deny_rules" if "deny rule" in detail else "rules"
            for index, item in enumerate(endpoint.get(kind) or []):
                matcher = item.get("allow") if kind == "rules" and isinstance(item, dict) else item
                if _matcher_problem(matcher):
                    found.append((*location, kind, index))
        elif "non-ASCII" in detail or "NUL" in detail:
            found.extend(loc for loc, text in strings(endpoint, location) if literal_problem(text))
    if ("non-ASCII" in detail or "NUL" in detail) and "binary" in detail:
        for rule_key, rule in rules(data, key):
            base = ("network_policies", rule_key, "binaries")
            found.extend(
                loc for loc, text in strings(rule.get("binaries"), base) if literal_problem(text)
            )
    if "unsupported binary" in detail:
        for rule_key, rule in rules(data, key):
            for index, _ in enumerate(rule.get("binaries") or []):
                found.append(("network_policies", rule_key, "binaries", index, "path"))
    return found


def overlapping_endpoints(data: Data) -> list[Location]:
    pairs = list(endpoints(data))
    found: list[Location] = []
    for i, (first_location, first) in enumerate(pairs):
        for second_location, second in pairs[i + 1 :]:
            if _overlap(first, second):
                for location in (first_location, second_location):
                    if location not in found:
                        found.append(location)
    return found


def shape_locations(data: Data, detail: str, key: str | None) -> list[str]:
    """Field paths for a shape reason (``detail`` is the text after the side label)."""
    if detail.startswith("uses unsupported process identity"):
        return [
            f"process.{f}"
            for f in ("run_as_user", "run_as_group")
            if f"'{_get(data, f)}'" in detail
        ]
    if detail.startswith("uses network middleware"):
        return ["network_middlewares"]
    if detail.startswith("uses Cedar"):
        return ["cedar_policy"]
    if key is None and "overlapping" in detail:
        return [render_path(loc) for loc in overlapping_endpoints(data)]
    return [render_path(loc) for loc in _rule_locations(data, key, detail)]


def _get(data: Data, field: str) -> Any:
    process = data.get("process")
    return process.get(field) if isinstance(process, dict) else None


def filesystem_locations(data: Data, path: str) -> list[str]:
    key = filesystem_key(data)
    section = data.get(key)
    if not isinstance(section, dict):
        return []
    found = []
    for name in ("read_only", "read_write"):
        for index, entry in enumerate(section.get(name) or []):
            if isinstance(entry, str) and entry.rstrip("/") == path:
                found.append(f"{key}.{name}[{index}]")
    return found


def related_paths(data: Data, path: str) -> list[str]:
    """Entries of ``data`` that are ancestors or descendants of ``path``."""
    section = data.get(filesystem_key(data))
    if not isinstance(section, dict):
        return []
    found = []
    for name in ("read_only", "read_write"):
        for entry in section.get(name) or []:
            if not isinstance(entry, str) or entry == path:
                continue
            if path.startswith(entry.rstrip("/") + "/") or entry.startswith(path + "/"):
                found.append(entry)
    return found


def exact_binaries_under_globs(candidate: Data, boundary: Data) -> list[tuple[str, str, str]]:
    """(candidate binary path, candidate field, boundary glob) for exact candidate
    binaries that some boundary glob matches."""
    globs = [
        binary.get("path")
        for _, rule in rules(boundary)
        for binary in rule.get("binaries") or []
        if isinstance(binary, dict) and "*" in str(binary.get("path", ""))
    ]
    found = []
    for rule_key, rule in rules(candidate):
        for index, binary in enumerate(rule.get("binaries") or []):
            path = binary.get("path") if isinstance(binary, dict) else None
            if not isinstance(path, str) or "*" in path:
                continue
            for glob in globs:
                if isinstance(glob, str) and glob != "/**" and binary_matches(glob, path):
                    found.append(
                        (path, f"network_policies.{rule_key}.binaries[{index}].path", glob)
                    )
                    break
    return found


def glob_deny_binaries(candidate: Data, boundary: Data) -> list[str]:
    """Field paths of candidate glob binaries in rules with deny rules that match an exact
    binary of a boundary rule with deny rules."""
    exact = [
        binary.get("path")
        for _, rule in rules(boundary)
        if any(ep.get("deny_rules") for ep in rule.get("endpoints") or [] if isinstance(ep, dict))
        for binary in rule.get("binaries") or []
        if isinstance(binary, dict) and "*" not in str(binary.get("path", ""))
    ]
    found = []
    for rule_key, rule in rules(candidate):
        endpoints_ = [ep for ep in rule.get("endpoints") or [] if isinstance(ep, dict)]
        if not any(ep.get("deny_rules") for ep in endpoints_):
            continue
        for index, binary in enumerate(rule.get("binaries") or []):
            glob = binary.get("path") if isinstance(binary, dict) else None
            if not isinstance(glob, str) or "*" not in glob or glob == "/**":
                continue
            if any(isinstance(p, str) and binary_matches(glob, p) for p in exact):
                found.append(render_path(("network_policies", rule_key, "binaries", index, "path")))
    return found
