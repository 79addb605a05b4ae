"""``merge_policy`` with one ``AddRule`` (spec §2.3, reference ``merge.rs``), on authored data.

* The incoming rule is normalised; an empty ``name`` becomes the rule name.
* Target: the rule with the requested key; else the first (sorted) non-``_provider_``
  rule sharing an endpoint (same host ignoring case, same ``path``, a common port); else
  a new key.
* Folding an endpoint: host/path filled when empty, ports unioned; ``protocol``,
  ``enforcement``, ``tls`` keep an existing value (warning when different); incoming
  ``rules`` expand an existing ``access`` preset into explicit rules on ``**`` first;
  an incoming ``access`` is adopted only when the endpoint has neither rules nor access;
  deny rules and ``allowed_ips`` are appended; flags are OR-ed; an L4 endpoint may be
  promoted to MCP; two MCP contracts must agree.
* Binaries: an any-binary rule (empty list) stays so; an incoming empty list widens the
  rule to any binary; else new paths are appended.
* Authorization inheritance (a rule grants binaries × endpoints): a new binary scope
  must declare every endpoint/port of the merged rule, every changed port must be named,
  and a changed authorization must name every existing binary. When the target was
  picked by the overlap fallback, such a conflict keeps the proposal on its own key
  (with a warning) instead of failing.
* A host and port may not end up with an MCP contract next to a different inspection.
"""

from __future__ import annotations

from prover.proposal.coverage import (
    McpContract,
    covers,
    describe_mcp_contract,
    endpoints_overlap,
    mcp_contract,
    mcp_contracts_match,
    unit_unchanged,
)
from prover.proposal.endpoint import (
    Data,
    binary_paths,
    clone,
    dedup,
    flag,
    is_provider_rule,
    items,
    json_rpc_max_body,
    normalize_endpoint,
    normalize_rule,
    number,
    ports,
    set_ports,
    text,
)

ANY_BINARY_SCOPE = "any binary"
_OR_FLAGS = (
    "allow_encoded_slash",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "allow_uninspected_credentials",
)
_RETAINED_TEXT = (
    "protocol",
    "tls",
    "enforcement",
    "persisted_queries",
    "credential_signing",
    "signing_service",
    "signing_region",
)


class MergeError(Exception):
    """The proposal cannot be merged; the message is the reference's error text."""


class InheritanceConflict(MergeError):
    """A merge error that only exists because two authorizations would share one rule."""


def _ports_debug(values: list[int | None]) -> str:
    return "[" + ", ".join(str(p) for p in values if p is not None) + "]"


def _units(endpoint: Data) -> list[int | None]:
    return list(ports(endpoint)) or [None]


def _expand_access(endpoint: Data, host: str, port: int, warnings: list[str]) -> None:
    access = text(endpoint, "access")
    if not access:
        return
    protocol = text(endpoint, "protocol")
    presets = {
        "full": ["*"],
        "read-only": ["GET"] if protocol == "websocket" else ["GET", "HEAD", "OPTIONS"],
        "read-write": ["GET", "WEBSOCKET_TEXT"]
        if protocol == "websocket"
        else ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"],
    }
    if access not in presets:
        raise MergeError(f"endpoint {host}:{port} uses unsupported access preset '{access}'")
    endpoint.pop("access", None)
    expanded = [{"allow": {"method": method, "path": "**"}} for method in presets[access]]
    endpoint["rules"] = dedup(items(endpoint, "rules") + expanded)
    warnings.append(
        f"expanded access preset '{access}' to explicit rules for endpoint {host}:{port}"
    )


def _merge_text(
    existing: Data, incoming: Data, field: str, label: str, where: str, warnings: list[str]
) -> None:
    value = text(incoming, field)
    if not value:
        return
    current = text(existing, field)
    if not current:
        existing[field] = value
    elif current != value:
        warnings.append(
            f"endpoint {where} keeps existing {label} '{current}' and ignores incoming '{value}'"
        )


def _promotes_to_mcp(existing: Data, incoming: Data) -> bool:
    return (
        not text(existing, "protocol")
        and "mcp" not in existing
        and json_rpc_max_body(existing) == 0
        and mcp_contract(incoming) is not None
    )


def merge_endpoint(existing: Data, incoming: Data, warnings: list[str]) -> None:
    host = text(existing, "host") or text(incoming, "host")
    incoming_ports = ports(incoming)
    port = next((p for p in ports(existing) if p in incoming_ports), None)
    if port is None:
        port = incoming_ports[0] if incoming_ports else 0
    where = f"{host}:{port}"
    promotes = _promotes_to_mcp(existing, incoming)
    if not promotes and not mcp_contracts_match(existing, incoming):
        raise MergeError(
            f"merge operation 0 cannot combine MCP contracts at {where}: existing "
            f"{describe_mcp_contract(existing)}, incoming {describe_mcp_contract(incoming)}"
        )
    for field in ("host", "path"):
        if not text(existing, field) and text(incoming, field):
            existing[field] = text(incoming, field)
    set_ports(existing, sorted(set(ports(existing)) | set(incoming_ports)))
    _merge_text(existing, incoming, "protocol", "protocol", where, warnings)
    if promotes:
        for section in ("mcp", "json_rpc"):
            existing.pop(section, None)
            if section in incoming:
                existing[section] = clone(incoming[section])
    _merge_text(existing, incoming, "enforcement", "enforcement", where, warnings)
    _merge_text(existing, incoming, "tls", "tls mode", where, warnings)
    incoming_access = text(incoming, "access")
    if items(incoming, "rules"):
        _expand_access(existing, host, port, warnings)
        existing["rules"] = dedup(items(existing, "rules") + items(incoming, "rules"))
        if incoming_access:
            warnings.append(
                f"endpoint {where} already uses explicit rules; incoming access preset "
                f"'{incoming_access}' was ignored"
            )
    elif incoming_access:
        if items(existing, "rules"):
            warnings.append(
                f"endpoint {where} already uses explicit rules; incoming access preset "
                f"'{incoming_access}' was ignored"
            )
        elif not text(existing, "access"):
            existing["access"] = incoming_access
        elif text(existing, "access") != incoming_access:
            warnings.append(
                f"endpoint {where} keeps existing access preset '{text(existing, 'access')}' "
                f"and ignores incoming '{incoming_access}'"
            )
    for field in ("deny_rules", "allowed_ips"):
        merged = dedup(items(existing, field) + items(incoming, field))
        if merged:
            existing[field] = merged
    for field in _OR_FLAGS:
        if flag(incoming, field):
            existing[field] = True
    normalize_endpoint(existing)


def _adopt_retained(declared: Data, merged: Data) -> Data:
    """Fill a declaration's unset carried-over fields from the endpoint it is judged against."""
    adopted = clone(declared)
    for field in _RETAINED_TEXT:
        if not text(adopted, field) and text(merged, field):
            adopted[field] = text(merged, field)
    if not text(adopted, "access") and not items(adopted, "rules") and text(merged, "access"):
        adopted["access"] = text(merged, "access")
    if not adopted.get("graphql_persisted_queries") and merged.get("graphql_persisted_queries"):
        adopted["graphql_persisted_queries"] = merged["graphql_persisted_queries"]
    if not number(adopted, "graphql_max_body_bytes") and number(merged, "graphql_max_body_bytes"):
        adopted["graphql_max_body_bytes"] = number(merged, "graphql_max_body_bytes")
    if not json_rpc_max_body(adopted) and json_rpc_max_body(merged):
        adopted["json_rpc"] = {"max_body_bytes": json_rpc_max_body(merged)}
    return adopted


def _names_port(incoming: Data, merged: Data, port: int | None) -> bool:
    return any(
        text(declared, "host").lower() == text(merged, "host").lower()
        and text(declared, "path") == text(merged, "path")
        and (port is None or port in ports(declared))
        for declared in items(incoming, "endpoints")
    )


def _undeclared_existing(existing: Data, incoming: Data) -> list[str]:
    incoming_paths = binary_paths(incoming)
    if not incoming_paths:
        return []
    existing_paths = binary_paths(existing)
    if not existing_paths:
        return ["the existing any-binary scope"]
    return [path for path in existing_paths if path not in incoming_paths]


def _check_inheritance(
    existing: Data, incoming: Data, merged_endpoints: list[Data], name: str
) -> None:
    existing_paths = binary_paths(existing)
    incoming_paths = binary_paths(incoming)
    new_scope: str | None = None
    if existing_paths:
        if not incoming_paths:
            new_scope = ANY_BINARY_SCOPE
        else:
            fresh = next((p for p in incoming_paths if p not in existing_paths), None)
            new_scope = f"binary '{fresh}'" if fresh is not None else None
    undeclared_binaries = _undeclared_existing(existing, incoming)
    prefix = f"merge operation 0 add-rule '{name}'"
    for endpoint in merged_endpoints:
        host = text(endpoint, "host")
        units = _units(endpoint)
        if new_scope is not None:
            declarations = [_adopt_retained(d, endpoint) for d in items(incoming, "endpoints")]
            missing = [p for p in units if not any(covers(d, endpoint, p) for d in declarations)]
            if missing:
                raise InheritanceConflict(
                    f"{prefix} would grant {new_scope} undeclared authorization for {host} "
                    f"on ports {_ports_debug(missing)}"
                )
        changed = [
            p
            for p in units
            if not any(unit_unchanged(e, endpoint, p) for e in items(existing, "endpoints"))
        ]
        unnamed = [p for p in changed if not _names_port(incoming, endpoint, p)]
        if unnamed:
            raise InheritanceConflict(
                f"{prefix} would change authorization for {host} on undeclared ports "
                f"{_ports_debug(unnamed)}; declare every port of the endpoint it modifies"
            )
        if changed and undeclared_binaries:
            raise InheritanceConflict(
                f"{prefix} would grant existing binaries new or changed authorization for "
                f"{host} on ports {_ports_debug(changed)}; also declare "
                + ", ".join(undeclared_binaries)
            )


def merge_rules(
    existing: Data, incoming: Data, name: str, target: str, warnings: list[str]
) -> None:
    merged_endpoints = [clone(e) for e in items(existing, "endpoints")]
    endpoint_warnings: list[str] = []
    for raw in items(incoming, "endpoints"):
        endpoint = clone(raw)
        normalize_endpoint(endpoint)
        match = next((e for e in merged_endpoints if endpoints_overlap(e, endpoint)), None)
        if match is None:
            merged_endpoints.append(endpoint)
        else:
            merge_endpoint(match, endpoint, endpoint_warnings)
    _check_inheritance(existing, incoming, merged_endpoints, name)
    existing["endpoints"] = merged_endpoints
    existing_paths, incoming_paths = binary_paths(existing), binary_paths(incoming)
    if not existing_paths:
        if incoming_paths:
            warnings.append(
                f"rule '{target}' already authorizes any binary; kept that scope instead of "
                f"narrowing it to {', '.join(incoming_paths)}"
            )
    elif not incoming_paths:
        existing.pop("binaries", None)
    else:
        existing["binaries"] = [{"path": p} for p in dedup(existing_paths + incoming_paths)]
    warnings.extend(endpoint_warnings)


def _mcp_conflicts(rules: dict[str, Data]) -> dict[tuple[str, int], list[str]]:
    """Host/port pairs where an MCP contract meets a different inspection contract."""
    found: dict[tuple[str, int], list[tuple[McpContract | None, str]]] = {}
    for rule in rules.values():
        for endpoint in items(rule, "endpoints"):
            if not text(endpoint, "protocol"):
                continue
            entry = (mcp_contract(endpoint), describe_mcp_contract(endpoint))
            for port in ports(endpoint):
                found.setdefault((text(endpoint, "host").lower(), port), []).append(entry)
    conflicts: dict[tuple[str, int], list[str]] = {}
    for key in sorted(found):
        contracts = [contract for contract, _ in found[key]]
        mcp = [contract for contract in contracts if contract is not None]
        if mcp and (len(mcp) != len(contracts) or any(c != mcp[0] for c in mcp)):
            conflicts[key] = sorted({rendered for _, rendered in found[key]})
    return conflicts


def add_rule(rules: dict[str, Data], rule_name: str, incoming_rule: Data) -> tuple[str, list[str]]:
    """Apply ``AddRule{rule_name, incoming_rule}`` to ``rules`` in place.

    Returns the key that received the proposal and the merge warnings; raises
    :class:`MergeError` with the reference's message when the merge fails (``rules`` is
    then unchanged).
    """
    if not rule_name.strip():
        raise MergeError("add-rule operation requires a rule name")
    if not items(incoming_rule, "endpoints"):
        raise MergeError(
            f"merge operation 0 add-rule '{rule_name}' must contain at least one endpoint"
        )
    before = _mcp_conflicts(rules)
    incoming = clone(incoming_rule)
    normalize_rule(incoming)
    if not text(incoming, "name"):
        incoming["name"] = rule_name
    warnings: list[str] = []
    working = {key: clone(rule) for key, rule in rules.items()}
    if rule_name in working:
        target = rule_name
        merge_rules(working[target], incoming, rule_name, target, warnings)
    else:
        target = next(
            (
                key
                for key in sorted(working)
                if not is_provider_rule(key)
                and any(
                    endpoints_overlap(e, i)
                    for e in items(working[key], "endpoints")
                    for i in items(incoming, "endpoints")
                )
            ),
            rule_name,
        )
        if target == rule_name:
            working[rule_name] = incoming
        else:
            candidate = clone(working[target])
            attempt: list[str] = []
            try:
                merge_rules(candidate, incoming, rule_name, target, attempt)
                working[target] = candidate
                warnings.extend(attempt)
            except InheritanceConflict as conflict:
                warnings.append(
                    f"kept add-rule '{rule_name}' on its own rule instead of folding it into "
                    f"overlapping rule '{target}': {conflict}"
                )
                working[rule_name] = incoming
                target = rule_name
    for key, contracts in _mcp_conflicts(working).items():
        if key not in before:
            host, port = key
            raise MergeError(
                f"{host}:{port} would carry more than one L7 inspection contract "
                f"({', '.join(contracts)}); the sandbox resolves one contract per host and port, "
                "so these cannot coexist even in different rules or under different paths"
            )
    rules.clear()
    rules.update(working)
    return target, warnings
