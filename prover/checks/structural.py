"""The structural shortcut (spec §9.8 step 1), per candidate endpoint.

It only ever proves containment; what it cannot prove, the probes and Z3 decide. The
solver asks, per candidate endpoint ``g`` (spec §9.1, §9.3, §9.4), whether

    grant_g(a) ∧ ¬cand_deny(a) ∧ cand_ip_ok(a) ∧ ¬boundary_allows(a)

is satisfiable. :func:`structural_coverage` proves it unsatisfiable, syntactically, for
the endpoints it calls *covered*; the solver then skips only their slices, while their
terms still take part in every other slice (denies, destination addresses). ``g`` is
covered in one identity mode when all three hold:

1. **grant**: some boundary endpoint ``b`` grants every action ``g`` grants
   (:func:`endpoint_grant_covered`), in a boundary rule whose binaries cover the
   candidate rule's (identity mode);
2. **no boundary deny can fire**: no boundary endpoint with deny rules may share a
   connection with ``g`` (every deny term implies its endpoint's connection);
3. **addresses**: every candidate endpoint ``e`` that may share a connection with ``g``
   (so whose ``ip_ok`` term may be what admits the action) has its address rule
   implied by a boundary endpoint's ``ip_ok`` term on the ports the two share
   (:func:`address_covered`), in a boundary rule whose binaries cover ``e``'s rule's
   or ``g``'s rule's.

Then an action granted by ``g`` and allowed by the candidate is granted by ``b``, denied
by no boundary rule and admitted by the address rule of some boundary endpoint: the
boundary allows it. "May share a connection" is :mod:`prover.encode.overlap`'s
conservative filter, the same one the solver's slices use.
"""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from prover.checks.glob_containment import binary_within, host_within, path_within
from prover.concrete.ip import host_ip_literal
from prover.encode.overlap import EndpointIndex, EndpointRef
from prover.encode.session import SolverSession
from prover.policy.model import (
    Endpoint,
    HttpRule,
    IPAddress,
    IPNetwork,
    Policy,
    QueryMatcher,
    Rule,
)

_ASCII_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)
"""Policy methods are upper-cased in ASCII only (spec §9.3), as ``str.upper`` does not."""
_literal: Callable[[str], IPAddress | None] = lru_cache(maxsize=8192)(host_ip_literal)


# -- one field at a time ---------------------------------------------------------------
def method_covered(bound: str, cand: str) -> bool:
    """Policy method ``bound`` matches every action method ``cand`` matches
    (``sandbox-policy.rego`` ``method_matches`` upper-cases both sides, so this holds
    for a request of any case). In the engine reading the rules compared here exclude
    those OpenShell never matches (no path, a query value ``""``:
    ``prover.policy.normalize.inert_rule``), so a ``""`` path is never a rule's."""
    b, c = bound.translate(_ASCII_UPPER), cand.translate(_ASCII_UPPER)
    if c == "":
        return True  # an empty method matches nothing
    return b == "*" or b == c or (b == "GET" and c == "HEAD")


def query_covered(bound: tuple[QueryMatcher, ...], cand: tuple[QueryMatcher, ...]) -> bool:
    """Allow-query map ``bound`` accepts every query ``cand`` accepts (spec §9.5)."""
    cand_by_key = {m.key: m for m in cand}
    for b in bound:
        c = cand_by_key.get(b.key)
        if c is None:
            return False  # the candidate lets the key be absent; the boundary does not
        if c.value == b.value:
            continue
        if b.value is None and c.value is not None and "." not in c.value:
            continue  # every value equals a dot-free literal, so every value is dot-free
        return False
    return True


def binaries_covered(bound: Rule, cand: Rule) -> bool:
    """Identity mode: every binary glob of ``cand`` sits inside one of ``bound``'s, so
    whenever ``cand`` matches the binary or its ancestor, ``bound`` matches it too."""
    return all(any(binary_within(c, b) for b in bound.binaries) for c in cand.binaries)


def _http_rule_covered(bound: HttpRule, b_endpoint: Endpoint, cand: HttpRule, c_path: str) -> bool:
    """``bound`` (under endpoint path of ``b_endpoint``) accepts every request ``cand``
    accepts under the candidate endpoint path ``c_path``. The request path is in both
    candidate globs, so either one inside a boundary glob is enough."""
    if not method_covered(bound.method, cand.method):
        return False
    if not (path_within(cand.path, bound.path) or path_within(c_path, bound.path)):
        return False
    if not (path_within(cand.path, b_endpoint.path) or path_within(c_path, b_endpoint.path)):
        return False
    return query_covered(bound.query, cand.query)


def endpoint_grant_covered(bound: Endpoint, cand: Endpoint) -> bool:
    """Every action endpoint ``cand`` grants (its allow part, spec §9.3) is granted by
    ``bound``. Binaries, denies and addresses are the caller's business.

    An L4 boundary endpoint allows every layer on its connections; a REST one needs a
    covering allow rule for each candidate allow rule (``access`` presets are already
    expanded into ``allow_rules``, with exactly their meaning).
    """
    if not set(cand.ports) <= set(bound.ports) or not host_within(cand.host, bound.host):
        return False
    if bound.layer == "l4":
        return True
    if cand.layer != "rest":
        return False
    return all(
        any(_http_rule_covered(b, bound, c, cand.path) for b in bound.allow_rules)
        for c in cand.allow_rules
        if c.method
    )


def address_covered(bound: Endpoint, cand: Endpoint) -> bool:
    """The address rule of ``bound`` (spec §9.4) admits every destination that the rule
    of ``cand`` admits, for connections to a host that ``cand`` matches.

    Callers have established that ``bound``'s host glob contains ``cand``'s, so the
    gateway-alias branch applies to both or to neither (it depends on the action host
    and on the glob matching an alias) and is then the same rule; what remains is the
    ordinary rule and the IP-literal equality that follows it.
    """
    literal = _literal(cand.host)
    bound_literal = _literal(bound.host)
    if bound_literal is not None and bound_literal != literal:
        return False
    if cand.allowed_ips and bound.allowed_ips:
        return networks_within(cand.allowed_ips, bound.allowed_ips)
    if cand.allowed_ips:
        # The candidate's rule implies "not hard-blocked, not a control port", which is
        # exactly the rule of an exact DNS host without allowed_ips.
        return bound_literal is None and not bound.host_is_wildcard
    if bound.allowed_ips:
        return False
    if literal is not None or bound_literal is not None:
        return literal == bound_literal
    return cand.host_is_wildcard == bound.host_is_wildcard


def networks_within(cand: tuple[IPNetwork, ...], bound: tuple[IPNetwork, ...]) -> bool:
    """Every network of ``cand`` lies inside one network of ``bound``: per candidate
    network, a lookup of its prefix at each prefix length the boundary uses (two lists
    of thousands of ranges: milliseconds, not every pair)."""
    by_length: dict[tuple[int, int], set[int]] = defaultdict(set)
    for network in bound:
        by_length[(network.version, network.prefixlen)].add(int(network.network_address))
    lengths = sorted(by_length)
    for network in cand:
        address, bits = int(network.network_address), network.max_prefixlen
        if not any(
            version == network.version
            and length <= network.prefixlen
            and (address >> (bits - length)) << (bits - length) in by_length[(version, length)]
            for version, length in lengths
        ):
            return False
    return True


def _address_source(bound: Endpoint, cand: Endpoint) -> bool:
    return _address_source_of(bound.host, bound.allowed_ips, cand.host, cand.allowed_ips)


@lru_cache(maxsize=16384)
def _address_source_of(
    bound_host: str,
    bound_ips: tuple[IPNetwork, ...],
    cand_host: str,
    cand_ips: tuple[IPNetwork, ...],
) -> bool:
    """Host containment and :func:`address_covered`, which read only these fields."""
    if not host_within(cand_host, bound_host):
        return False
    bound = Endpoint(index=0, host=bound_host, ports=(), layer="l4", allowed_ips=bound_ips)
    cand = Endpoint(index=0, host=cand_host, ports=(), layer="l4", allowed_ips=cand_ips)
    return address_covered(bound, cand)


# -- whole policies --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Coverage:
    """The candidate endpoints of one identity mode whose slices are proved contained."""

    covered: frozenset[EndpointRef]
    total: int

    @property
    def complete(self) -> bool:
        return len(self.covered) == self.total


class _Indexes:
    """What one pair's two identity modes share: the overlap indexes, and per candidate
    endpoint its nearby boundary endpoints, its address sources and the boundary
    endpoints whose grants cover its own (none of which reads binaries)."""

    def __init__(self, candidate: Policy, boundary: Policy) -> None:
        self.candidate = candidate
        self.boundary = boundary
        self.cand_refs = _refs(candidate)
        self.cand_index = EndpointIndex(self.cand_refs)
        self.bound_index = EndpointIndex(_refs(boundary))
        self.address: dict[EndpointRef, list[EndpointRef]] = {}
        self.near: dict[EndpointRef, list[EndpointRef]] = {}
        self.granting: dict[EndpointRef, list[EndpointRef] | None] = {}
        self.cand_near: dict[EndpointRef, list[EndpointRef]] = {}


def _indexes(candidate: Policy, boundary: Policy, session: SolverSession | None) -> _Indexes:
    """The pair's indexes: those the session holds for this very pair (the other
    identity mode made them), else new ones, which the session then holds."""
    found = session.structural if session is not None else None
    if (
        not isinstance(found, _Indexes)
        or found.candidate is not candidate
        or found.boundary is not boundary
    ):
        found = _Indexes(candidate, boundary)
        if session is not None:
            session.structural = found
    return found


class _Policies:
    """Both policies with their overlap indexes, for one identity mode."""

    def __init__(
        self, candidate: Policy, boundary: Policy, identity: bool, session: SolverSession | None
    ) -> None:
        self.candidate = candidate
        self.boundary = boundary
        self.identity = identity
        self.shared = _indexes(candidate, boundary, session)
        self.cand_refs = self.shared.cand_refs
        self._admitted: dict[EndpointRef, bool] = {}

    def bound_endpoint(self, ref: EndpointRef) -> Endpoint:
        return self.boundary.rules[ref[0]].endpoints[ref[1]]

    def binaries_ok(self, bound_rule: int, *cand_rules: int) -> bool:
        if not self.identity:
            return True
        bound = self.boundary.rules[bound_rule]
        return any(binaries_covered(bound, self.candidate.rules[r]) for r in cand_rules)

    def near(self, ref: EndpointRef, endpoint: Endpoint) -> list[EndpointRef]:
        """Boundary endpoints that may share a connection with candidate ``ref``."""
        found = self.shared.near.get(ref)
        if found is None:
            found = self.shared.bound_index.overlapping(endpoint.host, endpoint.ports)
            self.shared.near[ref] = found
        return found

    def granting(self, ref: EndpointRef, endpoint: Endpoint) -> list[EndpointRef] | None:
        """Nearby boundary endpoints that grant every action candidate ``ref`` grants
        (binaries aside); ``None`` when a nearby boundary endpoint may deny one."""
        shared = self.shared
        if ref in shared.granting:
            return shared.granting[ref]
        near = self.near(ref, endpoint)
        found: list[EndpointRef] | None = None
        endpoints = [self.bound_endpoint(b) for b in near]
        if not any(e.deny_rules and e.denies for e in endpoints):
            found = [
                b
                for b in near
                if self.bound_endpoint(b).grants
                and not self.bound_endpoint(b).shadows
                and endpoint_grant_covered(self.bound_endpoint(b), endpoint)
            ]
        shared.granting[ref] = found
        return found

    def cand_near(self, ref: EndpointRef, endpoint: Endpoint) -> list[EndpointRef]:
        """Candidate endpoints that may share a connection with candidate ``ref``."""
        found = self.shared.cand_near.get(ref)
        if found is None:
            found = self.shared.cand_index.overlapping(endpoint.host, endpoint.ports)
            self.shared.cand_near[ref] = found
        return found

    def address_sources(self, ref: EndpointRef, endpoint: Endpoint) -> list[EndpointRef]:
        """Boundary endpoints whose host and address rule cover candidate ``ref``'s."""
        found = self.shared.address.get(ref)
        if found is None:
            found = [
                b
                for b in self.near(ref, endpoint)
                if self.bound_endpoint(b).admits
                and _address_source(self.bound_endpoint(b), endpoint)
            ]
            self.shared.address[ref] = found
        return found

    def covered(self, ref: EndpointRef, endpoint: Endpoint) -> bool:
        rule = self.candidate.rules[ref[0]]
        if self.identity and not rule.binaries:
            return True  # matches no binary: grants nothing, admits nothing
        if not endpoint.grants:
            return True  # its slice is empty
        granting = self.granting(ref, endpoint)
        if granting is None:
            return False  # a boundary deny may fire
        if not (
            any(self.binaries_ok(b[0], ref[0]) for b in granting) if self.identity else granting
        ):
            return False
        ports = set(endpoint.ports)
        for other_ref in self.cand_near(ref, endpoint):
            other = self.candidate.rules[other_ref[0]].endpoints[other_ref[1]]
            if self.identity and not self.candidate.rules[other_ref[0]].binaries:
                continue  # its ip_ok term is false in identity mode
            if not other.admits:
                continue  # its ip_ok term is false
            if self.admitted_anywhere(other_ref, other):
                continue
            shared = ports.intersection(other.ports)
            if not any(
                shared <= set(self.bound_endpoint(b).ports)
                and self.binaries_ok(b[0], other_ref[0], ref[0])
                for b in self.address_sources(other_ref, other)
            ):
                return False
        return True

    def admitted_anywhere(self, ref: EndpointRef, endpoint: Endpoint) -> bool:
        """Whether candidate ``ref``'s ip_ok term implies a boundary one on all its
        ports, whichever endpoint grants (the common case, cached per endpoint)."""
        found = self._admitted.get(ref)
        if found is None:
            ports = set(endpoint.ports)
            found = any(
                ports <= set(self.bound_endpoint(b).ports) and self.binaries_ok(b[0], ref[0])
                for b in self.address_sources(ref, endpoint)
            )
            self._admitted[ref] = found
        return found


def _refs(policy: Policy) -> list[tuple[EndpointRef, Endpoint]]:
    return [
        ((ri, ei), endpoint)
        for ri, rule in enumerate(policy.rules)
        for ei, endpoint in enumerate(rule.endpoints)
    ]


def structural_coverage(
    candidate: Policy,
    boundary: Policy,
    identity: bool,
    checkpoint: Callable[[], None] | None = None,
    session: SolverSession | None = None,
) -> Coverage:
    """The candidate endpoints whose slices are contained in this identity mode; the
    other mode's call with the same ``session`` reuses what does not read binaries."""
    policies = _Policies(candidate, boundary, identity, session)
    covered: set[EndpointRef] = set()
    for count, (ref, endpoint) in enumerate(policies.cand_refs):
        if checkpoint is not None and count % 64 == 63:
            checkpoint()
        if policies.covered(ref, endpoint):
            covered.add(ref)
    return Coverage(frozenset(covered), len(policies.cand_refs))


def structurally_contained(candidate: Policy, boundary: Policy, identity: bool) -> bool:
    """True only if every candidate endpoint is covered (the whole mode is within)."""
    return structural_coverage(candidate, boundary, identity).complete
