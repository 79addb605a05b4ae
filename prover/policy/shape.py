"""Shape validation (spec §5): the policy shapes the containment model covers.

Everything the model does not cover is refused here, before any semantic work, with the
reference's reason text. Returns the first failure as a detail sentence; the caller
prefixes ``"boundary policy "``/``"candidate policy "`` (boundary first).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Collection, Hashable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prover.policy.schema import AuthoredPolicy, EndpointSection, L7Matcher


GLOB_META = frozenset("?[]{}\\")
HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_*.")
MAX_ID = 4_294_967_294

_ALWAYS_BLOCKED_V4 = tuple(
    ipaddress.IPv4Network(n) for n in ("127.0.0.0/8", "169.254.0.0/16", "0.0.0.0/32")
)
_ALWAYS_BLOCKED_V6 = tuple(
    ipaddress.IPv6Network(n) for n in ("::/128", "::1/128", "fe80::/10")
) + tuple(
    ipaddress.IPv6Network(f"::ffff:{n.network_address}/{96 + n.prefixlen}")
    for n in _ALWAYS_BLOCKED_V4
)


def literal_problem(text: str) -> str | None:
    """``non-ASCII literal`` / ``embedded NUL byte`` detail for a selector, else None."""
    if "\x00" in text:
        return "contains an embedded NUL byte"
    if not text.isascii():
        return "contains a non-ASCII literal"
    return None


def is_supported_identity(value: str) -> bool:
    if value in ("", "sandbox", "root", "0"):
        return True
    return value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_ID and value[0] != "0"


def _has_dot_segment(path: str) -> bool:
    if "." not in path:
        return False
    segments = path.split("/")
    return "." in segments or ".." in segments


def is_supported_binary(path: str) -> bool:
    return (
        path.startswith("/")
        and "//" not in path
        and not _has_dot_segment(path)
        and not (set(path) & GLOB_META)
    )


def is_canonical_glob_path(path: str) -> bool:
    """A path glob the model reads: ``""``/``**`` (any), or ``/``-absolute and canonical."""
    if path in ("", "**"):
        return True
    return path.startswith("/") and "//" not in path and not _has_dot_segment(path)


def host_pattern_supported(host: str) -> bool:
    """The host-glob shapes of spec §9.2 (``unsupported_host_glob`` is the negation)."""
    if host in ("*", "**") or not host or set(host) - HOST_CHARS:
        return False
    labels = host.split(".")
    if any(label == "" for label in labels):
        return False
    total_min = len(labels) - 1
    for position, label in enumerate(labels):
        if label.startswith("-") or label.endswith("-"):
            return False
        if "**" in label and label != "**":
            return False
        if position > 0 and "*" in label and label not in ("*", "**"):
            return False
        minimum = max(1, len(label) - label.count("*"))
        if minimum > 63:
            return False
        total_min += minimum
    return total_min <= 253


def allowed_ip_network(
    entry: str,
) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """Parse an ``allowed_ips`` entry (a bare IP or a CIDR), or None if it is neither."""
    text = entry.strip()
    if not text or text != entry:
        return None
    address, slash, prefix = text.partition("/")
    if "%" in address or (slash and not (prefix.isascii() and prefix.isdigit())):
        return None  # Python-only forms (zone ids, netmasks) are not IPs or CIDRs (spec §5)
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def overlaps_always_blocked(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    if isinstance(net, ipaddress.IPv4Network):
        return any(net.overlaps(b) for b in _ALWAYS_BLOCKED_V4)
    return any(net.overlaps(b) for b in _ALWAYS_BLOCKED_V6)


def _query_supported(matcher: L7Matcher) -> bool:
    for key, value in (matcher.query or {}).items():
        if not isinstance(value, str):
            return False
        if literal_problem(key) or literal_problem(value):
            return False
        if set(value) & GLOB_META:
            return False
        if "*" in value and value != "*":
            return False
    return True


def _rest_matcher_problem(matcher: L7Matcher) -> bool:
    """True when an allow/deny matcher has a shape outside the REST model."""
    if not matcher.method:
        return True
    if any(
        field is not None
        for field in (
            matcher.command,
            matcher.operation_type,
            matcher.operation_name,
            matcher.fields,
            matcher.tool,
            matcher.params,
        )
    ):
        return True
    if not _query_supported(matcher):
        return True
    path = matcher.path or ""
    return not is_canonical_glob_path(path) or bool(set(path) & GLOB_META)


def _authority_outside_model(ep: EndpointSection) -> bool:
    if ep.tls not in (None, "", "terminate", "passthrough"):
        return True
    flags = (
        ep.allow_encoded_slash,
        ep.websocket_credential_rewrite,
        ep.request_body_credential_rewrite,
        ep.allow_uninspected_credentials,
    )
    if any(flag is True for flag in flags):
        return True
    extras = (
        ep.persisted_queries,
        ep.graphql_persisted_queries,
        ep.graphql_max_body_bytes,
        ep.credential_signing,
        ep.signing_service,
        ep.signing_region,
        ep.credential_binding,
        ep.json_rpc,
        ep.mcp,
    )
    return any(value is not None for value in extras)


def _effective_ports(ep: EndpointSection) -> tuple[int, ...]:
    if ep.ports:
        return tuple(ep.ports)
    return (ep.port,) if ep.port else ()


def _connection_problem(ep: EndpointSection, *, extended: bool) -> str | None:
    """Host, port and path: the connection an endpoint selects."""
    host = ep.host or ""
    path = ep.path or ""
    for label, text in (("endpoint host", host), ("endpoint path", path)):
        problem = literal_problem(text)
        if problem:
            return f"{label} {problem}"
    if not extended:
        if not host or not _effective_ports(ep) or (ep.port and ep.ports):
            return "has no unambiguous host and port"
    else:
        # Mainline: ``ports`` wins over ``port``; a hostless endpoint with allowed_ips
        # matches every host on its ports.
        if not _effective_ports(ep):
            return "has no port"
        if not host and not ep.allowed_ips:
            return "has no host (a hostless endpoint needs allowed_ips)"
    if host and not host_pattern_supported(host):
        if ":" in host:
            return "uses an IP-literal shape outside the DNS host model"
        return "endpoint host uses an unsupported pattern"
    if set(path) & GLOB_META:
        return "uses an unsupported glob"
    if not is_canonical_glob_path(path):
        return "uses a non-canonical endpoint path"
    return None


def _address_problem(ep: EndpointSection) -> str | None:
    host = ep.host or ""
    if "*" in host and set(host) <= set("0123456789.*"):
        return "uses an IP-literal wildcard whose address resolution is not modeled"
    for entry in ep.allowed_ips:
        net = allowed_ip_network(entry)
        if net is None:
            return f"has invalid allowed_ips entry '{entry}'"
        if overlaps_always_blocked(net):
            return f"has allowed_ips entry '{entry}' overlapping a runtime always-blocked range"
    return None


def rest_rules_problem(ep: EndpointSection, *, extended: bool) -> str | None:
    """The allow shape and matchers of an enforced REST endpoint."""
    has_access = ep.access is not None
    has_rules = bool(ep.rules)
    if extended and has_access == has_rules:
        # Both are refused by the runtime's validator (l7_validate), so nothing to read.
        which = "both access and rules" if has_access else "neither access nor rules"
        return f"has an unsupported REST allow shape ({which}: the runtime refuses it)"
    if has_access == has_rules or (
        has_access and not extended and ep.access not in ("read-only", "read-write", "full")
    ):
        return "has an unsupported REST allow shape"
    for kind, matchers in (("allow", [r.allow for r in ep.rules]), ("deny", ep.deny_rules)):
        for matcher in matchers:
            if matcher is None:
                return f"uses an unsupported REST {kind} rule"
            for part, text in (("method", matcher.method or ""), ("path", matcher.path or "")):
                problem = literal_problem(text)
                if problem:
                    return f"REST {kind} {part} {problem}"
        for matcher in matchers:
            if _rest_matcher_problem(matcher):
                return f"uses an unsupported REST {kind} rule"
    return None


def _endpoint_problem(ep: EndpointSection, *, extended: bool = False) -> str | None:
    host = ep.host or ""
    problem = _connection_problem(ep, extended=extended)
    if problem:
        return problem
    if not extended and _authority_outside_model(ep):
        return "uses authority outside the initial model"
    problem = _address_problem(ep)
    if problem:
        return problem
    protocol = (ep.protocol or "").lower()
    if protocol in ("", "tcp"):
        if protocol == "tcp" and _is_ipv4_literal(host):
            return "uses an IP literal with explicit TCP semantics"
        if extended:
            # Mainline reads access/rules/enforcement/path without a protocol and inspects
            # nothing for them (an L4 endpoint); its validator refuses deny_rules there.
            return "has deny_rules without a protocol" if ep.deny_rules else None
        if ep.enforcement is not None or ep.access is not None or ep.path is not None:
            return "mixes REST controls into L4 authority"
        if ep.rules or ep.deny_rules:
            return "mixes REST controls into L4 authority"
        return None
    if extended:
        if protocol == "rest" and ep.enforcement == "enforce" and ep.tls != "skip":
            return rest_rules_problem(ep, extended=True)
        return None  # read by prover.extended.reading: audit, tls skip, other protocols
    if protocol != "rest":
        return f"uses protocol '{ep.protocol}'; only L4 TCP and REST are modeled"
    if ep.enforcement != "enforce":
        return "uses REST without enforced inspection"
    return rest_rules_problem(ep, extended=False)


def _is_ipv4_literal(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def _is_rest(ep: EndpointSection) -> bool:
    return (ep.protocol or "").lower() == "rest"


def cross_endpoint_problem(policy: AuthoredPolicy) -> str | None:
    """The overlap checks of spec §5 step 4, in the reference's order.

    Two endpoints overlap when they share a port and have the same host or either host
    has a ``*``. Each check asks whether *some* overlapping pair differs in one attribute;
    the answer is found per port in linear time (a wildcard endpoint overlaps every
    endpoint on its port), so thousands of identical endpoints cost milliseconds, not
    the seconds an all-pairs scan takes.
    """
    endpoints = [ep for rule in policy.network_policies.values() for ep in rule.endpoints]
    if _some_overlapping_pair_differs(endpoints, lambda ep: tuple(ep.allowed_ips)):
        return (
            "has overlapping endpoints with different allowed_ips; "
            "runtime first-endpoint selection is not modeled"
        )
    without_ips = [ep for ep in endpoints if not ep.allowed_ips]
    if _some_overlapping_pair_differs(without_ips, _is_wildcard):
        return (
            "has overlapping exact and wildcard endpoints with different implicit "
            "destination IP modes"
        )
    if _some_overlapping_pair_differs(endpoints, _is_rest):
        return (
            "contains overlapping L4 and REST endpoints whose inspection selection is not modeled"
        )
    return None


def _some_overlapping_pair_differs(
    endpoints: list[EndpointSection], attribute: Callable[[EndpointSection], Hashable]
) -> bool:
    """Is there a pair of overlapping endpoints whose ``attribute`` values differ?

    Per port: if a wildcard endpoint is there, it overlaps every other endpoint on that
    port, so some overlapping pair differs exactly when the values on the port are not
    all equal; otherwise only endpoints with the same host overlap.
    """
    by_port: dict[int, list[EndpointSection]] = {}
    for ep in endpoints:
        for port in set(_effective_ports(ep)):
            by_port.setdefault(port, []).append(ep)
    for on_port in by_port.values():
        if any(_is_wildcard(ep) for ep in on_port):
            if len({attribute(ep) for ep in on_port}) > 1:
                return True
            continue
        values_by_host: dict[str, set[Hashable]] = {}
        for ep in on_port:
            values = values_by_host.setdefault((ep.host or "").lower(), set())
            values.add(attribute(ep))
            if len(values) > 1:
                return True
    return False


def _is_wildcard(ep: EndpointSection) -> bool:
    return "*" in (ep.host or "")


def shape_problem(
    policy: AuthoredPolicy,
    *,
    extended: bool = False,
    known_identity: Callable[[str, str], bool] | None = None,
) -> str | None:
    """The first reason this policy is outside the model, or None if it is inside.

    ``extended`` is the extended analysis's model (:mod:`prover.extended`), which reads
    middlewares, other protocols, audit mode, ``tls: skip``, hostless endpoints and
    overlapping endpoints itself; what stays here is what neither model covers.
    """
    return next(shape_problems(policy, extended=extended, known_identity=known_identity), None)


def shape_problems(
    policy: AuthoredPolicy,
    *,
    extended: bool = False,
    known_identity: Callable[[str, str], bool] | None = None,
    omit: Collection[tuple[str, int]] = (),
) -> Iterator[str]:
    """Every reason this policy is outside the model, in :func:`shape_problem`'s order
    (lazily: the reference reports only the first). The extended model names the binary
    and the endpoint (by its index as written), so that an agent can fix them all in one
    round. ``omit`` (rule key, endpoint index) leaves endpoints out, and a rule with
    endpoints that are all left out (a check has decided them already)."""
    process = policy.process
    for field, value in (
        ("run_as_user", (process.run_as_user or "") if process else ""),
        ("run_as_group", (process.run_as_group or "") if process else ""),
    ):
        # A name the environment evidence resolves (``known_identity``) is read too.
        if not is_supported_identity(value) and not (
            known_identity is not None and known_identity(value, field)
        ):
            yield f"uses unsupported process identity '{value}'"
    if policy.network_middlewares and not extended:
        yield "uses network middleware controls"
    if policy.cedar_policy is not None:
        yield "uses Cedar policies, which the containment model does not cover"
    for key, rule in policy.network_policies.items():
        if omit and rule.endpoints and all((key, i) in omit for i in range(len(rule.endpoints))):
            continue
        for position, binary in enumerate(rule.binaries):
            problem = literal_problem(binary.path)
            if problem:
                yield f"rule '{key}' binary path {problem}"
            elif not is_supported_binary(binary.path) and not (extended and binary.path == "**"):
                detail = f" ('{binary.path}' at binaries[{position}])" if extended else ""
                yield f"rule '{key}' uses an unsupported binary{detail}"
        for position, endpoint in enumerate(rule.endpoints):
            if omit and (key, position) in omit:
                continue
            problem = _endpoint_problem(endpoint, extended=extended)
            if problem:
                where = f" (endpoint {position})" if extended else ""
                yield f"rule '{key}' {problem}{where}"
    if not extended:
        problem = cross_endpoint_problem(policy)
        if problem is not None:
            yield problem
