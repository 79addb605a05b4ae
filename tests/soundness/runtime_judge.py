"""Judge extended verdicts against the runtime model (:mod:`tests.soundness.runtime`).

``within``: every sampled action the candidate allows under *some* selection must be
allowed by the boundary under *every* selection (raw bytes, HTTP requests and opaque
messages, crafted at the candidate's endpoints, at overlapping selectors and at opaque
configurations). ``exceeds``: the witness must be allowed by the candidate under every
selection and refused by the boundary under every one; a witness for an opaque channel
(an L4 destination with a reason) needs some candidate message to that destination under
every selection and no boundary traffic at all to it. A witness that only a middleware
(identical on both sides, an operator's service) may refuse is accepted: the extended
check reads identical middlewares as the same authority and reports what the policies
grant before them.
"""

from __future__ import annotations

import ipaddress
import random

from prover.policy.loader import load_policy
from prover.policy.model import Policy
from prover.policy.normalize import filesystem_of, process_fields
from prover.policy.schema import AuthoredPolicy
from prover.results import CheckOutcome, NetworkCounterexample, Verdict
from tests.soundness import vocabulary as v
from tests.soundness.actions import _around, binary_instances, host_instances, path_instance
from tests.soundness.runtime import (
    SELECTIONS,
    Action,
    Connection,
    Http,
    Message,
    Raw,
    RtEndpoint,
    RtPolicy,
    allowed_every,
    allowed_some,
    allowed_under,
    opaque_configs,
    runtime_policy,
)


def _no_network(policy: AuthoredPolicy) -> Policy:
    user, group, landlock = process_fields(policy)
    return Policy(filesystem_of(policy), user, group, landlock, ())


def _endpoints(policy: RtPolicy) -> list[RtEndpoint]:
    return [e for r in policy.rules for e in r.endpoints]


class RuntimeSampler:
    def __init__(self, cand: RtPolicy, bound: RtPolicy, rng: random.Random) -> None:
        self.cand, self.bound, self.rng = cand, bound, rng
        both = _endpoints(cand) + _endpoints(bound)
        ips = [ipaddress.ip_address(a) for a in v.EDGE_IPS]
        ips += [ipaddress.ip_address(h) for h in v.IPV4_LITERAL_HOSTS]
        for e in both:
            for net in e.allowed_ips or ():
                ips += _around(net)
        self.ips = list(dict.fromkeys(ips))
        named = [e.host for e in both if e.host]
        self.extra_hosts = [*named, *v.EXACT_HOSTS[:4], *v.IPV4_LITERAL_HOSTS, *v.FOREIGN_HOSTS]
        self.selectors = [e.path for e in both] + list(v.SELECTOR_PATHS)
        self.rules = [r for e in both for r in (*e.allow_rules, *e.deny_rules)]
        self.binaries = binary_instances(
            [*v.EXACT_BINARIES, *(b for p in (cand, bound) for r in p.rules for b in r.binaries)],
            rng,
        )
        self.configs = [e.config for e in opaque_configs(cand)] + [
            e.config for e in opaque_configs(bound)
        ]
        self._hosts: dict[tuple[str, int], list[str]] = {}

    def hosts(self, e: RtEndpoint) -> list[str]:
        key = (e.rule, e.index)
        if key not in self._hosts:
            if e.host:
                found = host_instances(e.host, self.rng, self.extra_hosts)
            else:
                found = list(dict.fromkeys(self.extra_hosts))
            self._hosts[key] = found
        return self._hosts[key]

    def connection(self, rule_binaries: tuple[str, ...], e: RtEndpoint) -> Connection:
        rng = self.rng
        identity = rng.random() < 0.5
        binary = ancestor = None
        if identity:
            own = binary_instances(list(rule_binaries), rng) or self.binaries
            mine = rng.choice(own)
            other = rng.choice([*self.binaries, *v.ANCESTOR_BINARIES])
            binary, ancestor = (other, mine) if rng.random() < 0.3 else (mine, other)
        return Connection(
            host=rng.choice(self.hosts(e)),
            port=rng.choice(e.ports) if e.ports else 443,
            ip=rng.choice(self.ips),
            binary=binary,
            ancestor=ancestor,
            identity=identity,
            trusted_gateway=rng.random() < 0.3,
        )

    def path(self, e: RtEndpoint) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            pattern = e.path
        elif roll < 0.6:
            pattern = rng.choice(self.selectors)  # at overlapping selectors
        elif e.allow_rules and roll < 0.85:
            pattern = rng.choice(e.allow_rules).path
        else:
            pattern = rng.choice(self.rules).path if self.rules else ""
        return path_instance(pattern, rng)

    def action(self, binaries: tuple[str, ...], e: RtEndpoint) -> Action:
        rng = self.rng
        conn = self.connection(binaries, e)
        roll = rng.random()
        if roll < 0.2:
            return Raw(conn)
        if (e.carries_messages and roll < 0.6) or (self.configs and roll < 0.3):
            config = e.config if e.carries_messages else rng.choice(self.configs)
            return Message(conn, self.path(e), config)
        pool = list(e.allow_rules) or self.rules
        rule = rng.choice(pool) if pool and rng.random() < 0.85 else None
        if rule is None or rule.method == "*" or rng.random() < 0.15:
            method = rng.choice([*v.ACTION_METHODS, *(r.method.upper() for r in self.rules)])
        else:
            method = (
                "HEAD"
                if rule.method.upper() == "GET" and rng.random() < 0.3
                else (rule.method.upper())
            )
        query: dict[str, list[str]] = {}
        for m in rule.query if rule is not None else ():
            query.setdefault(m.key, []).append(
                m.value if m.value is not None else rng.choice(v.ACTION_QUERY_VALUES)
            )
        if rng.random() < 0.2:
            query.setdefault(rng.choice(v.QUERY_KEYS), []).append(rng.choice(v.ACTION_QUERY_VALUES))
        path = path_instance(rule.path, rng) if rule is not None else self.path(e)
        extras = e.extras if e.extras and rng.random() < 0.5 else ""
        pairs = tuple((k, tuple(vs)) for k, vs in query.items())
        return Http(conn, method, path, pairs, extras, forward=rng.random() < 0.3)


def runtime_within(
    cand: RtPolicy, bound: RtPolicy, rng: random.Random, tries: int
) -> tuple[str, str, int]:
    """Sampled actions the candidate allows under some selection.

    The selections are choices of one runtime implementation, so both policies meet the
    same one: a ``within`` is unsound when, under some selection, the candidate allows an
    action the boundary refuses (first string). The stronger reading (the boundary allows
    it under *every* selection) failing is only a note (second string). Third: how many
    allowed actions were checked."""
    pairs = [(r.binaries, e) for r in cand.rules for e in r.endpoints]
    if not pairs:
        return "", "", 0
    sampler = RuntimeSampler(cand, bound, rng)
    checked, note = 0, ""
    seen: set[Action] = set()
    for attempt in range(tries * 2):
        binaries, endpoint = pairs[attempt % len(pairs)]
        action = sampler.action(binaries, endpoint)
        if action in seen:
            continue
        seen.add(action)
        granted = [s for s in SELECTIONS if allowed_under(cand, action, s)]
        if not granted:
            continue
        checked += 1
        for selection in granted:
            if not allowed_under(bound, action, selection):
                return f"runtime {action} under {selection}", note, checked
        if not note and not allowed_every(bound, action):
            note = f"selection-dependent: {action}"
        if checked >= tries:
            break
    return "", note, checked


def _connection_of(cex: NetworkCounterexample) -> Connection:
    return Connection(
        host=cex.host,
        port=cex.port,
        ip=ipaddress.ip_address(cex.destination_ip),
        binary=cex.binary,
        ancestor=cex.ancestor_binary,
        identity=cex.binary_identity_required,
        trusted_gateway=cex.trusted_gateway,
    )


def _probes(conn: Connection, cand: RtPolicy, bound: RtPolicy, extra: list[Action]) -> list[Action]:
    """Every kind of traffic to the connection's destination the model distinguishes."""
    endpoints = _endpoints(cand) + _endpoints(bound)
    paths = {"/", *(path_instance(e.path, random.Random(0)) for e in endpoints)}
    found: list[Action] = [Raw(conn), *extra]
    for path in sorted(paths):
        found += [
            Http(conn, m, path, forward=forward)
            for m in ("GET", "POST", "DELETE")
            for forward in (False, True)
        ]
        found += [Http(conn, "GET", path, (), e.extras) for e in endpoints if e.extras]
        found += [Message(conn, path, e.config) for e in endpoints if e.carries_messages]
    for e in endpoints:
        # A request each allow rule matches (its method, a path, its query keys), so that
        # a destination reachable only by rule-shaped traffic counts as reachable.
        for r in e.allow_rules:
            method = r.method.upper() if "*" not in r.method else "GET"
            query = tuple((m.key, (m.value if m.value is not None else "x",)) for m in r.query)
            # A path of the rule, and one of the endpoint's selector (which the rule's
            # glob may also match, e.g. ``/**``).
            for pattern in {r.path, e.path or r.path}:
                path = path_instance(pattern, random.Random(0))
                found += [Http(conn, method, path, query, x) for x in {"", e.extras}]
    return found


def runtime_exceeds(cand: RtPolicy, bound: RtPolicy, outcome: CheckOutcome) -> str:
    """Empty when the network witness is genuine under the runtime model."""
    cex = outcome.counterexample
    assert isinstance(cex, NetworkCounterexample)
    conn = _connection_of(cex)
    if cex.protocol == "rest":
        query = tuple((k, tuple(vals)) for k, vals in (cex.query_params or {}).items())
        ways: list[Action] = [
            Http(conn, cex.method or "", cex.path or "", query, forward=f) for f in (False, True)
        ]
    else:
        ways = [Raw(conn)]
    # One way in (a tunnel, or plain HTTP through the forward proxy) suffices.
    verdicts = [_runtime_exceeds_one(cand, bound, outcome, conn, w) for w in ways]
    return "" if "" in verdicts else verdicts[0]


def _runtime_exceeds_one(
    cand: RtPolicy, bound: RtPolicy, outcome: CheckOutcome, conn: Connection, witness: Action
) -> str:
    if outcome.decided_by == "opaque" or (outcome.reason or "").startswith("candidate rule"):
        probes = _probes(conn, cand, bound, [witness])
        if not any(allowed_every(cand, a) or allowed_every(cand, a, filters=False) for a in probes):
            return f"no candidate traffic to the opaque witness destination is sure: {witness}"
        refused = [a for a in probes if allowed_some(bound, a)]
        return f"boundary can reach the opaque witness destination: {refused[0]}" if refused else ""
    if not allowed_every(cand, witness):
        if allowed_every(cand, witness, filters=False):
            return ""  # only a (shared) middleware may refuse it: see note in the module
        return f"candidate does not surely allow the witness: {witness}"
    if allowed_some(bound, witness):
        return f"boundary may allow the witness: {witness}"
    return ""


def load_both(candidate_text: str, boundary_text: str) -> tuple[AuthoredPolicy, AuthoredPolicy]:
    return load_policy(candidate_text), load_policy(boundary_text)


def judge_runtime_network(
    candidate: AuthoredPolicy,
    boundary: AuthoredPolicy,
    outcome: CheckOutcome,
    rng: random.Random,
    tries: int,
) -> tuple[str, str, int]:
    """(unsound detail, note, facts checked) for one network verdict."""
    cand, bound = runtime_policy(candidate), runtime_policy(boundary)
    if outcome.verdict is Verdict.EXCEEDS:
        return runtime_exceeds(cand, bound, outcome), "", 1
    return runtime_within(cand, bound, rng, tries)
