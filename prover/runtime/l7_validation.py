"""The L7 checks of one endpoint, as the runtime's validator words them.

``openshell-policy/src/l7_validate.rs`` (``validate_l7_endpoint_semantics``,
``validate_explicit_tcp_additional_fields``) and the per-endpoint L7 block of
``validate_sandbox_policy`` (``openshell-policy/src/lib.rs``), at OpenShell 2f7fb65, in
their order. The endpoint is authored data (field names as in YAML, absent = default).
"""

from __future__ import annotations

from prover.runtime.data import Data, flag, items, number, option, text

_L7_PROTOCOLS = ("rest", "websocket", "graphql", "sql", "json-rpc", "mcp")
_GRAPHQL_OPERATIONS = ("query", "mutation", "subscription")
#: The allow-matcher fields whose absence everywhere makes ``rules`` deny all traffic
#: (``query`` is not among them; ``tool`` becomes ``params.name``).
_ALLOW_FIELDS = ("method", "path", "command", "operation_type", "operation_name", "fields")


def _has_params(matcher: Data) -> bool:
    """Does the matcher carry a flattened ``params`` entry (``tool`` included)?"""

    def leaves(value: object) -> bool:
        if isinstance(value, dict) and "any" not in value:
            return any(leaves(child) for child in value.values())
        return True

    params = matcher.get("params")
    nested = isinstance(params, dict) and any(leaves(value) for value in params.values())
    return nested or matcher.get("tool") is not None


def _denies_all(rules: list[Data]) -> bool:
    def empty(rule: Data) -> bool:
        allow = rule.get("allow")
        if not isinstance(allow, dict):
            return True
        return not any(allow.get(field) for field in _ALLOW_FIELDS) and not _has_params(allow)

    return bool(rules) and all(empty(rule) for rule in rules)


def _mcp_options(endpoint: Data) -> bool:
    """The proto's ``mcp`` is set only by ``strict_tool_names`` or
    ``allow_all_known_mcp_methods`` (``mcp_options`` in lib.rs)."""
    return any(
        option(endpoint, "mcp", key) is not None
        for key in ("strict_tool_names", "allow_all_known_mcp_methods")
    )


def json_rpc_body_limit(endpoint: Data) -> int:
    """``json_rpc_max_body_bytes``: the ``mcp`` stanza's when present, else ``json_rpc``'s."""
    section = "mcp" if isinstance(endpoint.get("mcp"), dict) else "json_rpc"
    value = option(endpoint, section, "max_body_bytes")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def semantics_errors(endpoint: Data) -> list[str]:
    """``validate_l7_endpoint_semantics``."""
    protocol = text(endpoint, "protocol")
    lowered = protocol.lower()
    known = lowered in _L7_PROTOCOLS
    tcp = lowered == "tcp"
    mcp, json_rpc = lowered == "mcp", lowered == "json-rpc"
    access = text(endpoint, "access")
    rules, deny = items(endpoint, "rules"), items(endpoint, "deny_rules")
    allow_all = option(endpoint, "mcp", "allow_all_known_mcp_methods") is True
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
    if mcp and access:
        errors.append(
            f"protocol {protocol} does not support access presets; use rules/deny_rules or set "
            "mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy"
        )
    elif json_rpc and access:
        errors.append(
            f"protocol {protocol} does not support access presets; use explicit rules with "
            'allow.method such as "*"'
        )
    if json_rpc and not rules and not access:
        errors.append(f"protocol {protocol} requires explicit rules with allow.method")
    if known and not mcp and not json_rpc and not rules and not access:
        errors.append("protocol requires rules or access to define allowed traffic")
    if mcp and not rules and not access and not allow_all:
        errors.append("protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false")
    if _denies_all(rules) and not (mcp and allow_all):
        errors.append(
            "rules would deny all traffic (no allow clause found). Use `access: full` or add "
            "allow clauses to rules."
        )
    if deny and not known:
        errors.append("deny_rules require protocol (L7 inspection must be enabled)")
    if deny and not mcp and not rules and not access:
        errors.append("deny_rules require rules or access to define the base allow set")
    return errors


def _tcp_only_fields(endpoint: Data) -> list[str]:
    return [
        name
        for name, here in (
            ("enforcement", bool(text(endpoint, "enforcement"))),
            ("path", bool(text(endpoint, "path"))),
            ("allow_encoded_slash", flag(endpoint, "allow_encoded_slash")),
            ("websocket_credential_rewrite", flag(endpoint, "websocket_credential_rewrite")),
            ("request_body_credential_rewrite", flag(endpoint, "request_body_credential_rewrite")),
            ("persisted_queries", bool(text(endpoint, "persisted_queries"))),
            ("graphql_persisted_queries", bool(endpoint.get("graphql_persisted_queries"))),
            ("graphql_max_body_bytes", number(endpoint, "graphql_max_body_bytes") > 0),
            ("json_rpc_max_body_bytes", json_rpc_body_limit(endpoint) > 0),
            ("mcp", _mcp_options(endpoint)),
        )
        if here
    ]


def _graphql_errors(endpoint: Data) -> list[str]:
    errors = [
        f"rules[{index}].allow.operation_type must be query, mutation, or subscription"
        for index, rule in enumerate(items(endpoint, "rules"))
        if text(rule.get("allow") or {}, "operation_type") not in _GRAPHQL_OPERATIONS
    ]
    errors += [
        f"deny_rules[{index}].operation_type must be query, mutation, or subscription"
        for index, rule in enumerate(items(endpoint, "deny_rules"))
        if text(rule, "operation_type") not in _GRAPHQL_OPERATIONS
    ]
    persisted = endpoint.get("graphql_persisted_queries")
    for key, query in sorted((persisted or {}).items()):
        if text(query, "operation_type") not in _GRAPHQL_OPERATIONS:
            errors.append(
                f"graphql_persisted_queries[{key}].operation_type must be query, mutation, "
                "or subscription"
            )
    return errors


def l7_errors(endpoint: Data) -> list[str]:
    """Every L7 reason for one endpoint, in ``validate_sandbox_policy``'s order."""
    errors = semantics_errors(endpoint)
    protocol = text(endpoint, "protocol")
    present = _tcp_only_fields(endpoint) if protocol.lower() == "tcp" else []
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
    if _mcp_options(endpoint) and protocol != "mcp":
        errors.append("mcp options are only valid for protocol mcp")
    if protocol == "graphql":
        errors += _graphql_errors(endpoint)
    return errors
