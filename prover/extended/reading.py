"""One authored policy read as two reference-model policies that bound what the runtime
lets it do, plus the endpoints whose authority no reference-model policy can express.

The runtime facts this rests on (NVIDIA/OpenShell, sandbox proxy and its Rego policy):

* a connection is allowed when some rule matching the binary has an endpoint matching
  host and port; requests are allowed by the union of the allow rules of every matching
  endpoint and blocked by any matching deny rule (the reference model, spec §9.3);
* but *how* a connection is handled comes from the matching endpoints that carry a
  configuration (a protocol, ``tls`` or ``allowed_ips``): the first one's
  ``allowed_ips`` and ``tls`` apply, and per request the endpoint whose ``path`` is most
  specific picks the parser and enforce vs audit. An L4 endpoint beside an inspected one
  therefore does not give raw access, and two different configurations on one connection
  make the answer depend on that selection;
* ``enforcement`` other than ``enforce`` (absent included) is audit: every request on
  the endpoint's path passes and deny rules do not block; ``tls: skip`` forwards a
  CONNECT tunnel without terminating TLS, so nothing inside it is inspected, while the
  forward proxy still inspects plain-HTTP requests to the endpoint by its protocol;
* ``access``/``rules`` without a protocol inspect nothing (an L4 endpoint); an unknown
  ``access`` preset allows nothing.

Per endpoint (see :func:`_reading`):

===================================  ==============================  ====================
endpoint                             upper bound (candidate)          lower bound
===================================  ==============================  ====================
L4, REST fields without protocol     L4                               L4
REST, ``enforcement: enforce``       REST as written                  REST as written
REST audit (any other enforcement)   REST: any method and path        the same
``tls: skip`` with a protocol        L4                               as inspected
websocket, MCP, JSON-RPC, GraphQL,   addresses only (``ip_only``);    nothing
SQL, ``allow_encoded_slash``, ...    its traffic is an *opaque*
                                     grant (:class:`Opaque`)
===================================  ==============================  ====================

Credential features (binding, signing, rewriting) add an opaque grant on top: what the
proxy injects is covered only by the same configuration in the boundary.

Overlaps: two endpoints whose ports meet and whose host globs match a common host
(:func:`prover.extended.hosts.hosts_intersect`) and whose handling differs (see
:func:`_conflict`) depend on the runtime's selection. The upper bound keeps both but
drops their deny rules (the other one may be chosen, and audit does not deny); the lower
bound keeps only their deny rules (``deny_only``), except that an unconfigured L4
endpoint beside a single configured one loses only its own grants.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from heapq import merge
from typing import TYPE_CHECKING, Literal

from prover.extended.hosts import ANY_HOST, hosts_intersect
from prover.policy.facts import fact
from prover.policy.model import PRESET_METHODS, Endpoint, HttpRule, Policy, Rule, Shadow
from prover.policy.normalize import (
    _allowed_ips,
    filesystem_of,
    inert_rule,
    normalize_endpoint,
    process_fields,
)
from prover.policy.shape import rest_rules_problem

if TYPE_CHECKING:
    from prover.policy.schema import AuthoredPolicy, EndpointSection

Channel = Literal["any", "tunnel", "forward"]
Slot = tuple[str, int]
"""An endpoint's place: its rule's key and its index in the rule."""

CONTROL_PORTS = frozenset({2379, 2380, 6443, 10250, 10255})
"""Refused for exact hosts and ``allowed_ips`` but not for wildcard hosts (spec §9.4)."""

_CREDENTIAL_FIELDS = (
    "credential_binding",
    "credential_signing",
    "signing_service",
    "signing_region",
    "request_body_credential_rewrite",
    "websocket_credential_rewrite",
    "allow_uninspected_credentials",
)
_CONNECTION_FIELDS = {"host", "port", "ports", "allowed_ips"}


#: The opaque key of an endpoint that grants only the connection itself.
CONNECTION_ONLY = "connection only"


@dataclass(frozen=True, slots=True)
class Opaque:
    """An endpoint grant the reference model cannot express, checked on its own.

    ``connection`` is the endpoint as an L4 endpoint (host, ports, ``allowed_ips``) in a
    one-endpoint rule with the original binaries. A candidate grant of class ``key`` is
    covered by boundary endpoints of the same ``key`` and, when ``l4_covers``, by the
    boundary's unconditional L4 endpoints (raw access carries any protocol).
    """

    rule_key: str
    endpoint_index: int
    binaries: tuple[str, ...]
    connection: Endpoint
    key: str
    construct: str
    l4_covers: bool
    grants_something: bool
    in_conflict: bool = False


@dataclass(frozen=True)
class Reading:
    """``upper`` allows at least what the runtime allows, ``lower`` at most."""

    upper: Policy
    lower: Policy
    opaque: tuple[Opaque, ...]
    constructs: tuple[str, ...]
    conflicts: tuple[str, ...]
    #: ``(include, exclude)`` host patterns of every ``fail_closed`` middleware entry:
    #: uninspectable traffic (raw tunnels, ``tls: skip``) to a host they select is refused.
    fail_closed: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    #: host selectors of middlewares only this policy has, as a candidate: they may
    #: refuse anything to the hosts they select, so no witness is sure there
    restricting: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    #: which way in this reading covers (see :func:`read_policy`)
    channel: Channel = "any"
    #: a ``tls: skip`` endpoint makes the two ways in differ
    skip: bool = False
    source: AuthoredPolicy | None = field(default=None, compare=False, repr=False)
    omit: frozenset[Slot] = field(default=frozenset(), compare=False, repr=False)
    coupled: frozenset[Slot] = field(default=frozenset(), compare=False, repr=False)
    checkpoint: Callable[[], None] | None = field(default=None, compare=False, repr=False)

    @property
    def exact(self) -> bool:
        """Both bounds grant the same network access (the filesystem's bounds, which the
        runtime's reading may set apart, are decided by ``prover.extended.check``)."""
        return self.upper.rules == self.lower.rules and all(
            o.key == CONNECTION_ONLY for o in self.opaque
        )

    def way(self, channel: Channel) -> Reading:
        """The same policy read for one way in only."""
        if channel == self.channel or self.source is None:
            return self
        read = read_policy(
            self.source,
            channel,
            omit=self.omit,
            coupled=self.coupled,
            checkpoint=self.checkpoint,
        )
        return replace(read, restricting=self.restricting)


@dataclass
class _Endpoint:
    """One endpoint while it is being read."""

    rule_index: int
    rule_key: str
    index: int
    section: EndpointSection
    handling: tuple[str, ...]  # how the runtime handles its connections, see _handling
    upper: Endpoint
    lower: Endpoint | None
    opaque: list[Opaque] = field(default_factory=list)
    constructs: list[str] = field(default_factory=list)


def _fingerprint(section: EndpointSection, fields: Iterable[str] | None = None) -> str:
    data = section.model_dump(mode="json", exclude_none=True, exclude=_CONNECTION_FIELDS)
    if fields is not None:
        data = {key: value for key, value in data.items() if key in set(fields)}
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _l4(index: int, section: EndpointSection, host: str, ports: tuple[int, ...]) -> Endpoint:
    """The connection part of an endpoint as plain L4 access: what the reference
    normaliser makes of its host, ports and ``allowed_ips`` alone (no protocol, path,
    access or rules), with ``host`` and ``ports`` as read here."""
    allowed_ips = _allowed_ips(section, f"rule '' endpoint {index}")
    return Endpoint(
        index=index,
        host=host,
        ports=ports,
        layer="l4",
        allowed_ips=allowed_ips,
        allowed_ips_raw=tuple(section.allowed_ips),
    )


def _any_request(
    index: int, section: EndpointSection, host: str, ports: tuple[int, ...]
) -> Endpoint:
    """Audit mode: every method, query and path under the endpoint's ``path``."""
    return replace(
        _l4(index, section, host, ports),
        layer="rest",
        path=section.path or "",
        allow_rules=(HttpRule(method="*", path="**", index=0),),
    )


def _any_http(endpoint: Endpoint) -> Endpoint:
    """Raw access as the forward proxy carries it: any plain-HTTP request."""
    return replace(endpoint, layer="rest", allow_rules=(HttpRule(method="*", path="**", index=0),))


def _reading(
    rule_index: int, rule_key: str, index: int, section: EndpointSection, channel: Channel
) -> _Endpoint:
    host = (section.host or "").lower() or ANY_HOST
    ports = tuple(section.ports) if section.ports else ((section.port,) if section.port else ())
    protocol = (section.protocol or "").lower()
    tls_skip = section.tls == "skip"
    item = _Endpoint(
        rule_index, rule_key, index, section, (), _l4(index, section, host, ports), None
    )
    if not section.host:
        item.constructs.append("hostless endpoint with allowed_ips")
    if tls_skip and protocol not in ("", "tcp"):
        # A CONNECT tunnel is forwarded raw, so the candidate may send anything; but the
        # forward proxy still inspects plain-HTTP requests by the endpoint's protocol, so
        # the boundary surely allows only what the inspected endpoint would.
        item.handling = ("tls-skip",)
        if (
            protocol == "rest"
            and section.enforcement == "enforce"
            and rest_rules_problem(section, extended=True) is not None
        ):
            # Rules outside the model: as a boundary, nothing is sure through it.
            item.constructs.append("tls: skip with rules outside the model (L4 as a candidate)")
            item.lower = item.upper if channel == "tunnel" else None
            if channel == "forward":
                item.upper = _any_http(item.upper)
            return item
        inspected = _reading(
            rule_index, rule_key, index, section.model_copy(update={"tls": None}), channel
        )
        item.opaque = inspected.opaque
        item.constructs.append(
            "tls: skip (L4 as a candidate; as a boundary only its inspected requests)"
        )
        item.constructs.extend(c for c in inspected.constructs if c.startswith("credential"))
        if channel == "forward":
            item.upper, item.lower = inspected.upper, inspected.lower
        elif channel == "any":
            item.lower = inspected.lower
        else:
            item.lower = item.upper
        return item
    if protocol in ("", "tcp"):
        # ``tls: skip`` without a protocol is still a configuration: as the first one on
        # a connection it makes the whole connection an uninspected tunnel (which a
        # fail-closed middleware refuses), whatever plain L4 endpoints lie beside it.
        item.handling = ("l4", "tls-skip") if tls_skip else ("l4",)
        if section.access is not None or section.rules or section.enforcement is not None:
            item.constructs.append("REST fields without a protocol (read as L4)")
        if channel == "forward":
            item.upper = _any_http(item.upper)
    elif protocol == "rest" and section.enforcement != "enforce":
        item.handling = ("rest", "audit")
        item.upper = _any_request(index, section, host, ports)
        item.constructs.append("REST audit mode (every request on the path passes)")
        if section.allow_encoded_slash or _graphql_extras(section):
            # Audit forwards every request the parser reads, and these options decide
            # what it reads (encoded slashes are refused before any policy without
            # allow_encoded_slash): what only they let through is opaque.
            key = _fingerprint(section)
            item.handling = ("rest", "audit", key)
            item.opaque.append(
                _grant(item, _l4(index, section, host, ports), key, "REST audit options")
            )
    elif protocol == "rest" and not section.allow_encoded_slash and not _graphql_extras(section):
        item.handling = ("rest", "enforce")
        if section.access is not None and section.access not in PRESET_METHODS:
            item.upper = replace(
                normalize_endpoint(
                    index, section.model_copy(update={"access": None}), rule_key, engine=True
                ),
                host=host,
                ports=ports,
            )
            item.constructs.append(f"unknown access preset '{section.access}' (allows nothing)")
        else:
            item.upper = replace(
                normalize_endpoint(index, section, rule_key, engine=True), host=host, ports=ports
            )
        item.constructs.extend(_inert_rules(section))
        if (
            section.access is None
            and section.rules
            and all(inert_rule(rule.allow, deny=False) for rule in section.rules)
        ):
            # No request passes, but the proxy still dials the destination to answer a
            # CONNECT (proxy.rs) before any request is refused: the connection is reach.
            item.opaque.append(
                _grant(
                    item,
                    _l4(index, section, host, ports),
                    CONNECTION_ONLY,
                    "REST endpoint whose rules allow no request (the proxy still dials it)",
                )
            )
    else:
        key = _fingerprint(section)
        construct = f"protocol {protocol}" if protocol != "rest" else "REST options"
        if section.allow_encoded_slash:
            construct += " with allow_encoded_slash"
        item.handling = ("opaque", key)
        grants = bool(section.rules) or section.access is not None
        item.opaque.append(_grant(item, item.upper, key, construct, grants=grants))
        item.upper = replace(item.upper, role="ip_only")
        item.constructs.append(f"{construct} (identical configuration or raw access covers it)")
    item.lower = item.upper if item.handling[0] != "opaque" else None
    if item.handling[:2] == ("rest", "audit") and section.path:
        # The endpoint's path only selects among several configurations: as the only one
        # on a connection it is chosen without a selector check and audit forwards
        # everything, so only the lower bound may keep the path.
        item.upper = replace(item.upper, path="")
    if any(getattr(section, name) not in (None, False) for name in _CREDENTIAL_FIELDS):
        key = "credential:" + _credentials(section)
        connection = _l4(index, section, host, ports)
        item.opaque.append(_grant(item, connection, key, "credential injection", l4_covers=False))
        item.constructs.append("credential injection (only identical configuration covers it)")
    return item


def _inert_rules(section: EndpointSection) -> list[str]:
    """The REST rules of an enforced endpoint that the engine never matches, as read
    constructs (:func:`prover.policy.normalize.inert_rule`)."""
    found = [inert_rule(rule.allow, deny=False) for rule in section.rules]
    found += [inert_rule(matcher, deny=True) for matcher in section.deny_rules]
    return list(dict.fromkeys(reason for reason in found if reason))


_Read = tuple[int, str, int, "EndpointSection", "_Endpoint | None"]


def _readings(policy: AuthoredPolicy, channel: Channel) -> tuple[_Read, ...]:
    """Every endpoint of ``policy`` read alone, in order, with its place: ``None`` for
    one the model cannot read (an endpoint a check leaves out need not be readable)."""
    return tuple(
        (rule_index, key, index, section, _read_or_none(rule_index, key, index, section, channel))
        for rule_index, (key, rule) in enumerate(policy.network_policies.items())
        for index, section in enumerate(rule.endpoints)
    )


def _read_or_none(
    rule_index: int, rule_key: str, index: int, section: EndpointSection, channel: Channel
) -> _Endpoint | None:
    try:
        return _reading(rule_index, rule_key, index, section, channel)
    except Exception:  # e.g. the normaliser's "outside the model": raised again if read
        return None


def _copied(item: _Endpoint) -> _Endpoint:
    """A copy of a read endpoint whose lists can be edited (the rest is immutable)."""
    copy = _Endpoint.__new__(_Endpoint)
    copy.__dict__.update(item.__dict__)
    copy.opaque = list(item.opaque)
    copy.constructs = list(item.constructs)
    return copy


def _grant(
    item: _Endpoint,
    connection: Endpoint,
    key: str,
    construct: str,
    *,
    l4_covers: bool = True,
    grants: bool = True,
) -> Opaque:
    """An opaque grant of the endpoint being read (its rule's binaries come later)."""
    return Opaque(item.rule_key, item.index, (), connection, key, construct, l4_covers, grants)


def _graphql_extras(section: EndpointSection) -> bool:
    return any(
        value is not None
        for value in (
            section.persisted_queries,
            section.graphql_persisted_queries,
            section.graphql_max_body_bytes,
            section.json_rpc,
        )
    )


def _l7(item: _Endpoint) -> tuple[str, ...] | None:
    """The inspection an endpoint asks for, or None for a plain L4 endpoint."""
    return None if item.handling == ("l4",) else item.handling


def _configured(item: _Endpoint) -> bool:
    """Whether the runtime lists the endpoint among a connection's configurations."""
    return _l7(item) is not None or bool(item.section.allowed_ips) or item.section.tls is not None


def _overlap(a: _Endpoint, b: _Endpoint) -> set[int]:
    shared = set(a.upper.ports) & set(b.upper.ports)
    if shared and hosts_intersect(a.upper.host, b.upper.host):
        return shared
    return set()


def _conflict(
    a: _Endpoint, b: _Endpoint, shared: set[int], *, same_pick: bool = False
) -> str | None:
    """Why the runtime's selection between two overlapping endpoints matters, if it does
    (``same_pick``: the candidate's first configuration is this one's, so the
    ``allowed_ips`` that apply are the same on both sides)."""
    if not same_pick and frozenset(a.section.allowed_ips) != frozenset(b.section.allowed_ips):
        return "allowed_ips"  # the first configured endpoint's list applies
    if (
        not a.section.allowed_ips
        and a.upper.host_is_wildcard != b.upper.host_is_wildcard
        and shared & CONTROL_PORTS
    ):
        # Checked before the inspection: an exact host declared beside a wildcard one
        # decides the destination rule for the whole connection, so neither the shadow
        # below nor either endpoint alone says what the runtime allows there.
        return "destination rule on a control-plane port"
    if _l7(a) != _l7(b):
        return "inspection"
    if _credentials(a.section) != _credentials(b.section):
        return "credentials"  # the selected configuration's credential fields apply
    return None


def _credentials(section: EndpointSection) -> str:
    """What the proxy adds to a request on this endpoint ("" if nothing)."""
    if all(getattr(section, name) in (None, False) for name in _CREDENTIAL_FIELDS):
        return ""
    return _fingerprint(section, (*_CREDENTIAL_FIELDS, "protocol", "tls"))


def _binary(pattern: str) -> str:
    """``**`` matches every executable path, which is absolute: the model's ``/**``."""
    return "/**" if pattern == "**" else pattern


def _unchecked_path(item: _Endpoint) -> bool:
    """An opaque audit endpoint with a ``path``: alone it passes every path."""
    return (
        item.handling[0] == "opaque"
        and bool(item.section.path)
        and item.section.enforcement != "enforce"
    )


def _slot(item: _Endpoint) -> Slot:
    return (item.rule_key, item.index)


def _plain_l4(item: _Endpoint) -> bool:
    """An L4 endpoint that brings no rules of its own to an inspected connection."""
    section = item.section
    return item.handling == ("l4",) and section.access is None and not section.rules


#: Endpoint pairs compared between two calls of the caller's ``checkpoint``.
CHECKPOINT_EVERY_PAIRS = 256


def _may_overlap(members: list[int], items: list[_Endpoint]) -> Iterator[tuple[int, int]]:
    """The pairs of one port's endpoints (positions, ascending, in the order of an
    all-pairs scan) whose hosts may meet: two exact hosts only when equal, a wildcard
    with every other. Thousands of exact hosts on one port cost a pass, not every pair."""
    host = {position: items[position].upper.host for position in members}
    wild = [p for p in members if "*" in host[p]]
    same: dict[str, list[int]] = defaultdict(list)
    for position in members:
        if "*" not in host[position]:
            same[host[position]].append(position)
    for i, first in enumerate(members):
        if "*" in host[first]:
            seconds: Iterable[int] = members[i + 1 :]
        else:
            group = same[host[first]]
            seconds = merge(wild[bisect_right(wild, first) :], group[bisect_right(group, first) :])
        for second in seconds:
            yield first, second


def read_policy(
    policy: AuthoredPolicy,
    channel: Channel = "any",
    *,
    omit: frozenset[Slot] = frozenset(),
    coupled: frozenset[Slot] = frozenset(),
    checkpoint: Callable[[], None] | None = None,
) -> Reading:
    """Both bounds of a policy that passed ``shape_problem(..., extended=True)``.

    ``channel`` reads what reaches an endpoint one way only: ``tunnel`` (a CONNECT
    tunnel, raw under ``tls: skip``) or ``forward`` (plain HTTP through the forward
    proxy, inspected even under ``tls: skip``, where raw access carries any request
    but no raw bytes); ``any`` bounds both. Where ``tls: skip`` makes the two differ,
    containment is decided one way at a time (:meth:`Reading.way`).

    ``omit`` leaves endpoints out (by rule key and index; the others keep their index):
    those that two policies share and that no other endpoint touches.

    ``coupled`` reads a *boundary* against one candidate whose endpoints in those slots
    have the same configuration (see ``prover.extended.slots.endpoint_slots``): the
    runtime then picks the same first configuration on both sides, so overlapping
    ``allowed_ips`` apply alike, and the boundary's lower bound keeps those grants with
    the candidate's upper bound's reading of the address (some endpoint admits it).
    Sound only for that comparison: the candidate allows an action under a pick only if
    its grants and that pick's address check allow it, and the boundary has the same
    address check.
    """
    # Each endpoint's own reading depends on it alone: kept with the policy, and copied
    # (what follows edits the copies). One that cannot be read (only an omitted one may
    # be outside the model) is read again here, to raise as it always did.
    items = [
        _copied(item) if item is not None else _reading(rule_index, key, index, section, channel)
        for rule_index, key, index, section, item in fact(
            policy, ("endpoint readings", channel), lambda: _readings(policy, channel)
        )
        if (key, index) not in omit
    ]
    binaries = {
        key: tuple(_binary(b.path) for b in rule.binaries)
        for key, rule in policy.network_policies.items()
    }

    lose_grants: set[int] = set()
    shadows: dict[int, list[Shadow]] = {}
    drop_denies: set[int] = set()
    credential_conflicts: set[int] = set()
    path_conflicts: set[int] = set()
    conflicts: list[str] = []
    by_port: dict[int, list[int]] = {}
    for position, item in enumerate(items):
        for port in set(item.upper.ports):
            by_port.setdefault(port, []).append(position)
    seen: set[tuple[int, int]] = set()
    for members in by_port.values():
        for first, second in _may_overlap(members, items):
            if (first, second) in seen:
                continue
            seen.add((first, second))
            if checkpoint is not None and len(seen) % CHECKPOINT_EVERY_PAIRS == 0:
                checkpoint()
            a, b = items[first], items[second]
            shared = _overlap(a, b)
            same_pick = {_slot(a), _slot(b)} <= coupled
            why = _conflict(a, b, shared, same_pick=same_pick) if shared else None
            if why is None:
                if shared and _configured(a) and _configured(b):
                    # Alone on a connection a configuration is chosen without a
                    # selector check, and audit forwards every message; beside
                    # another, its path selects: messages off the path are refused.
                    for position, item in ((first, a), (second, b)):
                        if _unchecked_path(item):
                            path_conflicts.add(position)
                continue
            named = (
                f"rule '{a.rule_key}' endpoint {a.index} and rule '{b.rule_key}' endpoint "
                f"{b.index} ({why})"
            )
            if why == "inspection" and not (_configured(a) and _configured(b)):
                # An unconfigured L4 endpoint beside a configured one: whenever a
                # rule with the configured one matches the process, the runtime
                # handles the connection by that configuration and the L4 endpoint
                # adds nothing; otherwise it is raw access. That is exact (a Shadow)
                # unless the L4 endpoint carries rules of its own, which then join
                # the inspected union.
                plain, other = (first, second) if not _configured(a) else (second, first)
                if _plain_l4(items[plain]):
                    shadows.setdefault(plain, []).append(
                        Shadow(
                            items[other].upper.host,
                            items[other].upper.ports,
                            binaries[items[other].rule_key],
                        )
                    )
                else:
                    conflicts.append(named)
                    lose_grants.add(plain)
                continue
            conflicts.append(named)
            if why == "credentials":
                # Plain requests are allowed by the union either way; only what the
                # proxy adds depends on the selection.
                credential_conflicts.update((first, second))
                continue
            lose_grants.update((first, second))
            if _l7(a) != _l7(b):
                drop_denies.update((first, second))

    fail_closed = _fail_closed(policy)
    for item in items:
        if (
            item.section.tls == "skip"
            and item.lower is not None
            and may_select(fail_closed, item.upper.host)
        ):
            # A fail-closed middleware refuses the uninspected tunnel: surely nothing.
            item.lower = replace(item.lower, role="deny_only")
            item.constructs.append("tls: skip under a fail-closed middleware (refused)")

    upper_rules: dict[int, list[Endpoint]] = {}
    lower_rules: dict[int, list[Endpoint]] = {}
    opaque: list[Opaque] = []
    constructs: list[str] = []
    for position, item in enumerate(items):
        up = item.upper
        if position in shadows:
            up = replace(up, shadows=tuple(shadows[position]))
            item.lower = up if item.lower is not None else None
        if position in drop_denies and up.deny_rules:
            up = replace(up, deny_rules=())
        upper_rules.setdefault(item.rule_index, []).append(up)
        if item.lower is not None:
            low = (
                item.lower if position not in lose_grants else replace(item.lower, role="deny_only")
            )
            lower_rules.setdefault(item.rule_index, []).append(low)
        for grant in item.opaque:
            opaque.append(
                replace(
                    grant,
                    binaries=binaries[item.rule_key],
                    in_conflict=position in lose_grants
                    or (position in credential_conflicts and grant.key.startswith("credential:"))
                    or position in path_conflicts,
                )
            )
        constructs.extend(c for c in item.constructs if c not in constructs)
    keys = list(policy.network_policies)
    filesystem = filesystem_of(policy)
    user, group, landlock = process_fields(policy)

    def build(endpoints: dict[int, list[Endpoint]]) -> Policy:
        rules = tuple(
            Rule(
                key=key,
                name=policy.network_policies[key].name or key,
                binaries=binaries[key],
                endpoints=_reindexed(endpoints.get(position, [])),
            )
            for position, key in enumerate(keys)
        )
        return Policy(filesystem, user, group, landlock, rules, engine_requests=True)

    upper = build(upper_rules)
    # Most endpoints read alike in both bounds: then so does the policy, built once.
    alike = upper_rules.keys() == lower_rules.keys() and all(
        len(ups) == len(lower_rules[position])
        and all(up is low for up, low in zip(ups, lower_rules[position], strict=True))
        for position, ups in upper_rules.items()
    )
    return Reading(
        upper=upper,
        lower=upper if alike else build(lower_rules),
        opaque=tuple(opaque),
        constructs=tuple(constructs),
        conflicts=tuple(conflicts),
        fail_closed=fail_closed,
        channel=channel,
        skip=any(item.handling == ("tls-skip",) for item in items),
        source=policy,
        omit=omit,
        coupled=coupled,
        checkpoint=checkpoint,
    )


Selectors = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
"""``(include, exclude)`` host patterns of middleware entries, lower-cased."""


def middleware_selectors(policy: AuthoredPolicy, keys: Iterable[str]) -> Selectors:
    """Host selectors of these middleware entries (one without ``endpoints`` selects
    nothing)."""
    return tuple(
        (
            tuple(p.lower() for p in entry.endpoints.include),
            tuple(p.lower() for p in entry.endpoints.exclude),
        )
        for key in keys
        if (entry := policy.network_middlewares[key]).endpoints is not None
    )


def _fail_closed(policy: AuthoredPolicy) -> Selectors:
    """Selectors of the entries that refuse uninspectable traffic (all but
    ``on_error: fail_open``)."""
    entries = policy.network_middlewares
    return middleware_selectors(
        policy, (k for k, e in entries.items() if e.on_error != "fail_open")
    )


def may_select(selectors: tuple[tuple[tuple[str, ...], ...], ...], host: str) -> bool:
    """Whether some selector's include patterns can match a host of the glob ``host``
    (excludes ignored: over-approximated)."""
    return any(hosts_intersect(p, host) for include, _ in selectors for p in include)


def _reindexed(endpoints: list[Endpoint]) -> tuple[Endpoint, ...]:
    """Keep the authored endpoint index (it names the endpoint in reports)."""
    return tuple(endpoints)
