"""Candidate validation (spec §2.4 step 3): the reference's ``validate_sandbox_policy``.

Applied to the merged base policy (authored data already accepted by the policy loader,
which checks types, unknown fields and the parse-level rules). This adds the semantic
checks the gateway runs before the prover: process identities, filesystem path limits,
and per endpoint: host presence, explicit-TCP host rules, effective ports, TLD and
malformed host wildcards, credential signing, the L7 field combinations, TCP-only field
restrictions, the ``path`` selector shape, ``persisted_queries``, SQL enforcement and
GraphQL operation types. Violations are joined as the gateway reports them:
``policy contains unsafe content: <v1>; <v2>``.

Not reproduced: middleware validation (a proposal never changes middlewares) and the
DNS-name parser behind the explicit-TCP host check, which is approximated by label
length and emptiness rules. Always-blocked ``allowed_ips`` and hosts are *not* rejected
here, as in the gateway: approval rejects them (reported as a warning instead).
"""

from __future__ import annotations

import ipaddress

from prover.proposal.endpoint import Data, flag, items, number, ports, rules_of, text

MAX_FILESYSTEM_PATHS = 256
MAX_PATH_LENGTH = 4096
_GRAPHQL_OPERATIONS = ("query", "mutation", "subscription")
_L7_PROTOCOLS = ("rest", "websocket", "graphql", "sql", "json-rpc", "mcp")
_SIGNING = ("sigv4", "sigv4:body", "sigv4:no_body")
_MATCHER_FIELDS = (
    "method",
    "path",
    "command",
    "operation_type",
    "operation_name",
    "fields",
    "params",
)


def _valid_identity(value: str) -> bool:
    if value == "sandbox":
        return True
    digits = value.removeprefix("+")
    return digits.isascii() and digits.isdigit() and 1 <= int(digits) <= 4_294_967_294


def _truncate(path: str) -> str:
    return path if len(path) <= 80 else path[:77] + "..."


def _process_violations(policy: Data) -> list[str]:
    process = policy.get("process")
    if not isinstance(process, dict):
        return []
    return [
        f"{field} must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got '{value}'"
        for field in ("run_as_user", "run_as_group")
        if (value := text(process, field)) and not _valid_identity(value)
    ]


def _filesystem_violations(policy: Data) -> list[str]:
    section = policy.get("filesystem_policy")
    if not isinstance(section, dict):
        return []
    read_only, read_write = items(section, "read_only"), items(section, "read_write")
    found: list[str] = []
    if len(read_only) + len(read_write) > MAX_FILESYSTEM_PATHS:
        found.append(
            f"too many filesystem paths ({len(read_only) + len(read_write)} > "
            f"{MAX_FILESYSTEM_PATHS})"
        )
    for path in read_only + read_write:
        size = len(path.encode("utf-8"))
        if size > MAX_PATH_LENGTH:
            found.append(
                f"path exceeds maximum length ({size} > {MAX_PATH_LENGTH}): {_truncate(path)}"
            )
    found.extend(
        f"read-write path is overly broad: {path}" for path in read_write if not path.rstrip("/")
    )
    return found


def _wildcard_shape_invalid(host: str) -> bool:
    if host in ("*", "**"):
        return True
    if "*" not in host:
        return False
    labels = host.split(".")
    if "**" in labels[0] and labels[0] != "**":
        return True
    return any("**" in label or ("*" in label and label != "*") for label in labels[1:])


def _tcp_host_problem(host: str) -> str | None:
    if host.strip() != host:
        return "leading or trailing whitespace is not allowed"
    if host.endswith("."):
        return "omit the trailing DNS root dot"
    labels = ["x" if label == "**" else label.replace("*", "x") for label in host.split(".")]
    if any(not label for label in labels):
        return "selector cannot represent a valid DNS name: empty label"
    if any(len(label.encode()) > 63 for label in labels) or len(".".join(labels)) > 253:
        return "selector cannot represent a valid DNS name: name too long"
    return None


def _l7_semantics(endpoint: Data) -> list[str]:
    protocol = text(endpoint, "protocol")
    lowered = protocol.lower()
    known = lowered in _L7_PROTOCOLS
    tcp = lowered == "tcp"
    mcp, json_rpc = lowered == "mcp", lowered == "json-rpc"
    access = text(endpoint, "access")
    rules, deny = items(endpoint, "rules"), items(endpoint, "deny_rules")
    allow_all = (
        isinstance(endpoint.get("mcp"), dict)
        and endpoint["mcp"].get("allow_all_known_mcp_methods") is True
    )
    deny_all = bool(rules) and all(
        not any((r.get("allow") or {}).get(f) for f in _MATCHER_FIELDS) for r in rules
    )
    errors: list[str] = []
    if protocol and not known and not tcp:
        errors.append(
            f"unknown protocol '{protocol}' (expected tcp, rest, websocket, graphql, sql, "
            "json-rpc, or mcp)"
        )
    if tcp and (access or rules or deny):
        errors.append(
            "protocol tcp does not support access, rules, or deny_rules; remove those L7 fields"
        )
    if rules and access:
        errors.append("rules and access are mutually exclusive")
    if (mcp or json_rpc) and access:
        errors.append(
            f"protocol {protocol} does not support access presets; use rules/deny_rules or set "
            "mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy"
            if mcp
            else f"protocol {protocol} does not support access presets; use explicit rules "
            'with allow.method such as "*"'
        )
    if json_rpc and not rules and not access:
        errors.append(f"protocol {protocol} requires explicit rules with allow.method")
    if known and not mcp and not json_rpc and not rules and not access:
        errors.append("protocol requires rules or access to define allowed traffic")
    if mcp and not rules and not access and not allow_all:
        errors.append("protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false")
    if deny_all and not (mcp and allow_all):
        errors.append(
            "rules would deny all traffic (no allow clause found). Use `access: full` or add "
            "allow clauses to rules."
        )
    if deny and not known:
        errors.append("deny_rules require protocol (L7 inspection must be enabled)")
    if deny and not mcp and not rules and not access:
        errors.append("deny_rules require rules or access to define the base allow set")
    return errors


def _endpoint_l7_errors(endpoint: Data) -> list[str]:
    errors = _l7_semantics(endpoint)
    protocol = text(endpoint, "protocol")
    if protocol.lower() == "tcp":
        present = [
            name
            for name, here in (
                ("enforcement", bool(text(endpoint, "enforcement"))),
                ("path", bool(text(endpoint, "path"))),
                ("allow_encoded_slash", flag(endpoint, "allow_encoded_slash")),
                ("websocket_credential_rewrite", flag(endpoint, "websocket_credential_rewrite")),
                (
                    "request_body_credential_rewrite",
                    flag(endpoint, "request_body_credential_rewrite"),
                ),
                ("persisted_queries", bool(text(endpoint, "persisted_queries"))),
                ("graphql_persisted_queries", bool(endpoint.get("graphql_persisted_queries"))),
                ("graphql_max_body_bytes", number(endpoint, "graphql_max_body_bytes") > 0),
                ("json_rpc_max_body_bytes", bool(endpoint.get("json_rpc"))),
                ("mcp", "mcp" in endpoint),
            )
            if here
        ]
        if present:
            errors.append(
                f"protocol tcp does not support L7-only fields: {', '.join(present)}; "
                "remove those fields"
            )
    path = text(endpoint, "path")
    if path and not path.startswith("/") and path != "**":
        errors.append("path must start with '/' or be '**'")
    persisted = text(endpoint, "persisted_queries")
    if persisted and persisted not in ("deny", "allow_registered"):
        errors.append(f"persisted_queries must be 'deny' or 'allow_registered', got '{persisted}'")
    if protocol == "sql" and text(endpoint, "enforcement") == "enforce":
        errors.append("SQL enforcement requires full SQL parsing; use enforcement: audit")
    if protocol == "graphql":
        for index, rule in enumerate(items(endpoint, "rules")):
            if text(rule.get("allow") or {}, "operation_type") not in _GRAPHQL_OPERATIONS:
                errors.append(
                    f"rules[{index}].allow.operation_type must be query, mutation, or subscription"
                )
        for index, rule in enumerate(items(endpoint, "deny_rules")):
            if text(rule, "operation_type") not in _GRAPHQL_OPERATIONS:
                errors.append(
                    f"deny_rules[{index}].operation_type must be query, mutation, or subscription"
                )
        for key, query in (endpoint.get("graphql_persisted_queries") or {}).items():
            if text(query, "operation_type") not in _GRAPHQL_OPERATIONS:
                errors.append(
                    f"graphql_persisted_queries[{key}].operation_type must be query, mutation, "
                    "or subscription"
                )
    return errors


def _endpoint_violations(name: str, index: int, endpoint: Data) -> list[str]:
    prefix = f"network policy '{name}'"
    host = text(endpoint, "host")
    tcp = text(endpoint, "protocol").lower() == "tcp"
    found: list[str] = []
    if not host.strip() and tcp:
        found.append(
            f"{prefix}: protocol tcp requires a DNS hostname; hostless allowed_ips endpoints are "
            "supported only by the forward proxy"
        )
    elif not host.strip() and not items(endpoint, "allowed_ips"):
        found.append(
            f"{prefix}: endpoint host must not be empty unless allowed_ips constrains a "
            "non-TCP proxy endpoint"
        )
    elif tcp:
        try:
            ipaddress.ip_address(host)
            found.append(
                f"{prefix}: protocol tcp endpoint '{host}' must use a DNS hostname, not an IP "
                "literal; direct IP connections bypass policy DNS and are blocked"
            )
        except ValueError:
            problem = _tcp_host_problem(host)
            if problem:
                found.append(
                    f"{prefix}: protocol tcp endpoint has invalid DNS host selector '{host}': "
                    + problem
                )
    effective = ports(endpoint)
    if not effective:
        found.append(f"{prefix}: endpoint '{host}' must declare at least one port")
    found.extend(
        f"{prefix}: endpoint '{host}' has invalid port {port}; expected 1..=65535"
        for port in effective
        if not 1 <= port <= 65535
    )
    if host.startswith(("*.", "**.")) and len(host.split(".")) <= 2:
        found.append(
            f"{prefix}: TLD wildcard '{host}' is not allowed; use subdomain wildcards like "
            "'*.example.com' instead"
        )
    if _wildcard_shape_invalid(host):
        found.append(
            f"{prefix}: invalid host wildcard '{host}'; middle DNS label wildcards must be the "
            "entire label '*' and recursive '**' is only allowed as the entire first label"
        )
    signing = text(endpoint, "credential_signing")
    if signing and signing not in _SIGNING:
        found.append(
            f"{prefix}: endpoint '{host}' has unrecognized credential_signing value '{signing}' "
            "(expected sigv4, sigv4:body, or sigv4:no_body)"
        )
    if signing and not text(endpoint, "signing_service"):
        found.append(
            f"{prefix}: endpoint '{host}' has credential_signing set but signing_service is empty"
        )
    if signing and flag(endpoint, "request_body_credential_rewrite"):
        found.append(
            f"{prefix}: endpoint '{host}' has both credential_signing and "
            "request_body_credential_rewrite set; these options are mutually exclusive"
        )
    found.extend(
        f"{prefix}: endpoint {index} has invalid L7 configuration: {reason}"
        for reason in _endpoint_l7_errors(endpoint)
    )
    return found


def policy_violations(policy: Data) -> list[str]:
    """Every violation, in the reference's order (rules by key)."""
    found = _process_violations(policy) + _filesystem_violations(policy)
    for key, rule in rules_of(policy):
        name = text(rule, "name") or key
        for index, endpoint in enumerate(items(rule, "endpoints")):
            found.extend(_endpoint_violations(name, index, endpoint))
    return found
