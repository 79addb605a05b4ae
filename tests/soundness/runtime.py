"""A plain-Python model of what the OpenShell runtime lets a sandbox do on the network.

Written from the runtime facts (the sandbox proxy and its Rego policy, as recorded in the
project notes), independently of :mod:`prover.extended`, so that the soundness campaign
can judge the extended analysis's verdicts against something it does not share. It
reuses only the reference model's primitives (host/path/binary globs, method and query
matching, address classes), which the reference campaign already checks.

Per connection (host, port, destination address, binary, ancestor):

* rules whose binaries match (exe or ancestor; every rule with identity off) and that
  have an endpoint matching host and port make the connection allowed; a hostless
  endpoint with ``allowed_ips`` matches every host on its ports;
* the *extended configs* are the matching endpoints with ``protocol`` (not ``tcp``),
  ``tls`` or ``allowed_ips``, over matching rules in key order (sorted: inferred from the
  runtime's ordered sets; declaration order is offered as another :class:`Selection`),
  then declaration order. The first one supplies ``tls`` and ``allowed_ips``;
* the destination address is checked by the first applicable of: trusted gateway alias,
  the first config's ``allowed_ips``, an IP-literal request host, an exact declared host,
  public-only;
* ``tls: skip`` on the first config: a CONNECT tunnel is raw, nothing inspected, while
  plain HTTP through the forward proxy still meets the L7 route; otherwise the L7
  route is every config with a known protocol; an empty route means raw TCP.

Per request on an inspected connection the config whose ``path`` selector matches and is
most specific (ties: the last, or the first as another selection) picks the parser and
enforce vs audit; no match refuses (with one config no selector check happens). REST
allow is the union of the allow rules of every matching endpoint (binary, host, port,
selector) including rules written without a protocol; deny rules of matching endpoints
block only when the selected config enforces; audit forwards every request. A REST
rule without ``path`` or with a query value ``""`` never matches, and methods compare
upper-cased on both sides (``opa.rs``, ``sandbox-policy.rego``). An opaque
protocol message (MCP, JSON-RPC, GraphQL, websocket, SQL ...) is modelled as "a message
that endpoint configuration X permits": it passes a raw connection, or an inspected one
whose selected config is identical to X. Non-HTTP bytes on an inspected connection are
refused. Middlewares only restrict: a matching entry filters inspected HTTP traffic by a
deterministic function of (middleware, host), and a ``fail_closed`` one refuses
uninspectable traffic (raw tunnels, ``tls: skip``).
"""

from __future__ import annotations

import ipaddress
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product
from typing import Literal

from prover.concrete.glob import binary_matches, host_matches, path_matches
from prover.concrete.ip import (
    gateway_address_ok,
    in_network,
    is_gateway_alias,
    is_hard_blocked,
    is_internal,
    same_address,
)
from prover.concrete.network import method_matches
from prover.concrete.query import allow_query_matches, deny_query_matches
from prover.policy.model import PRESET_METHODS, HttpRule, IPAddress, IPNetwork
from prover.policy.normalize import _http_rule
from prover.policy.schema import AuthoredPolicy, EndpointSection, L7Matcher

CONTROL_PORTS = frozenset({2379, 2380, 6443, 10250, 10255})
#: Protocols the runtime's L7 parser knows (anything else drops out of the route).
L7_PROTOCOLS = frozenset({"rest", "websocket", "graphql", "jsonrpc", "json-rpc", "mcp", "sql"})
_CONNECTION_FIELDS = ("host", "port", "ports", "allowed_ips")


@dataclass(frozen=True)
class Selection:
    """A choice the runtime makes that the model cannot pin down."""

    rule_order: Literal["sorted", "declared"] = "sorted"
    tie: Literal["last", "first"] = "last"


SELECTIONS: tuple[Selection, ...] = tuple(
    Selection(order, tie) for order, tie in product(("sorted", "declared"), ("last", "first"))
)


@dataclass(frozen=True)
class Connection:
    host: str
    port: int
    ip: IPAddress
    binary: str | None = None
    ancestor: str | None = None
    identity: bool = False
    trusted_gateway: bool = False


@dataclass(frozen=True)
class Raw:
    """Non-HTTP bytes (or anything) on the connection, as a raw tunnel carries them."""

    conn: Connection


@dataclass(frozen=True)
class Http:
    conn: Connection
    method: str
    path: str
    query: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Non-empty: the request relies on what the proxy adds per configuration (credential
    #: injection, signing, encoded slashes), here the fingerprint of those fields, which
    #: the selected configuration must carry identically.
    extras: str = ""
    #: Sent as plain HTTP through the forward proxy (``GET http://host/...``) rather than
    #: inside a CONNECT tunnel: inspected by the L7 route even under ``tls: skip``.
    forward: bool = False


@dataclass(frozen=True)
class Message:
    """A message of an opaque protocol that endpoint configuration ``config`` permits."""

    conn: Connection
    path: str
    config: str


Action = Raw | Http | Message


@dataclass(frozen=True)
class RtEndpoint:
    rule: str
    position: int  # rule position in declaration order
    index: int
    host: str  # lower case; "" = hostless
    ports: tuple[int, ...]
    allowed_ips: tuple[IPNetwork, ...] | None  # None: an invalid list (fails every use)
    has_allowed_ips: bool
    protocol: str
    tls_skip: bool
    extended: bool
    enforce: bool
    path: str
    allow_rules: tuple[HttpRule, ...]
    deny_rules: tuple[HttpRule, ...]
    config: str  # fingerprint of everything but the connection fields
    extras: str  # fingerprint of the credential and encoded-slash fields ("" if none)

    def matches(self, conn: Connection) -> bool:
        if conn.port not in self.ports:
            return False
        if not self.host:
            return self.has_allowed_ips
        return host_matches(self.host, conn.host.lower())

    @property
    def in_route(self) -> bool:
        return self.protocol in L7_PROTOCOLS

    @property
    def opaque(self) -> bool:
        """Traffic the model cannot parse: a non-REST protocol."""
        return self.in_route and self.protocol != "rest"

    @property
    def carries_messages(self) -> bool:
        return self.opaque


@dataclass(frozen=True)
class RtRule:
    key: str
    binaries: tuple[str, ...]
    endpoints: tuple[RtEndpoint, ...]


@dataclass(frozen=True)
class RtPolicy:
    rules: tuple[RtRule, ...]  # declaration order
    middlewares: tuple[tuple[str, tuple[str, ...], tuple[str, ...], bool], ...]


def fingerprint(section: EndpointSection) -> str:
    data = section.model_dump(exclude_none=True, exclude=set(_CONNECTION_FIELDS))
    data["protocol"] = (section.protocol or "").lower()
    return json.dumps(data, sort_keys=True, default=str)


_EXTRA_FIELDS = (
    "allow_encoded_slash",
    "allow_uninspected_credentials",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "credential_signing",
    "signing_service",
    "signing_region",
    "credential_binding",
)


def extras_fingerprint(section: EndpointSection) -> str:
    data = section.model_dump(exclude_none=True, include=set(_EXTRA_FIELDS))
    data = {k: value for k, value in data.items() if value is not False}
    return json.dumps(data, sort_keys=True, default=str) if data else ""


def _networks(raw: tuple[str, ...]) -> tuple[IPNetwork, ...] | None:
    found: list[IPNetwork] = []
    for entry in raw:
        try:
            net = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            return None
        if is_hard_blocked(net.network_address) or is_hard_blocked(net.broadcast_address):
            return None
        found.append(net)
    return tuple(found)


def _never_matches(matcher: L7Matcher | None) -> bool:
    """A REST rule OpenShell's engine never matches: without ``path`` (``opa.rs`` sends
    an allow rule's as ``""``, which ``path_matches`` never matches, and a deny rule's not
    at all) or with a query value ``""`` (``l7_matchers_to_json`` drops the empty glob;
    ``query_value_matches`` needs a non-empty one)."""
    if matcher is None:
        return False
    return not matcher.path or "" in (matcher.query or {}).values()


def _rules(section: EndpointSection) -> tuple[HttpRule, ...]:
    if section.access is not None:
        methods = PRESET_METHODS.get(section.access, ())
        return tuple(HttpRule(method=m, path="**", index=i) for i, m in enumerate(methods))
    found = []
    for index, entry in enumerate(section.rules):
        if _never_matches(entry.allow):
            continue
        try:
            found.append(_http_rule(entry.allow, index, "allow"))
        except ValueError:
            continue  # a non-REST matcher grants no REST request
    return tuple(found)


def _denies(section: EndpointSection) -> tuple[HttpRule, ...]:
    found = []
    for index, matcher in enumerate(section.deny_rules):
        if _never_matches(matcher):
            continue
        try:
            found.append(_http_rule(matcher, index, "deny"))
        except ValueError:
            continue
    return tuple(found)


def runtime_policy(policy: AuthoredPolicy) -> RtPolicy:
    rules = []
    for position, (key, section) in enumerate(policy.network_policies.items()):
        endpoints = []
        for index, ep in enumerate(section.endpoints):
            protocol = (ep.protocol or "").lower()
            ports = tuple(ep.ports) if ep.ports else ((ep.port,) if ep.port else ())
            endpoints.append(
                RtEndpoint(
                    rule=key,
                    position=position,
                    index=index,
                    host=(ep.host or "").lower(),
                    ports=ports,
                    allowed_ips=_networks(tuple(ep.allowed_ips)),
                    has_allowed_ips=bool(ep.allowed_ips),
                    protocol=protocol,
                    tls_skip=ep.tls == "skip",
                    extended=(protocol not in ("", "tcp")) or bool(ep.allowed_ips) or bool(ep.tls),
                    enforce=ep.enforcement == "enforce",
                    path=ep.path or "",
                    allow_rules=_rules(ep),
                    deny_rules=_denies(ep),
                    config=fingerprint(ep),
                    extras=extras_fingerprint(ep),
                )
            )
        binaries = tuple(b.path for b in section.binaries)
        rules.append(RtRule(key, binaries, tuple(endpoints)))
    middlewares = tuple(
        (
            name,
            tuple(mw.endpoints.include) if mw.endpoints else (),
            tuple(mw.endpoints.exclude) if mw.endpoints else (),
            mw.on_error != "fail_open",
        )
        for name, mw in sorted(policy.network_middlewares.items())
    )
    return RtPolicy(tuple(rules), middlewares)


# -- connection ---------------------------------------------------------------------------
def _binary_ok(rule: RtRule, conn: Connection) -> bool:
    if not conn.identity:
        return True
    who = [b for b in (conn.binary, conn.ancestor) if b is not None]
    return any(binary_matches(g, b) for g in rule.binaries for b in who)


@dataclass(frozen=True)
class _Plan:
    matching: tuple[RtEndpoint, ...]  # over binary-matching rules, in selection order
    configs: tuple[RtEndpoint, ...]


def _plan(policy: RtPolicy, conn: Connection, selection: Selection) -> _Plan | None:
    rules = [r for r in policy.rules if _binary_ok(r, conn)]
    if selection.rule_order == "sorted":
        rules.sort(key=lambda r: r.key)
    matching = tuple(e for r in rules for e in r.endpoints if e.matches(conn))
    if not matching:
        return None
    return _Plan(matching, tuple(e for e in matching if e.extended))


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _address_ok(plan: _Plan, conn: Connection) -> bool:
    ip, port = conn.ip, conn.port
    literal = _literal(conn.host)
    if literal is not None and not same_address(ip, literal):
        return False  # an IP-literal host cannot resolve to another address
    if conn.trusted_gateway and is_gateway_alias(conn.host):
        return gateway_address_ok(ip, port)
    first = plan.configs[0] if plan.configs else None
    ordinary = not is_hard_blocked(ip) and port not in CONTROL_PORTS
    if first is not None and first.has_allowed_ips:
        nets = first.allowed_ips
        return nets is not None and ordinary and any(in_network(ip, n) for n in nets)
    if literal is not None and not is_hard_blocked(literal):
        return ordinary and same_address(ip, literal)
    host = conn.host.lower()
    if any(e.host == host and "*" not in e.host for e in plan.matching):
        return ordinary
    return not is_internal(ip)


def _middleware_entries(policy: RtPolicy, host: str) -> list[tuple[str, bool]]:
    host = host.lower()
    return [
        (name, closed)
        for name, include, exclude, closed in policy.middlewares
        if any(host_matches(p.lower(), host) for p in include)
        and not any(host_matches(p.lower(), host) for p in exclude)
    ]


def _filter_passes(name: str, host: str) -> bool:
    """An identical middleware is the same deterministic filter on both sides."""
    return zlib.crc32(f"{name}\0{host.lower()}".encode()) % 5 != 0


def _inspected_ok(policy: RtPolicy, host: str, filters: bool = True) -> bool:
    if not filters:
        return True
    return all(_filter_passes(name, host) for name, _ in _middleware_entries(policy, host))


def _uninspectable_ok(policy: RtPolicy, host: str) -> bool:
    return not any(closed for _, closed in _middleware_entries(policy, host))


def _select(plan: _Plan, path: str, selection: Selection) -> RtEndpoint | None:
    route = [e for e in plan.configs if e.in_route]
    if len(route) == 1:
        return route[0]
    fitting = [e for e in route if path_matches(e.path, path)]
    if not fitting:
        return None
    best = max(len(e.path.replace("*", "")) for e in fitting)
    tops = [e for e in fitting if len(e.path.replace("*", "")) == best]
    return tops[-1] if selection.tie == "last" else tops[0]


def _rest_allows(plan: _Plan, action: Http) -> tuple[bool, bool]:
    query: dict[str, tuple[str, ...]] = {}
    for key, values in action.query:
        query[key] = query.get(key, ()) + tuple(values)
    allowed = denied = False
    for e in plan.matching:
        if e.protocol not in ("", "rest") or not path_matches(e.path, action.path):
            continue
        for r in e.allow_rules:
            if (
                method_matches(r.method, action.method, engine=True)
                and path_matches(r.path, action.path)
                and allow_query_matches(r.query, query)
            ):
                allowed = True
        if e.protocol == "rest":
            for r in e.deny_rules:
                if (
                    method_matches(r.method, action.method, engine=True)
                    and path_matches(r.path, action.path)
                    and deny_query_matches(r.query, query)
                ):
                    denied = True
    return allowed, denied


def allowed_under(
    policy: RtPolicy, action: Action, selection: Selection, *, filters: bool = True
) -> bool:
    """Whether the runtime lets ``action`` through under ``selection``; ``filters=False``
    lets every middleware pass inspected traffic (what a policy grants before them)."""
    conn = action.conn
    plan = _plan(policy, conn, selection)
    if plan is None or not _address_ok(plan, conn):
        return False
    first = plan.configs[0] if plan.configs else None
    route = [e for e in plan.configs if e.in_route]
    forward = isinstance(action, Http) and action.forward
    skip = first is not None and first.tls_skip and not forward
    if skip or not route:
        if isinstance(action, Http) and action.extras:
            return False  # nothing is added to uninspected traffic
        if isinstance(action, Http) and not skip:
            return _inspected_ok(policy, conn.host, filters)  # plaintext HTTP: middlewares
        return _uninspectable_ok(policy, conn.host)
    if isinstance(action, Raw):
        return False  # "Unsupported tunnel protocol for L7-inspected endpoint"
    chosen = _select(plan, action.path, selection)
    if chosen is None:
        return False
    if isinstance(action, Message):
        # Rego allows a message only on an endpoint whose path selector matches (enforce);
        # audit forwards it anyway.
        on_path = path_matches(chosen.path, action.path)
        return (
            action.config == chosen.config
            and (on_path or not chosen.enforce)
            and _inspected_ok(policy, conn.host, filters)
        )
    if chosen.opaque:
        return False  # a plain HTTP request is not a message this model can read
    if action.extras and action.extras != chosen.extras:
        return False
    allowed, denied = _rest_allows(plan, action)
    if chosen.enforce and (denied or not allowed):
        return False
    return _inspected_ok(policy, conn.host, filters)


def allowed_some(policy: RtPolicy, action: Action) -> bool:
    return any(allowed_under(policy, action, s) for s in SELECTIONS)


def allowed_every(policy: RtPolicy, action: Action, *, filters: bool = True) -> bool:
    return all(allowed_under(policy, action, s, filters=filters) for s in SELECTIONS)


def opaque_configs(policy: RtPolicy) -> Iterator[RtEndpoint]:
    for rule in policy.rules:
        yield from (e for e in rule.endpoints if e.carries_messages)
