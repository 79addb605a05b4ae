"""Whether a policy allows a symbolic action: spec §9.3 (rules, endpoints, methods,
presets, denies) and §9.4 (destination addresses), as Z3 terms.

``policy_allows(P, a) = (∨ grant) ∧ ¬(∨ deny) ∧ (∨ ip_ok)`` where, for every rule ``r``
and endpoint ``e`` of ``r``:

* ``grant(r, e) = binaries(r) ∧ endpoint_allows(e)``;
* ``deny(r, e) = binaries(r) ∧ endpoint_denies(e)`` (policy-wide: a deny blocks what any
  rule grants, for the binaries of its own rule, matched on binary *or* ancestor);
* ``ip_ok(r, e) = binaries(r) ∧ connection(e) ∧ address_ok(e)``.

Every one of these terms implies ``connection(e)`` (port and host), which is what lets
the solver drop terms of endpoints that cannot overlap a slice (see
:mod:`prover.encode.overlap`). :class:`PolicyTerms` builds each term once and caches it,
so slices of one check share them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import z3

from prover.concrete.ip import GATEWAY_ALIASES, endpoint_can_match_gateway, host_ip_literal
from prover.encode.action import SymbolicAction, string_subject
from prover.encode.logic import text_value
from prover.encode.strings import StringAtoms, atom_key
from prover.encode.terms import Term, constant, lift, term_and, term_not, term_or
from prover.policy.model import Endpoint, HttpRule, Policy

EndpointRef = tuple[int, int]
"""(rule index, endpoint index) inside one policy."""

CHECKPOINT_EVERY = 4


def ascii_upper(text: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)


def _port_ranges(ports: Iterable[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for port in sorted(set(ports)):
        if ranges and ranges[-1][1] + 1 == port:
            ranges[-1] = (ranges[-1][0], port)
        else:
            ranges.append((port, port))
    return ranges


class PolicyTerms:
    """The cached per-endpoint terms of one policy over one symbolic action.

    With ``atoms``, every string condition is a Boolean atom of that registry (see
    :mod:`prover.encode.strings`); without, a plain ``InRe``/equality term.
    """

    def __init__(
        self,
        policy: Policy,
        action: SymbolicAction,
        identity: bool,
        atoms: StringAtoms | None = None,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        self.policy = policy
        self.action = action
        self.identity = identity
        self.atoms = atoms
        self._checkpoint = checkpoint
        self._built = 0
        self.ctx = action.ctx
        self._binaries: dict[int, Term] = {}
        self._connection: dict[EndpointRef, Term] = {}
        self._grant: dict[EndpointRef, Term] = {}
        self._deny: dict[EndpointRef, Term] = {}
        self._ip_ok: dict[EndpointRef, Term] = {}

    def refs(self) -> list[EndpointRef]:
        return [
            (ri, ei)
            for ri, rule in enumerate(self.policy.rules)
            for ei in range(len(rule.endpoints))
        ]

    def endpoint(self, ref: EndpointRef) -> Endpoint:
        return self.policy.rules[ref[0]].endpoints[ref[1]]

    # -- atoms -------------------------------------------------------------------------
    def _member(self, field: str, kind: str, pattern: str) -> Term:
        """``field ∈ L(pattern)`` (``kind`` ``"host"``/``"path"``) or ``field = pattern``
        (``kind`` ``"eq"``)."""
        if self.atoms is not None:
            return self.atoms.atom(field, kind, pattern)
        key = atom_key(field, kind, pattern)
        subject = string_subject(self.action, field)
        if key[1] == "eq":
            return lift(subject == text_value(pattern, self.ctx))
        globs = self.action.globs
        regex = globs.host(pattern) if kind == "host" else globs.path(pattern)
        return lift(z3.InRe(subject, regex))

    # -- pieces ------------------------------------------------------------------------
    def binaries(self, rule_index: int) -> Term:
        """Identity off: true. On: some binary glob matches the binary or the ancestor."""
        cached = self._binaries.get(rule_index)
        if cached is None:
            if not self.identity:
                cached = constant(True, self.ctx)
            else:
                matches: list[Term] = []
                for pattern in self.policy.rules[rule_index].binaries:
                    matches.append(self._member("binary", "path", pattern))
                    matches.append(self._member("ancestor", "path", pattern))
                cached = term_or(matches, self.ctx)
            self._binaries[rule_index] = cached
        return cached

    def connection(self, ref: EndpointRef) -> Term:
        """Port in the endpoint's ports and host matched by its (lower-cased) glob."""
        cached = self._connection.get(ref)
        if cached is None:
            endpoint = self.endpoint(ref)
            port = self.action.port
            ports = term_or(
                (
                    lift(port == lo if lo == hi else z3.And(port >= lo, port <= hi))
                    for lo, hi in _port_ranges(endpoint.ports)
                ),
                self.ctx,
            )
            host = self._member("host", "host", endpoint.host.lower())
            cached = term_and([ports, host], self.ctx)
            self._connection[ref] = cached
        return cached

    def _method(self, pattern: str) -> Term:
        """``sandbox-policy.rego`` ``method_matches``: ``*`` any, ``GET`` also ``HEAD``,
        else the upper-cased rule method. The request side stays as sent: in the engine
        reading witnesses are upper-case (:mod:`prover.encode.pins`), and a lower-case
        request is judged as its upper-cased twin, so containment is the same."""
        if pattern == "":
            return constant(False, self.ctx)
        if pattern == "*":
            return constant(True, self.ctx)
        wanted = ascii_upper(pattern)
        if wanted == "GET":
            methods = [self._member("method", "eq", "GET"), self._member("method", "eq", "HEAD")]
            return term_or(methods, self.ctx)
        return self._member("method", "eq", wanted)

    def _path(self, pattern: str) -> Term:
        # ``""`` is any path: an endpoint's absent ``path`` selector (``sandbox-policy.rego``
        # ``endpoint_path_matches_request``), or a reference-model rule without one (the
        # engine reading has none: ``prover.policy.normalize.inert_rule``).
        return self._member("path", "path", pattern or "**")

    def _http_rule(self, rule: HttpRule, *, deny: bool) -> Term:
        query = self.action.query
        matched = query.deny_match(rule.query) if deny else query.allow_match(rule.query)
        parts = [self._method(rule.method), self._path(rule.path), lift(matched)]
        return term_and(parts, self.ctx)

    def _rest_selected(self, ref: EndpointRef) -> list[Term]:
        endpoint = self.endpoint(ref)
        return [self.connection(ref), lift(self.action.is_rest), self._path(endpoint.path)]

    def _shadowed(self, endpoint: Endpoint) -> Term:
        """Some shadow of the endpoint (see :class:`prover.policy.model.Shadow`) applies."""
        terms: list[Term] = []
        for shadow in endpoint.shadows:
            port = self.action.port
            ports = term_or(
                (
                    lift(port == lo if lo == hi else z3.And(port >= lo, port <= hi))
                    for lo, hi in _port_ranges(shadow.ports)
                ),
                self.ctx,
            )
            parts = [ports, self._member("host", "host", shadow.host.lower())]
            if self.identity:
                matches: list[Term] = []
                for pattern in shadow.binaries:
                    matches.append(self._member("binary", "path", pattern))
                    matches.append(self._member("ancestor", "path", pattern))
                parts.append(term_or(matches, self.ctx))
            terms.append(term_and(parts, self.ctx))
        return term_or(terms, self.ctx)

    # -- per-endpoint terms ------------------------------------------------------------
    def _tick(self) -> None:
        """Let the caller stop a long build (budget checkpoint every few terms)."""
        self._built += 1
        if self._checkpoint is not None and self._built % CHECKPOINT_EVERY == 0:
            self._checkpoint()

    def grant(self, ref: EndpointRef) -> Term:
        cached = self._grant.get(ref)
        if cached is None:
            self._tick()
            endpoint = self.endpoint(ref)
            if not endpoint.grants:
                self._grant[ref] = constant(False, self.ctx)
                return self._grant[ref]
            if endpoint.layer == "l4":
                allows = term_and(
                    [self.connection(ref), term_not(self._shadowed(endpoint))], self.ctx
                )
            else:
                rules = term_or(
                    (self._http_rule(rule, deny=False) for rule in endpoint.allow_rules), self.ctx
                )
                allows = term_and(
                    [*self._rest_selected(ref), rules, term_not(self._shadowed(endpoint))],
                    self.ctx,
                )
            cached = term_and([self.binaries(ref[0]), allows], self.ctx)
            self._grant[ref] = cached
        return cached

    def deny(self, ref: EndpointRef) -> Term:
        cached = self._deny.get(ref)
        if cached is None:
            self._tick()
            endpoint = self.endpoint(ref)
            if endpoint.layer != "rest" or not endpoint.deny_rules or not endpoint.denies:
                cached = constant(False, self.ctx)
            else:
                rules = term_or(
                    (self._http_rule(rule, deny=True) for rule in endpoint.deny_rules), self.ctx
                )
                selected = term_and([*self._rest_selected(ref), rules], self.ctx)
                cached = term_and([self.binaries(ref[0]), selected], self.ctx)
            self._deny[ref] = cached
        return cached

    def ip_ok(self, ref: EndpointRef) -> Term:
        cached = self._ip_ok.get(ref)
        if cached is None:
            self._tick()
            endpoint = self.endpoint(ref)
            if not endpoint.admits:
                self._ip_ok[ref] = constant(False, self.ctx)
                return self._ip_ok[ref]
            alias: Term | None = None
            if endpoint_can_match_gateway(endpoint):
                aliases = (self._member("host", "eq", a) for a in GATEWAY_ALIASES)
                alias = term_or(aliases, self.ctx)
            address = self.action.ip_terms.address_ok(
                allowed_ips=endpoint.allowed_ips,
                literal=host_ip_literal(endpoint.host),
                wildcard=endpoint.host_is_wildcard,
                gateway_alias=None if alias is None else alias.expr,
                trusted_gateway=self.action.trusted_gateway,
            )
            address_term = Term(address, alias.atoms) if alias is not None else lift(address)
            cached = term_and([self.binaries(ref[0]), self.connection(ref), address_term], self.ctx)
            self._ip_ok[ref] = cached
        return cached

    # -- whole policy ------------------------------------------------------------------
    def allows(
        self,
        refs: Iterable[EndpointRef] | None = None,
        *,
        grants: Iterable[EndpointRef] | None = None,
    ) -> Term:
        """``policy_allows`` restricted to the endpoints ``refs`` (default: all).

        ``grants`` optionally narrows the granting endpoints further (a slice's own
        candidate endpoints); denies and address rules always range over ``refs``.
        """
        selected = self.refs() if refs is None else list(refs)
        granting = selected if grants is None else list(grants)
        return term_and(
            [
                term_or((self.grant(ref) for ref in granting), self.ctx),
                term_not(term_or((self.deny(ref) for ref in selected), self.ctx)),
                term_or((self.ip_ok(ref) for ref in selected), self.ctx),
            ],
            self.ctx,
        )


def policy_allows(policy: Policy, action: SymbolicAction, identity: bool) -> z3.BoolRef:
    """Whether ``policy`` allows ``action`` (identity off: binaries are ignored)."""
    return PolicyTerms(policy, action, identity).allows().expr
