"""Deterministic concrete probes (spec §9.8 step 2): readable counterexamples without Z3.

Probes never prove containment. Each is a concrete action built from a candidate
endpoint (wildcards replaced by ``a``) and replayed through the concrete evaluator; the
first one the candidate allows and the boundary refuses is the counterexample.

The reference's probes come first, unchanged: the first :data:`MAX_PAIRS` (rule,
endpoint) pairs in rule-key order, at most :data:`MAX_REPLAYS` replays. Two additions:

* an action that a *covered* endpoint (see :mod:`prover.checks.structural`) grants
  itself cannot be a counterexample, so it is not replayed against the whole policies
  (it still counts as a replay, so the first counterexample found is the same);
* then (our extension) up to :data:`EXTRA_PAIRS` uncovered pairs beyond those, in the
  same order, so that an uncovered endpoint far down a large policy still gets a
  readable witness without Z3.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import replace

from prover.concrete import allows, granting_entries
from prover.concrete.canonical import (
    is_action_domain_binary,
    is_action_domain_path,
    is_canonical_host,
    is_canonical_rest_path,
    is_http_token,
)
from prover.encode.overlap import EndpointRef
from prover.policy.model import Endpoint, HttpRule, NetworkAction, Policy, Rule
from prover.run.budget import Budget

MAX_PAIRS = 8
MAX_RULES = 64
MAX_REPLAYS = 64
EXTRA_PAIRS = 8
EXTRA_REPLAYS = 64
PROBE_IPS = (ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("10.0.0.1"))
DEFAULT_BINARY = "/usr/bin/worker"
PRESET_PROBE_METHODS: dict[str, tuple[str, ...]] = {
    "read-only": ("HEAD", "OPTIONS"),
    "read-write": ("POST", "PUT", "PATCH"),
    "full": ("POST", "PUT", "PATCH", "DELETE"),
}


def _fill(pattern: str) -> str:
    return pattern.replace("**", "a").replace("*", "a")


def _probe_path(rule: HttpRule | None, endpoint: Endpoint) -> str:
    for candidate in ((rule.path if rule else ""), endpoint.path):
        if candidate and candidate != "**":
            return _fill(candidate)
    return "/"


def _probe_ips(endpoint: Endpoint) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = list(PROBE_IPS)
    if endpoint.allowed_ips:
        ips.append(endpoint.allowed_ips[0].network_address)
    return ips


def _requests(endpoint: Endpoint) -> Iterator[tuple[str | None, str | None, tuple]]:
    """(method, path, query) triples to probe on one endpoint."""
    if endpoint.layer == "l4":
        yield None, None, ()
        return
    if endpoint.access is not None or not endpoint.allow_rules:
        # The reference's one synthetic probe, then (our addition) the preset's other
        # methods, so that a wider preset yields a readable witness without Z3.
        path = _probe_path(None, endpoint)
        yield "GET", path, ()
        for method in PRESET_PROBE_METHODS.get(endpoint.access or "", ()):
            yield method, path, ()
        return
    for rule in endpoint.allow_rules:
        method = rule.method.upper() if rule.method and rule.method != "*" else "GET"
        query = tuple((m.key, ("" if m.value is None else m.value,)) for m in rule.query)
        yield method, _probe_path(rule, endpoint), query


def _probe_port(endpoint: Endpoint) -> int | None:
    """The first effective port inside the §9.1 action domain (1..65535).

    Port 0 parses (it means "no port" for ``port``) but no connection uses it: a probe
    on it would be an action outside the domain, which the candidate may list and the
    boundary not, a false counterexample.
    """
    return next((port for port in endpoint.ports if 1 <= port <= 65535), None)


def _actions(rule: Rule, endpoint: Endpoint, identity: bool) -> Iterator[NetworkAction]:
    host = _fill(endpoint.host)
    port = _probe_port(endpoint)
    if not is_canonical_host(host) or port is None:
        return
    binary = _fill(rule.binaries[0]) if rule.binaries else DEFAULT_BINARY
    if identity and not is_action_domain_binary(binary):
        return
    for method, path, query in _requests(endpoint):
        if method is not None and not is_http_token(method):
            continue
        if path is not None and not (is_canonical_rest_path(path) and is_action_domain_path(path)):
            continue
        for ip in _probe_ips(endpoint):
            yield NetworkAction(
                host=host,
                port=port,
                destination_ip=ip,
                protocol=endpoint.layer,
                method=method,
                path=path,
                query=query,
                binary=binary if identity else None,
                ancestor_binary=binary if identity else None,
                binary_identity_required=identity,
                trusted_gateway=False,
            )


def _grants_itself(policy: Policy, rule: Rule, endpoint: Endpoint, action: NetworkAction) -> bool:
    """Whether this one (rule, endpoint) grants ``action`` (its allow part only)."""
    alone = Policy(
        policy.filesystem,
        rules=(replace(rule, endpoints=(endpoint,)),),
        engine_requests=policy.engine_requests,
    )
    return bool(granting_entries(alone, action))


def _pairs(candidate: Policy, rules: int | None = None) -> list[tuple[EndpointRef, Rule, Endpoint]]:
    """The (rule, endpoint) pairs of the first ``rules`` rules (all) in rule-key order."""
    order = sorted(range(len(candidate.rules)), key=lambda i: candidate.rules[i].key)
    return [
        ((ri, ei), candidate.rules[ri], endpoint)
        for ri in order[:rules]
        for ei, endpoint in enumerate(candidate.rules[ri].endpoints)
    ]


def _first_exceeding(
    candidate: Policy,
    boundary: Policy,
    pairs: list[tuple[EndpointRef, Rule, Endpoint]],
    context: tuple[bool, Budget, frozenset[EndpointRef]],
    limit: int,
) -> NetworkAction | None:
    identity, budget, covered = context
    replays = 0
    for ref, rule, endpoint in pairs:
        for action in _actions(rule, endpoint, identity):
            if replays >= limit:
                return None
            budget.checkpoint()
            replays += 1
            if ref in covered and _grants_itself(candidate, rule, endpoint, action):
                continue  # granted by a covered endpoint: provably inside the boundary
            if allows(candidate, action) and not allows(boundary, action):
                return action
    return None


def probe_counterexample(
    candidate: Policy,
    boundary: Policy,
    identity: bool,
    budget: Budget,
    covered: frozenset[EndpointRef] = frozenset(),
) -> NetworkAction | None:
    """The first probe the candidate allows and the boundary refuses, if any.

    ``covered`` names candidate endpoints (rule index, endpoint index) proved not to
    grant any action beyond the boundary in this identity mode.
    """
    context = (identity, budget, covered)
    reference = _pairs(candidate, MAX_RULES)[:MAX_PAIRS]
    found = _first_exceeding(candidate, boundary, reference, context, MAX_REPLAYS)
    if found is not None:
        return found
    probed = {ref for ref, _, _ in reference}
    extra = [p for p in _pairs(candidate) if p[0] not in probed and p[0] not in covered]
    return _first_exceeding(candidate, boundary, extra[:EXTRA_PAIRS], context, EXTRA_REPLAYS)
