"""Which parsed policies the runtime refuses, and why (mainline's words, shortened).

- ``validate_sandbox_policy`` (``openshell-policy/src/lib.rs``) with
  ``validate_l7_endpoint_semantics`` and ``validate_explicit_tcp_additional_fields``
  (``openshell-policy/src/l7_validate.rs``): the gateway answers INVALID_ARGUMENT
  (``openshell-server/src/grpc/validation.rs``).
- ``find_endpoint_ambiguities`` (``openshell-policy/src/ambiguity.rs``): the gateway
  and ``OpaEngine::from_proto_with_pid_and_binary_identity_required``
  (``openshell-supervisor-network/src/opa.rs``) refuse the policy.

:func:`supervisor_refusals` lists what only the sandbox's engine refuses
(``validate_l7_policies``, ``openshell-supervisor-network/src/l7/mod.rs``): the gateway
stores such a policy, and the sandbox then starts with ``restrictive_default_policy``
(``load_policy`` in ``openshell-sandbox/src/lib.rs``).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from tests.soundness.sandbox_oracle.errors import Unmodelled
from tests.soundness.sandbox_oracle.globs import patterns_overlap
from tests.soundness.sandbox_oracle.policy import Endpoint, Policy

MIN_UID = 1
MAX_UID = 2**32 - 2  # openshell-policy: MIN_SANDBOX_UID..=MAX_SANDBOX_UID
MAX_FILESYSTEM_PATHS = 256
MAX_PATH_LENGTH = 4096
L7_PROTOCOLS = ("rest", "websocket", "graphql", "sql", "json-rpc", "mcp")
_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")


def rust_u32(value: str) -> int | None:
    """``str::parse::<u32>``: ASCII digits with an optional leading ``+``."""
    digits = value[1:] if value.startswith("+") else value
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    number = int(digits)
    return number if number < 2**32 else None


def is_valid_sandbox_identity(value: str) -> bool:
    """``is_valid_sandbox_identity``: ``sandbox`` or a u32 in range."""
    if value == "sandbox":
        return True
    number = rust_u32(value)
    return number is not None and MIN_UID <= number <= MAX_UID


def _has_parent_component(path: str) -> bool:
    return ".." in path.split("/")


def _host_wildcard_shape_invalid(host: str) -> bool:
    """``host_wildcard_shape_invalid``."""
    if host in ("*", "**"):
        return True
    if "*" not in host:
        return False
    labels = host.split(".")
    if "**" in labels[0] and labels[0] != "**":
        return True
    return any("**" in label or ("*" in label and label != "*") for label in labels[1:])


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _tcp_host_problem(host: str) -> str | None:
    """``validate_tcp_dns_host_selector`` for the hosts the oracle reads."""
    if host.strip() != host:
        return "leading or trailing whitespace is not allowed"
    if host.endswith("."):
        return "omit the trailing DNS root dot"
    labels = [("x" if label == "**" else label.replace("*", "x")) for label in host.split(".")]
    if not all(_LABEL.match(label) for label in labels):
        raise Unmodelled(f"tcp host selector {host!r}")
    return None


def _mcp_option(ep: Endpoint, name: str) -> Any:
    mcp = ep.get("mcp", None)
    return mcp.get(name) if isinstance(mcp, dict) else None


def _json_rpc_max_body_bytes(ep: Endpoint) -> int:
    """``json_rpc_max_body_bytes``: the MCP stanza's limit when present, else json_rpc's."""
    for key in ("mcp", "json_rpc"):
        stanza = ep.get(key, None)
        if isinstance(stanza, dict):
            value = stanza.get("max_body_bytes") or 0
            return value if isinstance(value, int) else 0
    return 0


def _l7_semantics(ep: Endpoint) -> list[str]:
    """``validate_l7_endpoint_semantics`` (``l7_validate.rs``)."""
    errors = []
    protocol = ep.protocol
    lowered = protocol.lower()
    explicit_tcp = lowered == "tcp"
    known = lowered in L7_PROTOCOLS
    jsonrpc_family = lowered in ("json-rpc", "mcp")
    is_mcp, is_jsonrpc = lowered == "mcp", lowered == "json-rpc"
    allow_all_mcp = _mcp_option(ep, "allow_all_known_mcp_methods") is True
    has_rules, has_deny = bool(ep.rules), bool(ep.deny_rules)
    if protocol and not known and not explicit_tcp:
        errors.append(f"unknown protocol '{protocol}'")
    if explicit_tcp and (ep.access or has_rules or has_deny):
        errors.append("protocol tcp does not support access, rules, or deny_rules")
    if has_rules and ep.access:
        errors.append("rules and access are mutually exclusive")
    if jsonrpc_family and ep.access:
        errors.append(f"protocol {protocol} does not support access presets")
    if is_jsonrpc and not has_rules and not ep.access:
        errors.append(f"protocol {protocol} requires explicit rules with allow.method")
    if known and not is_mcp and not is_jsonrpc and not has_rules and not ep.access:
        errors.append("protocol requires rules or access to define allowed traffic")
    if is_mcp and not has_rules and not ep.access and not allow_all_mcp:
        errors.append("protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false")
    counted = {"command", "operation_type", "operation_name", "fields", "params"}
    would_deny_all = has_rules and all(
        not r.method and not r.path and not any(k in counted for k, _ in r.other) for r in ep.rules
    )
    if would_deny_all and not (is_mcp and allow_all_mcp):
        errors.append("rules would deny all traffic (no allow clause found)")
    if has_deny and not known:
        errors.append("deny_rules require protocol (L7 inspection must be enabled)")
    if has_deny and not is_mcp and not has_rules and not ep.access:
        errors.append("deny_rules require rules or access to define the base allow set")
    return errors


def validation_violations(policy: Policy, undecided: list[str] | None = None) -> list[str]:
    """Every violation ``validate_sandbox_policy`` reports that the oracle can evaluate;
    checks it cannot evaluate are named in ``undecided``."""
    undecided = [] if undecided is None else undecided
    out: list[str] = []
    if policy.process is not None:
        for field, value in zip(("run_as_user", "run_as_group"), policy.process, strict=True):
            if value and not is_valid_sandbox_identity(value):
                out.append(f"{field} must be 'sandbox' or a numeric UID/GID, got '{value}'")
    if policy.filesystem is not None:
        _, read_only, read_write = policy.filesystem
        if len(read_only) + len(read_write) > MAX_FILESYSTEM_PATHS:
            out.append("too many filesystem paths")
        for path in (*read_only, *read_write):
            if len(path) > MAX_PATH_LENGTH:
                out.append("path exceeds maximum length")
                continue
            if not path.startswith("/"):
                out.append(f"path must be absolute (start with '/'): {path}")
            if _has_parent_component(path):
                out.append(f"path contains '..' traversal component: {path}")
        for path in read_write:
            if path.rstrip("/") == "":
                out.append(f"read-write path is overly broad: {path}")
    for rule in policy.rules:
        for ep in rule.endpoints:
            problems = _endpoint_problems(ep, undecided)
            out.extend(f"network policy '{rule.name}': {p}" for p in problems)
    if policy.middlewares:
        undecided.append("middleware::validate")
    return out


def _endpoint_problems(ep: Endpoint, undecided: list[str]) -> list[str]:
    out = []
    explicit_tcp = ep.protocol.lower() == "tcp"
    if not ep.host.strip() and explicit_tcp:
        out.append("protocol tcp requires a DNS hostname")
    elif not ep.host.strip() and not ep.allowed_ips:
        out.append("endpoint host must not be empty")
    elif explicit_tcp:
        if _is_ip(ep.host):
            out.append(f"protocol tcp endpoint '{ep.host}' must use a DNS hostname")
        else:
            try:
                problem = _tcp_host_problem(ep.host)
            except Unmodelled as exc:
                undecided.append(str(exc))
                problem = None
            if problem:
                out.append(f"protocol tcp endpoint has invalid DNS host selector: {problem}")
    if not ep.ports:
        out.append(f"endpoint '{ep.host}' must declare at least one port")
    out.extend(f"endpoint '{ep.host}' has invalid port {p}" for p in ep.ports if not 1 <= p)
    if "*" in ep.host and (ep.host.startswith("*.") or ep.host.startswith("**.")):
        if len(ep.host.split(".")) <= 2:
            out.append(f"TLD wildcard '{ep.host}' is not allowed")
    if _host_wildcard_shape_invalid(ep.host):
        out.append(f"invalid host wildcard '{ep.host}'")
    signing = ep.get("credential_signing")
    if signing and signing not in ("sigv4", "sigv4:body", "sigv4:no_body"):
        out.append(f"unrecognized credential_signing value '{signing}'")
    if signing and not ep.get("signing_service"):
        out.append("credential_signing set but signing_service is empty")
    if signing and ep.get("request_body_credential_rewrite", False):
        out.append("credential_signing and request_body_credential_rewrite are exclusive")
    errors = _l7_semantics(ep)
    tcp_only = [
        name
        for name in (
            "enforcement",
            "path",
            "allow_encoded_slash",
            "websocket_credential_rewrite",
            "request_body_credential_rewrite",
            "persisted_queries",
            "graphql_persisted_queries",
            "graphql_max_body_bytes",
        )
        if name in ep.set_fields
    ]
    if _json_rpc_max_body_bytes(ep) > 0:
        tcp_only.append("json_rpc_max_body_bytes")
    if ep.get("mcp", None) is not None:
        tcp_only.append("mcp")
    if explicit_tcp and tcp_only:
        errors.append(f"protocol tcp does not support L7-only fields: {', '.join(tcp_only)}")
    if ep.path and not ep.path.startswith("/") and ep.path != "**":
        errors.append("path must start with '/' or be '**'")
    persisted = ep.get("persisted_queries")
    if persisted and persisted not in ("deny", "allow_registered"):
        errors.append("persisted_queries must be 'deny' or 'allow_registered'")
    if ep.protocol == "sql" and ep.enforcement == "enforce":
        errors.append("SQL enforcement requires full SQL parsing; use enforcement: audit")
    if ep.get("mcp", None) is not None and ep.protocol != "mcp":
        errors.append("mcp options are only valid for protocol mcp")
    if ep.protocol == "graphql":
        undecided.append("graphql operation_type checks")
    out.extend(f"invalid L7 configuration: {e}" for e in errors)
    return out


# -- find_endpoint_ambiguities ------------------------------------------------------------


def _contributes_pipeline(ep: Endpoint) -> bool:
    """``endpoint_contributes_request_pipeline_metadata``."""
    return (
        (bool(ep.protocol) and ep.protocol.lower() != "tcp") or bool(ep.allowed_ips) or bool(ep.tls)
    )


def _specificity(path: str) -> int:
    """``path_selector_specificity``: characters other than ``*``."""
    return sum(1 for ch in path if ch != "*")


def _paths_overlap(left: str, right: str) -> bool:
    if not left or not right or left in ("**", "/**") or right in ("**", "/**"):
        return True
    return patterns_overlap(left, right, "/")


def _hosts_overlap(left: str, right: str) -> bool:
    if not left or not right:
        return True
    return patterns_overlap(left.lower(), right.lower(), ".")


def _norm_tls(value: str) -> str:
    return "skip" if value.lower() == "skip" else "auto"


def _norm_enforcement(value: str) -> str:
    return "enforce" if value.lower() == "enforce" else "audit"


def _norm_protocol(value: str) -> str:
    return "" if value.lower() == "tcp" else value.lower()


PIPELINE_FIELDS = (
    "allow_encoded_slash",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "credential_signing",
    "signing_service",
    "signing_region",
    "credential_binding",
)


def ambiguities(policy: Policy, undecided: list[str] | None = None) -> list[str]:
    """``find_endpoint_ambiguities``: overlapping endpoints with conflicting metadata."""
    refs = [(rule.name, i, ep) for rule in policy.rules for i, ep in enumerate(rule.endpoints)]
    out = []
    for a in range(len(refs)):
        for b in range(a + 1, len(refs)):
            (ln, li, left), (rn, ri, right) = refs[a], refs[b]
            ports = set(p for p in left.ports if p > 0) & set(p for p in right.ports if p > 0)
            if not ports or not _hosts_overlap(left.host, right.host):
                continue
            conflicts = []
            if (left.protocol.lower() == "tcp") != (right.protocol.lower() == "tcp"):
                conflicts.append("transparent_tcp_eligible")
            if _norm_tls(left.tls) != _norm_tls(right.tls):
                conflicts.append("tls")
            ips = [sorted({ip.strip().lower() for ip in ep.allowed_ips}) for ep in (left, right)]
            if ips[0] != ips[1]:
                conflicts.append("allowed_ips")
            if (
                _contributes_pipeline(left)
                and _contributes_pipeline(right)
                and _paths_overlap(left.path, right.path)
                and _specificity(left.path) == _specificity(right.path)
            ):
                if _norm_protocol(left.protocol) != _norm_protocol(right.protocol):
                    conflicts.append("protocol")
                if _norm_enforcement(left.enforcement) != _norm_enforcement(right.enforcement):
                    conflicts.append("enforcement")
                for name in PIPELINE_FIELDS:
                    if left.get(name, None) != right.get(name, None):
                        conflicts.append(name)
                families = {"websocket", "graphql", "json-rpc", "mcp"}
                same = left.protocol.lower() == right.protocol.lower()
                if same and left.protocol.lower() in families and undecided is not None:
                    undecided.append(f"{left.protocol} ambiguity fields")
            if conflicts:
                out.append(
                    f"'{ln}' endpoint[{li}] and '{rn}' endpoint[{ri}]: {', '.join(conflicts)}"
                )
    return out


def supervisor_refusals(policy: Policy) -> list[str]:
    """What ``validate_l7_policies`` refuses that the gateway's validators let pass.

    ``l7_matchers_to_json`` (``opa.rs``) drops an empty ``glob`` and an empty ``any``,
    leaving ``{}``; ``validate_matcher_value`` (``l7/mod.rs``) refuses a matcher object
    with neither key ("unknown matcher keys"), so the engine is never built.
    """
    out = []
    for rule in policy.rules:
        for i, ep in enumerate(rule.endpoints):
            # Allow-rule matchers are checked only under `protocol == "rest"` (exact,
            # as written); deny-rule matchers whenever deny rules exist.
            checked = [("deny_rules", ep.deny_rules)]
            if ep.protocol == "rest":
                checked.append(("rules", ep.rules))
            for kind, matchers in checked:
                for j, m in enumerate(matchers):
                    for key, (how, values) in m.query:
                        if (how == "glob" and values == ("",)) or (how == "any" and not values):
                            where = f"{rule.key}.endpoints[{i}].{kind}[{j}].query.{key}"
                            out.append(f"{where}: unknown matcher keys")
    return out
