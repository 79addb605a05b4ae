"""Which policies the runtime runs at all: its validator, in its words.

OpenShell (at 2f7fb65) refuses a policy that ``validate_sandbox_policy``
(``openshell-policy/src/lib.rs``) finds a violation in, or in which
``find_endpoint_ambiguities`` (``openshell-policy/src/ambiguity.rs``) finds two
overlapping endpoints with conflicting metadata: the gateway answers INVALID_ARGUMENT
(``openshell-server/src/grpc/validation.rs``), a policy read from the container disk is
replaced by the restrictive default (``openshell-sandbox/src/lib.rs``) and the network
supervisor refuses to build its engine (``openshell-supervisor-network/src/opa.rs``).
Nothing can be proved about a sandbox that never runs the policy, so the default
semantics answers ``error`` for such a policy, naming every violation.

:func:`runtime_refusals` takes the policy as the mainline parser read it (authored data:
field names as in YAML, an absent field is its default) and returns every violation, in
the validator's order (process, filesystem, endpoints by rule key, middlewares), then
every ambiguity (:mod:`prover.runtime.ambiguity`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from prover.runtime.data import Data, flag, items, ports, rules_of, text
from prover.runtime.l7_validation import l7_errors
from prover.runtime.middleware_validation import middleware_violations

# The host patterns and the ambiguity search are imported where a policy has endpoints:
# one without network rules (the CLI's seed example) never loads them.

#: ``MIN_SANDBOX_UID``/``MAX_SANDBOX_UID`` (lib.rs): 0 is root, ``u32::MAX`` the
#: invalid-identity sentinel.
MIN_ID, MAX_ID = 1, 4_294_967_294
MAX_FILESYSTEM_PATHS = 256
MAX_PATH_LENGTH = 4096
_SIGNING = ("sigv4", "sigv4:body", "sigv4:no_body")


def is_valid_identity(value: str) -> bool:
    """``is_valid_sandbox_identity``: ``sandbox`` or ``value.parse::<u32>()`` in range
    (Rust's parser takes an optional ``+`` and ASCII digits, leading zeros included)."""
    if value == "sandbox":
        return True
    digits = value.removeprefix("+")
    return digits.isascii() and digits.isdigit() and MIN_ID <= int(digits) <= MAX_ID


def _process(policy: Data) -> list[str]:
    process = policy.get("process")
    if not isinstance(process, dict):
        return []
    return [
        f"{field} must be 'sandbox' or a numeric UID/GID in range [{MIN_ID}, {MAX_ID}], "
        f"got '{value}'"
        for field in ("run_as_user", "run_as_group")
        if (value := text(process, field)) and not is_valid_identity(value)
    ]


def _truncate(path: str) -> str:
    """``truncate_for_display``: 77 bytes (backed off to a character boundary) and ``...``."""
    raw = path.encode("utf-8")
    if len(raw) <= 80:
        return path
    return raw[:77].decode("utf-8", "ignore") + "..."


def _filesystem(policy: Data) -> list[str]:
    section = policy.get("filesystem_policy")
    if not isinstance(section, dict):
        return []
    read_only, read_write = items(section, "read_only"), items(section, "read_write")
    found: list[str] = []
    total = len(read_only) + len(read_write)
    if total > MAX_FILESYSTEM_PATHS:
        found.append(f"too many filesystem paths ({total} > {MAX_FILESYSTEM_PATHS})")
    for path in read_only + read_write:
        size = len(path.encode("utf-8"))
        if size > MAX_PATH_LENGTH:
            found.append(
                f"path exceeds maximum length ({size} > {MAX_PATH_LENGTH}): {_truncate(path)}"
            )
            continue
        if not path.startswith("/"):
            found.append(f"path must be absolute (start with '/'): {path}")
        if ".." in path.split("/"):  # ``Component::ParentDir``
            found.append(f"path contains '..' traversal component: {path}")
    found += [f"read-write path is overly broad: {p}" for p in read_write if not p.rstrip("/")]
    return found


def _is_ip_literal(host: str) -> bool:
    if "%" in host:  # Rust's ``IpAddr`` has no zone ids
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _tcp_host_problem(host: str) -> str | None:
    """``validate_tcp_dns_host_selector``: a host policy DNS can resolve. The DNS-name
    parser (hickory ``Name::from_ascii``) is approximated by its length rules."""
    if host.strip() != host:
        return "leading or trailing whitespace is not allowed"
    if host.endswith("."):
        return "omit the trailing DNS root dot"
    from prover.runtime.host_pattern import host_selector

    selector = host_selector([host], [])
    if isinstance(selector, str):
        return selector
    labels = ["x" if label == "**" else label.replace("*", "x") for label in host.split(".")]
    for label in labels:
        if not label.isascii():
            return f"selector cannot represent a valid DNS name: Malformed label: {label}"
        if len(label) > 63:
            return (
                "selector cannot represent a valid DNS name: decoding error: label bytes "
                f"exceed 63: {len(label)}"
            )
    wire = len(".".join(labels)) + 2  # each label's length byte, and the root
    if wire > 255:
        return (
            "selector cannot represent a valid DNS name: decoding error: name label data "
            f"exceed 255: {wire}"
        )
    return None


def _wildcard_shape_invalid(host: str) -> bool:
    """``host_wildcard_shape_invalid``."""
    if host in ("*", "**"):
        return True
    if "*" not in host:
        return False
    labels = host.split(".")
    if "**" in labels[0] and labels[0] != "**":
        return True
    return any("**" in label or ("*" in label and label != "*") for label in labels[1:])


def _host_violations(prefix: str, endpoint: Data) -> list[str]:
    host = text(endpoint, "host")
    tcp = text(endpoint, "protocol").lower() == "tcp"
    if not host.strip() and tcp:
        return [
            f"{prefix}: protocol tcp requires a DNS hostname; hostless allowed_ips endpoints "
            "are supported only by the forward proxy"
        ]
    if not host.strip() and not items(endpoint, "allowed_ips"):
        return [
            f"{prefix}: endpoint host must not be empty unless allowed_ips constrains a "
            "non-TCP proxy endpoint"
        ]
    if not tcp:
        return []
    if _is_ip_literal(host):
        return [
            f"{prefix}: protocol tcp endpoint '{host}' must use a DNS hostname, not an IP "
            "literal; direct IP connections bypass policy DNS and are blocked"
        ]
    problem = _tcp_host_problem(host)
    if problem is None:
        return []
    return [f"{prefix}: protocol tcp endpoint has invalid DNS host selector '{host}': {problem}"]


def _endpoint(name: str, index: int, endpoint: Data) -> list[str]:
    prefix = f"network policy '{name}'"
    host = text(endpoint, "host")
    found = _host_violations(prefix, endpoint)
    effective = ports(endpoint)
    if not effective:
        found.append(f"{prefix}: endpoint '{host}' must declare at least one port")
    found += [
        f"{prefix}: endpoint '{host}' has invalid port {port}; expected 1..=65535"
        for port in effective
        if not 1 <= port <= 65535
    ]
    if "*" in host and host.startswith(("*.", "**.")) and len(host.split(".")) <= 2:
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
    found += [
        f"{prefix}: endpoint {index} has invalid L7 configuration: {reason}"
        for reason in l7_errors(endpoint)
    ]
    return found


def policy_violations(policy: Data) -> list[str]:
    """``validate_sandbox_policy``: every violation (rules by key)."""
    found = _process(policy) + _filesystem(policy)
    for key, rule in rules_of(policy):
        name = text(rule, "name") or key
        for index, endpoint in enumerate(items(rule, "endpoints")):
            if isinstance(endpoint, dict):
                found += _endpoint(name, index, endpoint)
    return found + middleware_violations(policy)


def runtime_refusals(policy: Data, checkpoint: Callable[[], None] | None = None) -> tuple[str, ...]:
    """Every reason the runtime refuses ``policy``: its validator's violations, then the
    endpoint ambiguities; empty when it runs the policy. ``checkpoint`` is called now and
    then (the ambiguity search compares endpoint pairs)."""
    found = policy_violations(policy)
    if not any(items(rule, "endpoints") for _, rule in rules_of(policy)):
        return tuple(found)  # no endpoints, no ambiguity
    from prover.runtime.ambiguity import ambiguities

    return (*found, *ambiguities(policy, checkpoint))


def endpoint_violations(name: str, index: int, endpoint: Data) -> list[str]:
    """The validator's violations of one endpoint of rule ``name`` (at ``index``), as
    ``validate_sandbox_policy`` words them (the explanation's repairs: one endpoint at a
    time)."""
    return _endpoint(name, index, endpoint)
