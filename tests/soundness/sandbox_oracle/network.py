"""What the proxy lets one process send, from the engine's data and the Rego.

Data as ``proto_to_opa_data_json`` (``openshell-supervisor-network/src/opa.rs``) builds
it: an allow rule always carries ``method`` and ``path`` (``""`` when absent), a deny
rule only the ones set; every exact binary gains the target of a symlink in its last
component (``resolve_binary_in_container``); access presets expand to rules
(``expand_access_presets`` / ``access_preset_rules``, ``l7/mod.rs``).

Decisions as ``data/sandbox-policy.rego`` takes them (``endpoint_allowed``,
``binary_allowed``, ``allow_request``, ``deny_request``, ``method_matches``,
``path_matches``, ``query_params_match``, ``deny_query_params_match``,
``_matching_endpoint_configs``, ``exact_declared_endpoint_host``), with the proxy's use
of them (``proxy.rs``): ``query_l7_route_snapshot`` keeps the configurations
``parse_l7_config`` reads as L7; with none the connection is raw L4 and any bytes pass;
with some, ``select_l7_config_for_path`` picks, among those whose ``path`` matches, the
most specific (``max_by_key``: the last of equals), no match is a 403, and a denied
request is forwarded when that configuration's enforcement is not ``enforce`` (audit).
Destination addresses follow ``build_validation_plan`` / ``filter_resolved_addresses``
(``proxy/destination.rs``): an exact declared host may reach internal addresses but not
always-blocked ones nor control-plane ports; otherwise only public addresses.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from tests.soundness.sandbox_oracle.errors import Unmodelled
from tests.soundness.sandbox_oracle.globs import glob_match
from tests.soundness.sandbox_oracle.image import Image, join, parent
from tests.soundness.sandbox_oracle.policy import Endpoint, Matcher, Policy

BLOCKED_CONTROL_PLANE_PORTS = (2379, 2380, 6443, 10250, 10255)
_READ_ONLY = ("GET", "HEAD", "OPTIONS")
PRESETS = {
    "read-only": [Matcher(m, "**") for m in _READ_ONLY],
    "read-write": [Matcher(m, "**") for m in (*_READ_ONLY, "POST", "PUT", "PATCH")],
    "full": [Matcher("*", "**")],
}


@dataclass(frozen=True)
class Request:
    """One thing a process sends: ``kind`` is ``connect`` (the upstream is dialled),
    ``raw`` (bytes that are not HTTP) or ``http`` (one request)."""

    exe: str
    ancestors: tuple[str, ...]
    host: str
    port: int
    ip: str
    kind: str
    method: str = ""
    path: str = ""
    query: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class DataRule:
    key: str
    endpoints: tuple[Endpoint, ...]
    binaries: tuple[str, ...]


def _normalize_lexical(path: str) -> str:
    """``normalize_path`` in ``opa.rs``: ``..`` pops, ``.`` drops."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
        else:
            out.append(part)
    return "/" + "/".join(out)


def resolve_binary_in_container(path: str, image: Image) -> str | None:
    """The added entry for a policy binary, or None (``resolve_binary_in_container``)."""
    if "*" in path:
        return None
    resolved = path
    for _ in range(40):
        physical = image.walk(resolved, follow_last=False)
        if physical is None or not image.exists_physical(physical):
            return None  # symlink_metadata fails: matched literally
        if not image.lstat_is_symlink(resolved):
            break
        target = image.readlink(resolved) or ""
        if target.startswith("/"):
            resolved = target
        else:
            resolved = _normalize_lexical(join(parent(resolved), target))
    return None if resolved == path else resolved


def build_data(policy: Policy, image: Image) -> list[DataRule]:
    rules = []
    for rule in policy.rules:
        binaries: list[str] = []
        for path in rule.binaries:
            binaries.append(path)
            extra = resolve_binary_in_container(path, image)
            if extra is not None:
                binaries.append(extra)
        endpoints = []
        for ep in rule.endpoints:
            protocol = ep.protocol or "rest"
            if ep.access and not ep.rules:
                if protocol in ("graphql", "websocket", "mcp"):
                    raise Unmodelled(f"access preset for {protocol}")
                # An unknown preset is ignored with a warning: no rules at all.
                ep = Endpoint(**{**ep.__dict__, "rules": tuple(PRESETS.get(ep.access, ()))})
            endpoints.append(ep)
        rules.append(DataRule(rule.key, tuple(endpoints), tuple(binaries)))
    return sorted(rules, key=lambda r: r.key)


def _host_matches(ep: Endpoint, host: str) -> bool:
    if "*" in ep.host:
        return glob_match(ep.host.lower(), ".", host.lower())
    return ep.host.lower() == host.lower()


def endpoint_matches(ep: Endpoint, req: Request) -> bool:
    """``endpoint_allowed`` / ``endpoint_matches_request`` (hostless endpoints need
    ``allowed_ips``, which the oracle does not read)."""
    return bool(ep.host) and _host_matches(ep, req.host) and req.port in ep.ports


def binary_allowed(rule: DataRule, req: Request, identity_required: bool) -> bool:
    if not identity_required:
        return True
    for b in rule.binaries:
        if "*" not in b:
            if b == req.exe or b in req.ancestors:
                return True
        elif any(glob_match(b, "/", p) for p in (req.exe, *req.ancestors)):
            return True
    return False


def method_matches(actual: str, expected: str) -> bool:
    if expected == "*":
        return True
    if actual.upper() == expected.upper():
        return True
    return actual.upper() == "HEAD" and expected.upper() == "GET"


def path_matches(actual: str, pattern: str) -> bool:
    return pattern == "**" or glob_match(pattern, "/", actual)


def _value_matches(value: str, matcher: tuple[str, tuple[str, ...]]) -> bool:
    """``query_value_matches`` on the matcher ``l7_matchers_to_json`` leaves."""
    how, patterns = matcher
    live = [p for p in patterns if p] if how == "glob" else list(patterns)
    return any(glob_match(p, "", value) for p in live)


def _allow_query(req: Request, m: Matcher) -> bool:
    """``query_params_match``: each key present, non-empty, every value matching."""
    params = dict(req.query)
    for key, matcher in m.query:
        values = params.get(key)
        if not values or not all(_value_matches(v, matcher) for v in values):
            return False
    return True


def _deny_query(req: Request, m: Matcher) -> bool:
    """``deny_query_params_match``: each key present, and some value matching (or none)."""
    params = dict(req.query)
    for key, matcher in m.query:
        if key not in params:
            return False
        values = params[key]
        if values and not any(_value_matches(v, matcher) for v in values):
            return False
    return True


def _ep_path_matches(ep: Endpoint, path: str) -> bool:
    return ep.path == "" or path_matches(path, ep.path)


def config_path_matches(pattern: str, path: str) -> bool:
    """``openshell_core::endpoint_path::matches`` (``openshell-core/src/endpoint_path.rs``),
    which ``select_l7_config_for_path`` uses, unlike the Rego: ``/v1/**`` also matches
    ``/v1``, the prefix before ``/**`` is literal, and a glob's ``*`` crosses ``/``
    (the ``glob`` crate's default); a ``**`` that is not a whole component is invalid."""
    if pattern == path or pattern in ("", "**", "/**"):
        return True
    if pattern.endswith("/**"):
        prefix = pattern[: -len("/**")]
        return path == prefix or path.startswith(prefix + "/")
    if any("**" in part and part != "**" for part in pattern.split("/")):
        return False
    return glob_match(pattern, "", path)


def _allows_http(ep: Endpoint, req: Request) -> bool:
    """``request_allowed_for_endpoint`` (REST): method, path and query of one rule."""
    return any(
        method_matches(req.method, r.method)
        and path_matches(req.path, r.path)
        and _allow_query(req, r)
        for r in ep.rules
    )


def _denies_http(ep: Endpoint, req: Request) -> bool:
    """``request_denied_for_endpoint``: a deny rule without method or path never fires."""
    return any(
        bool(d.method)
        and bool(d.path)
        and method_matches(req.method, d.method)
        and path_matches(req.path, d.path)
        and _deny_query(req, d)
        for d in ep.deny_rules
    )


def _extended(ep: Endpoint) -> bool:
    """``endpoint_has_extended_config``."""
    return bool(ep.protocol) and ep.protocol.lower() != "tcp"


def _specificity(path: str) -> int:
    return sum(1 for ch in path if ch != "*")


def _destination_ok(data: list[DataRule], req: Request, identity_required: bool) -> bool:
    ip = ipaddress.ip_address(req.ip)
    exact = any(
        binary_allowed(rule, req, identity_required)
        and any(
            "*" not in ep.host and ep.host.lower() == req.host.lower() and req.port in ep.ports
            for ep in rule.endpoints
        )
        for rule in data
    )
    if exact:
        blocked = ip.is_loopback or ip.is_link_local or ip.is_unspecified
        return not blocked and req.port not in BLOCKED_CONTROL_PLANE_PORTS
    return ip.is_global


def canonical_path(path: str) -> str:
    """``canonicalize_request_target`` (``l7/path.rs``) for plain paths: ``/`` plus the
    non-empty segments joined (no trailing ``/``); ``.``, ``..`` and percent-escapes
    are unmodelled."""
    if not path.startswith("/") or "%" in path or "?" in path or "#" in path:
        raise Unmodelled(f"request path {path!r} needs canonicalisation")
    segments = [s for s in path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise Unmodelled(f"request path {path!r} has dot segments")
    return "/" + "/".join(segments)


def decide(data: list[DataRule], req: Request, identity_required: bool) -> bool:
    """Does the sandbox let ``req`` through (audit counts as through)?"""
    if req.kind == "http":
        if not req.method.isupper() or not req.method.isalpha():
            # proxy.rs recognises a request only by an upper-case standard method.
            raise Unmodelled(f"request method {req.method!r}")
        canonical = canonical_path(req.path)
        if canonical != req.path:
            req = Request(**{**req.__dict__, "path": canonical})
    if "*" in req.host:
        return False  # no DNS name contains '*': nothing connects to a pattern
    try:
        ipaddress.ip_address(req.host)
    except ValueError:
        pass
    else:
        raise Unmodelled(f"an IP-literal host {req.host!r} (implicit allowed_ips)")
    matched = [
        r
        for r in data
        if any(endpoint_matches(ep, req) for ep in r.endpoints)
        and binary_allowed(r, req, identity_required)
    ]
    if not matched:
        return False
    if not _destination_ok(data, req, identity_required):
        return False
    configs = [
        ep for r in matched for ep in r.endpoints if endpoint_matches(ep, req) and _extended(ep)
    ]
    l7 = [ep for ep in configs if ep.protocol.lower() in ("rest",)]
    if any(ep.protocol.lower() not in ("rest",) for ep in configs):
        raise Unmodelled("an L7 protocol other than rest")
    if req.kind == "connect":
        return True
    if not l7:
        return True  # raw L4: any bytes pass
    if req.kind == "raw":
        return False
    candidates = [ep for ep in l7 if config_path_matches(ep.path, req.path)]
    if not candidates:
        return False
    best = max(_specificity(ep.path) for ep in candidates)
    chosen = [ep for ep in candidates if _specificity(ep.path) == best][-1]
    allowed = any(
        _allows_http(ep, req)
        for r in matched
        for ep in r.endpoints
        if endpoint_matches(ep, req) and _ep_path_matches(ep, req.path)
    )
    denied = any(
        _denies_http(ep, req)
        for r in matched
        for ep in r.endpoints
        if endpoint_matches(ep, req) and _ep_path_matches(ep, req.path)
    )
    if allowed and not denied:
        return True
    return chosen.enforcement != "enforce"


__all__ = ["Request", "build_data", "decide"]
