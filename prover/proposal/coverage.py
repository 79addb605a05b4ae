"""Endpoint comparisons the merge relies on (reference ``merge.rs``).

* ``endpoints_overlap``: same host (case-insensitive), same ``path`` selector, a shared
  port — the test that picks the endpoint (or rule) an incoming endpoint folds into;
* ``covers(loaded, proposed, port)``: ``loaded`` authorizes everything ``proposed``
  asks for at ``port`` — fields the merge retains are compared only when the proposal
  sets them, widened lists and flags by containment;
* the effective MCP inspection contract of an endpoint and its rendering.
"""

from __future__ import annotations

from dataclasses import dataclass

from prover.proposal.endpoint import (
    Data,
    effective_enforcement,
    effective_tls,
    flag,
    is_mcp,
    items,
    json_rpc_max_body,
    number,
    option,
    ports,
    text,
)

DEFAULT_JSON_RPC_MAX_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class McpContract:
    strict_tool_names: bool
    allow_all_known_mcp_methods: bool
    max_body_bytes: int


def mcp_contract(endpoint: Data) -> McpContract | None:
    if not is_mcp(endpoint):
        return None
    strict = option(endpoint, "mcp", "strict_tool_names")
    allow_all = option(endpoint, "mcp", "allow_all_known_mcp_methods")
    return McpContract(
        strict_tool_names=strict if isinstance(strict, bool) else True,
        allow_all_known_mcp_methods=allow_all if isinstance(allow_all, bool) else False,
        max_body_bytes=json_rpc_max_body(endpoint) or DEFAULT_JSON_RPC_MAX_BODY,
    )


def uses_mcp(endpoint: Data) -> bool:
    return is_mcp(endpoint) or isinstance(endpoint.get("mcp"), dict)


def mcp_contracts_match(left: Data, right: Data) -> bool:
    a, b = mcp_contract(left), mcp_contract(right)
    if a is None and b is None:
        return not uses_mcp(left) and not uses_mcp(right)
    return a == b


def describe_mcp_contract(endpoint: Data) -> str:
    contract = mcp_contract(endpoint)
    if contract is None:
        return f"non-mcp(protocol='{text(endpoint, 'protocol')}')"
    return (
        f"mcp(strict_tool_names={str(contract.strict_tool_names).lower()}, "
        f"allow_all_known_mcp_methods={str(contract.allow_all_known_mcp_methods).lower()}, "
        f"max_body_bytes={contract.max_body_bytes})"
    )


def endpoints_overlap(left: Data, right: Data) -> bool:
    if text(left, "host").lower() != text(right, "host").lower():
        return False
    if text(left, "path") != text(right, "path"):
        return False
    return bool(set(ports(left)) & set(ports(right)))


def _protocols_match(left: str, right: str) -> bool:
    if left.lower() == "mcp" or right.lower() == "mcp":
        return left.lower() == "mcp" and right.lower() == "mcp"
    return left == right


def _contains_all(loaded: list[object], proposed: list[object]) -> bool:
    return all(item in loaded for item in proposed)


def _unset_or_equal(proposed: object, loaded: object) -> bool:
    return proposed in ("", 0, None, {}, []) or proposed == loaded


def attributes_cover(loaded: Data, proposed: Data) -> bool:
    """Everything about the endpoint except its ports (reference ``endpoint_attributes_cover``)."""
    if text(loaded, "host").lower() != text(proposed, "host").lower():
        return False
    if text(loaded, "path") != text(proposed, "path"):
        return False
    proposed_protocol = text(proposed, "protocol")
    if proposed_protocol and not _protocols_match(text(loaded, "protocol"), proposed_protocol):
        return False
    proposed_tls = text(proposed, "tls")
    if proposed_tls and effective_tls(text(loaded, "tls")) != effective_tls(proposed_tls):
        return False
    proposed_enforcement = text(proposed, "enforcement")
    if proposed_enforcement and effective_enforcement(
        text(loaded, "enforcement")
    ) != effective_enforcement(proposed_enforcement):
        return False
    proposed_access = text(proposed, "access")
    if proposed_access and text(loaded, "access") != proposed_access:
        return False
    if not mcp_contracts_match(loaded, proposed):
        return False
    for field in ("rules", "deny_rules", "allowed_ips"):
        if not _contains_all(items(loaded, field), items(proposed, field)):
            return False
    for field in (
        "allow_encoded_slash",
        "websocket_credential_rewrite",
        "request_body_credential_rewrite",
    ):
        if flag(proposed, field) and not flag(loaded, field):
            return False
    for field in ("persisted_queries", "credential_signing", "signing_service", "signing_region"):
        if not _unset_or_equal(text(proposed, field), text(loaded, field)):
            return False
    if not _unset_or_equal(
        proposed.get("graphql_persisted_queries") or {},
        loaded.get("graphql_persisted_queries") or {},
    ):
        return False
    if not _unset_or_equal(
        number(proposed, "graphql_max_body_bytes"), number(loaded, "graphql_max_body_bytes")
    ):
        return False
    return uses_mcp(loaded) or _unset_or_equal(
        json_rpc_max_body(proposed), json_rpc_max_body(loaded)
    )


def covers(loaded: Data, proposed: Data, port: int | None) -> bool:
    """``loaded`` authorizes what ``proposed`` declares, at ``port`` (``None``: no port)."""
    if port is not None and port not in ports(loaded):
        return False
    return attributes_cover(loaded, proposed)


def unit_unchanged(existing: Data, merged: Data, port: int | None) -> bool:
    return covers(existing, merged, port) and covers(merged, existing, port)
